"""`ballast explain` on a bare pod (no owner, so no pod template): the values it was created with are its own spec
while nothing has changed them, and the explanation says so instead of "the pod template could not be read"."""

from __future__ import annotations

from typing import Any

from ballast.api.ballast.v1 import ClusterResourcePolicy, WorkloadProfile
from ballast.internal.enrollment import MODE_LABEL, POLICY_REF, PROFILE_REF, applied_annotation
from ballast.internal.explain import PodContext, explain

GROUP_VERSION = "ballast.tightlinesoftware.com/v1"
IDENTITY = ("app.kubernetes.io/name", "app.kubernetes.io/component")
PROFILE = "checkout--api--default-a9696153"


def bare_pod(requests: dict[str, str], limits: dict[str, str], **annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "checkout-0",
            "namespace": "shop",
            "labels": {"app.kubernetes.io/name": "checkout", "app.kubernetes.io/component": "api", MODE_LABEL: "apply"},
            "annotations": {PROFILE_REF: PROFILE, POLICY_REF: "default", **annotations},
        },
        "spec": {"containers": [{"name": "api", "resources": {"requests": requests, "limits": limits}}]},
    }


def default_policy() -> ClusterResourcePolicy:
    return ClusterResourcePolicy.model_validate(
        {
            "apiVersion": GROUP_VERSION,
            "kind": "ClusterResourcePolicy",
            "metadata": {"name": "default", "uid": "uid-default", "resourceVersion": "1"},
            "spec": {
                "priority": 0,
                "metrics": [{"resource": "cpu", "field": "request", "source": "m", "aggregation": "p95"}],
            },
        }
    )


def profile() -> WorkloadProfile:
    usage = {"resource": "cpu", "samples": 10, "timeSpan": "1m0s", "p95": "243m", "mean": "200m", "cv": "0.100"}
    return WorkloadProfile.model_validate(
        {
            "apiVersion": GROUP_VERSION,
            "kind": "WorkloadProfile",
            "metadata": {"name": PROFILE},
            "status": {
                "state": "Sufficient",
                "meetsThreshold": True,
                "policyRef": {"kind": "ClusterResourcePolicy", "name": "default"},
                "containers": [{"name": "api", "usageStats": [usage], "recommendations": {"cpu": {"request": "600m"}}}],
            },
        }
    )


def explained(pod: dict[str, Any]) -> list[str]:
    return explain(PodContext(pod, (), IDENTITY, (default_policy(),), profile()))


def test_a_bare_pod_that_admission_left_alone_is_explained_from_its_own_spec() -> None:
    lines = explained(bare_pod({"cpu": "100m"}, {"cpu": "500m"}))
    text = "\n".join(lines)
    assert "could not be read" not in text
    assert (
        "    cpu limit = 500m × 600m / 100m = 3 (the pod's limit:request ratio, kept so the request stays within "
        "the limit)"
    ) in lines
    kept = explained(bare_pod({"cpu": "100m"}, {"cpu": "2"}))
    assert "    cpu limit: 2 from the pod's own spec (a bare pod), kept (request 600m ≤ limit)" in kept


def test_a_bare_pod_whose_values_admission_changed_says_they_are_not_kept() -> None:
    pod = bare_pod({"cpu": "600m"}, {"cpu": "3"}, **{applied_annotation("cpu", "request"): "600m"})
    lines = explained(pod)
    assert "could not be read" not in "\n".join(lines)
    assert (
        "    cpu limit: not managed by the policy (a bare pod has no template, and its spec no longer holds the "
        "values it was created with)"
    ) in lines
    assert "    pod spec now: request 600m, limit 3" in lines
