from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.quantity import QuantityError
from ballast.internal.resize import BEST_EFFORT, BURSTABLE, GUARANTEED, pod_qos


def _container(requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "image": "busybox", "resources": resources}


def _pod(*containers: dict[str, Any], init: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": list(containers), **spec}
    if init is not None:
        body["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": body}


BOTH = {"cpu": "500m", "memory": "256Mi"}


@pytest.mark.parametrize(
    ("pod", "qos"),
    [
        (_pod(_container()), BEST_EFFORT),
        (_pod({"name": "c"}), BEST_EFFORT),
        (_pod(_container({"cpu": "0", "memory": "0"}, {"cpu": "0"})), BEST_EFFORT),  # zeros do not count
        (_pod(_container({"ephemeral-storage": "1Gi"}, {"nvidia.com/gpu": "1"})), BEST_EFFORT),  # only cpu/memory
        (_pod(_container({"cpu": "100m"})), BURSTABLE),
        (_pod(_container(BOTH, BOTH)), GUARANTEED),
        (_pod(_container({"cpu": "0.5", "memory": "268435456"}, BOTH)), GUARANTEED),  # equal values, other spelling
        (_pod(_container(BOTH, {"cpu": "1", "memory": "256Mi"})), BURSTABLE),
        (_pod(_container(BOTH, {"cpu": "500m"})), BURSTABLE),  # every container must limit cpu and memory
        (_pod(_container(BOTH, BOTH), _container()), BURSTABLE),
        (_pod(_container(BOTH, BOTH), _container(BOTH, BOTH)), GUARANTEED),
        (_pod(_container(BOTH, BOTH), init=[_container()]), BURSTABLE),  # init containers count
        (_pod(_container(BOTH, BOTH), init=[_container(BOTH, BOTH)]), GUARANTEED),
        (_pod(_container(), init=[_container({"memory": "1Mi"})]), BURSTABLE),
        # aggregate equality decides, as in the API server
        (
            _pod(
                _container({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),
                _container({"cpu": "2", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}),
            ),
            GUARANTEED,
        ),
        (_pod(_container({"cpu": 1, "memory": 1024}, {"cpu": 1.0, "memory": "1Ki"})), GUARANTEED),  # YAML numbers
        (_pod(_container(), resources={"requests": BOTH, "limits": BOTH}), GUARANTEED),  # pod-level resources
        (_pod(_container(BOTH, BOTH), resources={"requests": {"cpu": "1"}}), BURSTABLE),
        (_pod(_container(BOTH, BOTH), resources={"limits": {"ephemeral-storage": "1Gi"}}), GUARANTEED),
    ],
)
def test_pod_qos_follows_the_api_server(pod: dict[str, Any], qos: str) -> None:
    assert pod_qos(pod) == qos


@pytest.mark.parametrize(
    ("pod", "error", "message"),
    [
        ({"metadata": {}}, ValueError, "pod has no spec"),
        ({"spec": []}, ValueError, "pod spec must be an object"),
        ({"spec": {"containers": "c"}}, ValueError, "spec.containers must be a list"),
        ({"spec": {"containers": ["c"]}}, ValueError, r"spec.containers\[0\] must be an object"),
        (_pod(_container({"cpu": ["1"]})), ValueError, r"spec.containers\[0\].resources.requests.cpu must be"),
        (_pod(_container(None, {"memory": "lots"})), QuantityError, "'lots' is not a Kubernetes quantity"),
    ],
)
def test_a_malformed_pod_is_named(pod: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        pod_qos(pod)
