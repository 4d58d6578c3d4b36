"""The Balancer controller on the real API server with kube-controller-manager (Deployments and StatefulSets
really create pods; no scheduler, so pods stay Pending until a test sets their phase through the status
subresource): upstream's examples applied unchanged with kubectl — `nginx-priority` with 5 replicas gives
nginx-1 = 4, nginx-2 = 1, `nginx-proportional` with 10 gives 5/5 —; `kubectl scale balancer` and a write to the
Balancer's `scale` subresource (what an HPA does) redistribute; pods Pending past `startupTimeoutSeconds` make the
next target start replicas, and marking them Running scales it back; a StatefulSet target is scaled through its
scale subresource; an HPA on a target shows as `TargetConflict` and a Warning event, the target left alone."""

from __future__ import annotations

import contextlib
import copy
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from ballast.api.scheme import add_to_scheme
from ballast.controllers.balancer import setup
from ballast.runtime import Manager, RESTConfig, Scheme
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.paths import CRD_DIR
from tests.unit.api.balancer_samples import EXAMPLES, balancer
from tests.unit.internal.runtime.support import running

JSON = dict[str, Any]
BALANCERS = "/apis/balancer.x-k8s.io/v1alpha1/namespaces/{ns}/balancers"
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def env(envtest: Environment) -> Iterator[Environment]:
    with Environment(
        assets=envtest.assets, components=["kube-controller-manager"], crd_paths=[CRD_DIR],
        network_mode=envtest.network_mode,
    ) as started:  # fmt: skip
        yield started


@pytest.fixture(scope="module")
def manager(env: Environment) -> Iterator[Manager]:
    made = Manager(RESTConfig(env.client_configuration()), scheme=add_to_scheme(Scheme()), field_owner="balancer-tests")
    setup(made, reprocess_period=1.0)
    with running(made):
        yield made


@pytest.fixture
def ns(env: Environment, manager: Manager) -> Iterator[str]:
    name = f"balancer-{uuid.uuid4().hex[:8]}"
    env.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        with contextlib.suppress(APIError):
            env.rest.delete(f"/api/v1/namespaces/{name}")


def apply(env: Environment, ns: str, text: str | JSON) -> str:
    body = text if isinstance(text, str) else yaml.safe_dump(text)
    return env.kubectl("apply", "-n", ns, "-f", "-", input_text=body)


def replicas(env: Environment, ns: str, name: str, kind: str = "deployments") -> int:
    return int(env.rest.get(f"/apis/apps/v1/namespaces/{ns}/{kind}/{name}")["spec"]["replicas"])


def placed(env: Environment, ns: str) -> tuple[int, int]:
    return replicas(env, ns, "nginx-1"), replicas(env, ns, "nginx-2")


def wait(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> Any:
    return poll_until(condition, timeout=timeout, what=what, interval=0.2)


def cond(env: Environment, ns: str, type_: str, name: str = "nginx") -> JSON:
    got = env.rest.get(f"{BALANCERS.format(ns=ns)}/{name}").get("status") or {}
    return next((c for c in got.get("conditions") or () if c["type"] == type_), {})


def pods(env: Environment, ns: str, app: str) -> list[JSON]:
    listed = env.rest.get(f"/api/v1/namespaces/{ns}/pods", params={"labelSelector": f"app={app}"})
    return [p for p in listed["items"] if not p["metadata"].get("deletionTimestamp")]


def mark_running(env: Environment, ns: str, app: str) -> None:
    for pod in pods(env, ns, app):
        if (pod.get("status") or {}).get("phase") != "Running":
            with contextlib.suppress(APIError):
                env.rest.patch_status(f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}",
                                      {"status": {"phase": "Running"}})  # fmt: skip


@contextlib.contextmanager
def keep_running(env: Environment, ns: str, app: str) -> Iterator[None]:
    """Mark the target's pods Running as they appear (a kubelet would), until the block ends."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(0.2):
            with contextlib.suppress(Exception):
                mark_running(env, ns, app)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


def events(env: Environment, ns: str, reason: str) -> list[JSON]:
    listed = env.rest.get(f"/api/v1/namespaces/{ns}/events")
    return [e for e in listed["items"] if e.get("reason") == reason]


def test_the_priority_example_applied_unchanged_places_4_and_1(env: Environment, ns: str) -> None:
    apply(env, ns, EXAMPLES["nginx-priority"])

    wait(lambda: placed(env, ns) == (4, 1), "nginx-1 = 4, nginx-2 = 1")
    wait(lambda: cond(env, ns, "Balancing").get("status") == "True", "Balancing=True")
    status = env.rest.get(f"{BALANCERS.format(ns=ns)}/nginx")["status"]
    assert status["selector"] == "srv=nginx"
    assert cond(env, ns, "Balancing")["reason"] == "Completed"
    assert {t["name"]: t["desired"] for t in status["targets"]} == {"nginx-1": 4, "nginx-2": 1}
    header = env.kubectl("get", "balancer", "nginx", "-n", ns).splitlines()[0].split()
    assert header == ["NAME", "REPLICAS", "POLICY", "BALANCING", "AGE"]


def test_the_proportional_example_applied_unchanged_places_5_and_5(env: Environment, ns: str) -> None:
    apply(env, ns, EXAMPLES["nginx-proportional"])
    wait(lambda: placed(env, ns) == (5, 5), "5/5")


def test_kubectl_scale_and_a_scale_subresource_write_redistribute(env: Environment, ns: str) -> None:
    apply(env, ns, EXAMPLES["nginx-priority"])
    wait(lambda: placed(env, ns) == (4, 1), "placed")

    env.kubectl("scale", "balancer", "nginx", "-n", ns, "--replicas=3")
    wait(lambda: placed(env, ns) == (2, 1), "2/1 after kubectl scale --replicas=3")

    scale = env.rest.get(f"{BALANCERS.format(ns=ns)}/nginx/scale")  # what an HPA reads and writes
    scale["spec"]["replicas"] = 10
    del scale["metadata"]["resourceVersion"]  # unconditional: the controller's status writes move it meanwhile
    env.rest.request("PUT", f"{BALANCERS.format(ns=ns)}/nginx/scale", scale)
    wait(lambda: placed(env, ns) == (7, 3), "7/3 after the scale write (nginx-1 capped at 7)")


def test_late_pods_start_replicas_elsewhere_and_scale_back_once_running(env: Environment, ns: str) -> None:
    body = copy.deepcopy(balancer("nginx-priority"))
    body["spec"]["policy"]["fallback"]["startupTimeoutSeconds"] = 3
    text = EXAMPLES["nginx-priority"]
    documents = [d for d in yaml.safe_load_all(text) if d and d["kind"] != "Balancer"]
    for document in documents:
        apply(env, ns, document)
    with keep_running(env, ns, "nginx-2"):
        apply(env, ns, body)
        wait(lambda: placed(env, ns) == (4, 1), "placed")
        # nginx-1's pods stay Pending (no scheduler): after 3 s they are late and nginx-2 takes their replicas too.
        wait(lambda: placed(env, ns) == (4, 5), "nginx-2 = 5 while nginx-1's 4 pods are late")
        wait(lambda: cond(env, ns, "Balancing").get("status") == "True", "still balancing")
        with keep_running(env, ns, "nginx-1"):
            wait(lambda: placed(env, ns) == (4, 1), "back to 4/1 once nginx-1's pods run")
    status = env.rest.get(f"{BALANCERS.format(ns=ns)}/nginx")["status"]
    assert status["replicas"] >= 5


def test_a_statefulset_target_is_scaled_through_its_scale_subresource(env: Environment, ns: str) -> None:
    text = EXAMPLES["nginx-priority"]
    documents = [d for d in yaml.safe_load_all(text) if d]
    for document in documents:
        if document["kind"] == "Deployment" and document["metadata"]["name"] == "nginx-2":
            document["kind"] = "StatefulSet"
            document["spec"]["serviceName"] = "nginx"
        if document["kind"] == "Balancer":
            document["spec"]["targets"][1]["scaleTargetRef"]["kind"] = "StatefulSet"
        apply(env, ns, document)
    body = copy.deepcopy(balancer("nginx-priority"))
    body["spec"]["replicas"] = 10
    body["spec"]["targets"][1]["scaleTargetRef"]["kind"] = "StatefulSet"
    apply(env, ns, body)
    wait(lambda: (replicas(env, ns, "nginx-1"), replicas(env, ns, "nginx-2", "statefulsets")) == (7, 3), "7/3")


def test_an_hpa_on_a_target_is_a_conflict_and_the_target_is_left_alone(env: Environment, ns: str) -> None:
    apply(env, ns, {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx-2"},
                 "minReplicas": 3, "maxReplicas": 5,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": 50}}}]},
    })  # fmt: skip
    apply(env, ns, EXAMPLES["nginx-priority"])

    wait(lambda: cond(env, ns, "TargetConflict").get("status") == "True", "TargetConflict=True")
    assert "HorizontalPodAutoscaler web" in cond(env, ns, "TargetConflict")["message"]
    wait(lambda: replicas(env, ns, "nginx-1") == 4, "nginx-1 still placed")
    assert replicas(env, ns, "nginx-2") == 3
    (event,) = wait(lambda: events(env, ns, "TargetConflict"), "a TargetConflict event")
    assert event["type"] == "Warning"
    assert event["source"]["component"] == "balancer-controller"
    assert event["involvedObject"]["kind"] == "Balancer"


def test_missing_replicas_show_as_a_condition(env: Environment, ns: str) -> None:
    apply(env, ns, EXAMPLES["nginx-priority"])
    wait(lambda: placed(env, ns) == (4, 1), "placed")
    env.kubectl("scale", "balancer", "nginx", "-n", ns, "--replicas=1")
    wait(lambda: cond(env, ns, "ReplicasMissing").get("status") == "True", "ReplicasMissing=True")
    assert cond(env, ns, "ReplicasMissing")["message"].startswith("1 replicas")
    assert placed(env, ns) == (1, 1)


def test_pods_are_watched_per_target_selector_never_cluster_wide(env: Environment, ns: str, manager: Manager) -> None:
    apply(env, ns, EXAMPLES["nginx-priority"])
    wait(lambda: placed(env, ns) == (4, 1), "placed")
    pod_informers = [i.name for i in manager.cache.informers() if i.name.startswith("pod.core")]
    assert f"pod.core,ns={ns},labels=app=nginx-1,srv=nginx" in pod_informers
    assert f"pod.core,ns={ns},labels=app=nginx-2,srv=nginx" in pod_informers
    assert all(",ns=" in name and ",labels=" in name for name in pod_informers)
