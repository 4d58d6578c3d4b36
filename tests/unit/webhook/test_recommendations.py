"""Which containers are ready at admission, and how recommendations are written without request > limit."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.api.ballast.v1 import Recommendation, WorkloadProfileStatus
from ballast.internal.stats.applicable import ready_recommendations
from ballast.webhook.recommendations import AppliedValue, ScaledLimit, apply_recommendations

from .support import container, container_profile, pod


def status(containers: list[dict[str, Any]], meets_threshold: bool) -> WorkloadProfileStatus:
    return WorkloadProfileStatus.model_validate({"containers": containers, "meetsThreshold": meets_threshold})


def recs(**resources: dict[str, str]) -> dict[str, Recommendation]:
    return {resource: Recommendation.model_validate(values) for resource, values in resources.items()}


# ------------------------------------------------------------------------------------------- readiness


def test_no_status_means_nothing_is_ready() -> None:
    assert ready_recommendations(None) == {}
    assert ready_recommendations(WorkloadProfileStatus()) == {}


def test_meets_threshold_makes_every_container_with_recommendations_ready() -> None:
    partial = container_profile("sidecar", {"cpu": {"request": "20m"}}, measured=["cpu", "memory"])
    ready = ready_recommendations(
        status([container_profile("app", {"cpu": {"request": "1"}}), partial, container_profile("empty", {})], True)
    )
    assert set(ready) == {"app", "sidecar"}
    assert ready["sidecar"]["cpu"].request == "20m"


@pytest.mark.parametrize(
    ("entry", "ready"),
    [
        (container_profile("c", {"cpu": {"request": "1"}, "memory": {"limit": "1Gi"}}), True),
        (container_profile("c", {"cpu": {"request": "1"}}, measured=["cpu", "memory"]), False),  # memory accrues
        (container_profile("c", {"cpu": {"request": "1"}}, measured=[]), False),  # nothing measured
        ({"name": "c", "recommendations": {"cpu": {"request": "1"}}}, False),  # no usageStats at all
        (container_profile("c", {}, measured=["cpu"]), False),  # nothing recommended
        (container_profile("c", {"cpu": {}}, measured=["cpu"]), True),  # judged ready, values left unset
    ],
)
def test_without_meets_threshold_a_container_is_ready_when_every_measured_resource_is_recommended(
    entry: dict[str, Any], ready: bool
) -> None:
    assert ("c" in ready_recommendations(status([entry], False))) is ready


# ------------------------------------------------------------------------------------------- writing


def test_values_and_annotations_are_written_and_maps_created_only_when_needed() -> None:
    target = pod(containers=[container("app"), container("other", {"cpu": "1"})])
    mutation = apply_recommendations(target, {"app": recs(cpu={"request": "250m"}, memory={"limit": "256Mi"})})
    assert target["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "250m"}, "limits": {"memory": "256Mi"}}
    assert target["spec"]["containers"][1]["resources"] == {"requests": {"cpu": "1"}}
    assert target["metadata"]["annotations"] == {
        "ballast.tightlinesoftware.com/applied-cpu-request": "250m",
        "ballast.tightlinesoftware.com/applied-memory-limit": "256Mi",
    }
    assert mutation.containers == ("app",)
    assert mutation.values == (
        AppliedValue("app", "cpu", "request", "250m"),
        AppliedValue("app", "memory", "limit", "256Mi"),
    )
    assert mutation.scaled_limits == ()


def test_nothing_applied_leaves_the_pod_as_it_was() -> None:
    target = pod(containers=[container("app")])
    before = repr(target)
    mutation = apply_recommendations(target, {"app": recs(cpu={"request": "x"}), "ghost": recs(cpu={"request": "1"})})
    assert repr(target) == before
    assert mutation.containers == ("app",)  # it had recommendations: the Go operator's "applied", not "no_change"
    assert mutation.values == ()


def test_a_null_resources_field_is_replaced() -> None:
    target = pod(containers=[{"name": "app", "resources": None}])
    apply_recommendations(target, {"app": recs(cpu={"request": "1"})})
    assert target["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "1"}}


def test_the_last_container_wins_the_applied_annotation() -> None:
    target = pod(containers=[container("a"), container("b")])
    apply_recommendations(target, {"a": recs(cpu={"request": "1"}), "b": recs(cpu={"request": "2"})})
    assert target["metadata"]["annotations"]["ballast.tightlinesoftware.com/applied-cpu-request"] == "2"


@pytest.mark.parametrize(
    ("requests", "limits", "recommended", "expected_requests", "expected_limits", "scaled"),
    [
        # The policy manages only the request; the container's limit is kept while the request fits under it …
        ({"cpu": "100m"}, {"cpu": "500m"}, {"request": "400m"}, {"cpu": "400m"}, {"cpu": "500m"}, None),
        ({"cpu": "100m"}, {"cpu": "500m"}, {"request": "500m"}, {"cpu": "500m"}, {"cpu": "500m"}, None),
        # … and scaled by the original limit:request ratio (5×) when it does not.
        ({"cpu": "100m"}, {"cpu": "500m"}, {"request": "600m"}, {"cpu": "600m"}, {"cpu": "3"},
         ScaledLimit("app", "cpu", "500m", "3", managed=False)),
        ({"memory": "128Mi"}, {"memory": "192Mi"}, {"request": "256Mi"}, {"memory": "256Mi"}, {"memory": "384Mi"},
         ScaledLimit("app", "memory", "192Mi", "384Mi", managed=False)),
        # No usable ratio (no request, or a request at the limit): the limit becomes the request.
        (None, {"cpu": "500m"}, {"request": "700m"}, {"cpu": "700m"}, {"cpu": "700m"},
         ScaledLimit("app", "cpu", "500m", "700m", managed=False)),
        ({"cpu": "500m"}, {"cpu": "500m"}, {"request": "700m"}, {"cpu": "700m"}, {"cpu": "700m"},
         ScaledLimit("app", "cpu", "500m", "700m", managed=False)),
        # No limit: nothing to keep.
        ({"cpu": "100m"}, None, {"request": "900m"}, {"cpu": "900m"}, None, None),
        # The policy manages the limit: a recommended limit under the request is raised to it.
        ({"cpu": "100m"}, None, {"request": "800m", "limit": "600m"}, {"cpu": "800m"}, {"cpu": "800m"},
         ScaledLimit("app", "cpu", "600m", "800m", managed=True)),
        ({"cpu": "900m"}, {"cpu": "1"}, {"limit": "600m"}, {"cpu": "900m"}, {"cpu": "900m"},
         ScaledLimit("app", "cpu", "600m", "900m", managed=True)),
        ({"cpu": "100m"}, {"cpu": "1"}, {"limit": "600m"}, {"cpu": "100m"}, {"cpu": "600m"}, None),
        # A value the container came with that is not a quantity is left for the API server to refuse.
        ({"cpu": "lots"}, {"cpu": "500m"}, {"request": "700m"}, {"cpu": "700m"}, {"cpu": "500m"}, None),
    ],
)  # fmt: skip
def test_request_never_exceeds_limit(
    requests: dict[str, str] | None,
    limits: dict[str, str] | None,
    recommended: dict[str, str],
    expected_requests: dict[str, str] | None,
    expected_limits: dict[str, str] | None,
    scaled: ScaledLimit | None,
) -> None:
    target = pod(containers=[container("app", requests, limits)])
    resource = next(iter(expected_requests or expected_limits or {}))
    mutation = apply_recommendations(target, {"app": recs(**{resource: recommended})})
    resources = target["spec"]["containers"][0]["resources"]
    assert resources.get("requests") == expected_requests
    assert resources.get("limits") == expected_limits
    assert mutation.scaled_limits == ((scaled,) if scaled else ())
    if scaled is not None:
        annotation = f"ballast.tightlinesoftware.com/applied-{resource}-limit"
        assert target["metadata"]["annotations"][annotation] == scaled.limit
