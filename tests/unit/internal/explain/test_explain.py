"""`ballast explain`: formulas, the limit rule, policy precedence in words, and the whole explanation of a pod."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.api.ballast.v1 import (
    ClusterResourcePolicy,
    ContributingNamespaces,
    MetricConfig,
    Recommendation,
    ResourcePolicy,
    UsageStats,
    WorkloadProfile,
)
from ballast.internal.enrollment import MODE_LABEL, POLICY_REF, PROFILE_REF, applied_annotation
from ballast.internal.explain import (
    Owner,
    PodContext,
    explain,
    formula,
    headroom_text,
    judge_policies,
    limit_lines,
    parse_pod_ref,
    recompute,
)
from ballast.internal.policy import PodFacts

GROUP_VERSION = "ballast.tightlinesoftware.com/v1"
IDENTITY = ("app.kubernetes.io/name", "app.kubernetes.io/component")
PROFILE = "checkout--api--default-a9696153"
SOURCE = "kubernetes-metrics"
CPU = UsageStats.model_validate(
    {"resource": "cpu", "samples": 1440, "timeSpan": "24h0m0s", "p50": "180m", "p75": "200m", "p90": "205m",
     "p95": "212m", "p99": "240m", "mean": "190m", "stdDev": "20m", "cv": "0.105", "source": "kubernetes-metrics"}
)  # fmt: skip
MEMORY = UsageStats.model_validate(
    {"resource": "memory", "samples": 1440, "timeSpan": "24h0m0s", "p75": "176.01Mi", "p99": "240.00Mi",
     "mean": "175.50Mi", "cv": "0.057"}
)  # fmt: skip


def metric(resource: str, field: str, aggregation: str, headroom: str | None = None) -> MetricConfig:
    wire = {"resource": resource, "field": field, "source": SOURCE, "aggregation": aggregation, "headroom": headroom}
    return MetricConfig.model_validate(wire)


def policy(
    name: str, *, priority: int = 0, namespace: str | None = None, selector: dict[str, Any] | None = None
) -> ClusterResourcePolicy | ResourcePolicy:
    body = {
        "apiVersion": GROUP_VERSION,
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "1"},
        "spec": {
            "priority": priority,
            "selector": selector or {},
            "metrics": [
                {"resource": "cpu", "field": "request", "source": SOURCE, "aggregation": "p95", "headroom": "1.15"},
                {"resource": "memory", "field": "request", "source": SOURCE, "aggregation": "p75"},
            ],
            "readiness": {"minDataPoints": 250},
        },
    }
    if namespace:
        return ResourcePolicy.model_validate({**body, "kind": "ResourcePolicy"})
    return ClusterResourcePolicy.model_validate({**body, "kind": "ClusterResourcePolicy"})


# ----------------------------------------------------------------------------------------------- pieces


@pytest.mark.parametrize(
    ("text", "namespace", "expected"),
    [
        ("pod/shop/web-0", None, ("shop", "web-0")),
        ("pods/shop/web-0", None, ("shop", "web-0")),
        ("shop/web-0", None, ("shop", "web-0")),
        ("pod/web-0", "shop", ("shop", "web-0")),
        ("web-0", "shop", ("shop", "web-0")),
    ],
)
def test_pod_references(text: str, namespace: str | None, expected: tuple[str, str]) -> None:
    assert parse_pod_ref(text, namespace) == expected


@pytest.mark.parametrize("text", ["web-0", "pod/", "a/b/c", "deployment/shop/web"])
def test_a_pod_reference_without_a_namespace_or_with_extra_parts_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="expected pod/NAMESPACE/NAME"):
        parse_pod_ref(text, None)


def test_a_formula_shows_the_statistic_the_headroom_and_the_profiles_value() -> None:
    assert formula(metric("cpu", "request", "p95", "1.15"), CPU, "243m") == "cpu request = p95 (212m) × 1.15 = 243m"
    assert formula(metric("cpu", "request", "avg", "1.25"), CPU, "237m") == "cpu request = avg (190m) × 1.25 = 237m"


def test_a_rounded_figure_that_does_not_give_the_value_back_says_so() -> None:
    # 176.01Mi shown, the exact p75 was a few bytes less: the profile's value stands, the recomputation is shown.
    text = formula(metric("memory", "request", "p75"), MEMORY, "176Mi")
    assert text.startswith("memory request = p75 (176.01Mi) × 1 (headroom unset) = 176Mi (from the exact p75;")
    assert text.endswith(f": {recompute('176.01Mi', 'p75', None, 'memory')})")


def test_a_value_not_recommended_yet_shows_what_it_would_be() -> None:
    assert formula(metric("cpu", "request", "p99", "2"), CPU, None) == (
        "cpu request = p99 (240m) × 2 → 480m, not recommended yet (still accruing)"
    )
    assert formula(metric("cpu", "request", "max"), CPU, "300m") == (
        "cpu request = max × 1 (headroom unset) = 300m (the status keeps no max figure)"
    )
    assert formula(metric("cpu", "request", "p95"), None, None) == (
        "cpu request = p95 × 1 (headroom unset) (no statistics yet)"
    )


def test_recompute_uses_the_operators_arithmetic() -> None:
    assert recompute("200m", "p95", "1.15", "cpu") == "230m"  # exact: Go truncates to 229m
    assert recompute("192Mi", "p75", None, "memory") == "192Mi"
    assert recompute("not-a-quantity", "p95", None, "cpu") is None


@pytest.mark.parametrize(
    ("headroom", "text"),
    [
        ("1.25", "1.25"),
        (None, "1 (headroom unset)"),
        ("", "1 (headroom unset)"),
        ("-2", "1 (headroom '-2' is not a positive decimal)"),
    ],
)
def test_headroom_text(headroom: str | None, text: str) -> None:
    assert headroom_text(headroom) == text


def template(requests: dict[str, str], limits: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return {"name": "app", "resources": resources}


def test_a_template_limit_above_the_request_is_kept() -> None:
    lines = limit_lines("cpu", Recommendation(request="243m"), template({"cpu": "100m"}, {"cpu": "1"}), False)
    assert lines == ["cpu limit: 1 from the pod template, kept (request 243m ≤ limit)"]


def test_a_template_limit_below_the_new_request_keeps_the_templates_ratio() -> None:
    lines = limit_lines("cpu", Recommendation(request="600m"), template({"cpu": "100m"}, {"cpu": "500m"}), False)
    assert lines == [
        "cpu limit = 500m × 600m / 100m = 3 "
        "(the template's limit:request ratio, kept so the request stays within the limit)"
    ]


def test_without_a_usable_ratio_the_limit_becomes_the_request() -> None:
    lines = limit_lines("cpu", Recommendation(request="600m"), template({}, {"cpu": "500m"}), False)
    assert lines == ["cpu limit: 500m → 600m, raised to the request (a request never exceeds its limit)"]


def test_a_recommended_limit_below_the_request_is_raised_to_it() -> None:
    lines = limit_lines("memory", Recommendation(request="300Mi", limit="200Mi"), None, True)
    assert lines == ["memory limit raised to the request 300Mi: a request never exceeds its limit"]
    assert limit_lines("memory", Recommendation(request="100Mi", limit="200Mi"), None, True) == []


def test_no_limit_anywhere_and_an_unreadable_template() -> None:
    assert limit_lines("cpu", Recommendation(request="1"), template({"cpu": "1"}), False) == [
        "cpu limit: none (the policy manages none and the pod template sets none)"
    ]
    assert limit_lines("cpu", Recommendation(request="1"), None, False) == [
        "cpu limit: not managed by the policy (the pod template could not be read)"
    ]


# ------------------------------------------------------------------------------------------- precedence


def facts(namespace: str = "shop", owner_kinds: tuple[str, ...] = ("ReplicaSet", "Deployment")) -> PodFacts:
    return PodFacts(namespace, {"app.kubernetes.io/name": "checkout"}, {}, owner_kinds)


def test_a_resource_policy_in_the_pods_namespace_wins_whatever_the_priorities() -> None:
    verdict = judge_policies(facts(), [policy("fleet", priority=1000), policy("local", namespace="shop")])
    assert verdict.resolution is not None
    assert (verdict.resolution.kind, verdict.resolution.name) == ("ResourcePolicy", "local")
    [(rival, reason)] = verdict.rivals
    assert rival.name == "fleet"
    assert (
        reason == "a ResourcePolicy in the pod's namespace wins over any ClusterResourcePolicy, whatever the priorities"
    )


def test_priority_then_name_decide_among_cluster_policies() -> None:
    verdict = judge_policies(facts(), [policy("b-low"), policy("a-high", priority=5), policy("c-low")])
    assert verdict.resolution is not None
    assert verdict.resolution.name == "a-high"
    assert [reason for _, reason in verdict.rivals] == ["lower priority (0 < 5)", "lower priority (0 < 5)"]
    tie = judge_policies(facts(), [policy("fleet"), policy("default")])
    assert [reason for _, reason in tie.rivals] == ["same priority 0; 'default' sorts before 'fleet'"]


def test_unmatched_invalid_and_other_namespaces_policies_are_told_apart() -> None:
    verdict = judge_policies(
        facts(),
        [
            policy("jobs-only", selector={"kinds": ["Job"]}),
            policy("broken", selector={"namespaces": {"include": ["/(/"]}}),
            policy("elsewhere", namespace="other"),
            policy("default"),
        ],
    )
    assert [c.name for c in verdict.unmatched] == ["jobs-only"]
    assert [c.name for c in verdict.invalid] == ["broken"]
    assert verdict.resolution is not None
    assert verdict.resolution.name == "default"
    assert verdict.rivals == ()


# ------------------------------------------------------------------------------------------ explanation


def enrolled_pod(**annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "checkout-7d9f8-x2x4p",
            "namespace": "shop",
            "labels": {"app.kubernetes.io/name": "checkout", "app.kubernetes.io/component": "api", MODE_LABEL: "apply"},
            "annotations": {PROFILE_REF: PROFILE, POLICY_REF: "default", **annotations},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "checkout-7d9f8",
                    "uid": "rs",
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [template({"cpu": "243m", "memory": "176Mi"}, {"cpu": "1"})]},
    }


def replica_set() -> dict[str, Any]:
    owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "checkout", "uid": "d", "controller": True}
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "checkout-7d9f8", "ownerReferences": [owner]},
        "spec": {"template": {"spec": {"containers": [template({"cpu": "100m", "memory": "128Mi"}, {"cpu": "1"})]}}},
    }


def workload_profile(state: str = "Sufficient", recommendations: dict[str, Any] | None = None) -> WorkloadProfile:
    return WorkloadProfile.model_validate(
        {
            "apiVersion": GROUP_VERSION,
            "kind": "WorkloadProfile",
            "metadata": {"name": PROFILE},
            "status": {
                "state": state,
                "meetsThreshold": state == "Sufficient",
                "activeWorkloads": 3,
                "contributingNamespaces": {"count": 2, "names": ["shop", "shop-canary"]},
                "measurementHash": "8746f67fe9f3d343",
                "policyRef": {"kind": "ClusterResourcePolicy", "name": "default"},
                "containers": [
                    {
                        "name": "app",
                        "usageStats": [CPU.to_wire(), MEMORY.to_wire()],
                        "recommendations": recommendations
                        if recommendations is not None
                        else {"cpu": {"request": "243m"}, "memory": {"request": "176Mi"}},
                    }
                ],
            },
        }
    )


def context(pod: dict[str, Any], profile: WorkloadProfile | None) -> PodContext:
    owners = (Owner("ReplicaSet", "checkout-7d9f8", replica_set()), Owner("Deployment", "checkout", {}))
    return PodContext(pod, owners, IDENTITY, (policy("default"), policy("fleet")), profile)


def test_an_enrolled_pod_is_explained_from_identity_to_formulas() -> None:
    pod = enrolled_pod(
        **{applied_annotation("cpu", "request"): "243m", applied_annotation("memory", "request"): "176Mi"}
    )
    lines = explain(context(pod, workload_profile()))
    text = "\n".join(lines)
    assert lines[0] == "Pod shop/checkout-7d9f8-x2x4p"
    for expected in (
        "  owners:      ReplicaSet checkout-7d9f8 → Deployment checkout",
        "  tuple:        app.kubernetes.io/name=checkout, app.kubernetes.io/component=api",
        f"  profile name: {PROFILE} (tuple values, then policy discriminator default-a9696153)",
        "Policy: ClusterResourcePolicy default (priority 0; policy-ref default)",
        "  wins over ClusterResourcePolicy fleet: same priority 0; 'default' sorts before 'fleet'",
        f"Profile: {PROFILE}",
        "  state:           Sufficient (meetsThreshold true), 3 active pod(s)",
        "  shared by:       2 namespaces: shop, shop-canary",
        "  cpu: 1440 samples over 24h0m0s from kubernetes-metrics",
        "    p50 180m  p75 200m  p90 205m  p95 212m  p99 240m  mean 190m  stdDev 20m  cv 0.105",
        "    cpu request = p95 (212m) × 1.15 = 243m",
        "    cpu limit: 1 from the pod template, kept (request 243m ≤ limit)",
        "    admission wrote request 243m (annotations applied-cpu-request)",
        "    pod spec now: request 243m, limit 1",
    ):
        assert expected in lines, f"{expected!r} not in:\n{text}"
    assert any(line.startswith("    ready: 1440 samples (needs 250), span 24h0m0s (needs 24h)") for line in lines)


def test_an_accruing_profile_shows_what_each_value_would_be() -> None:
    lines = explain(context(enrolled_pod(), workload_profile("Accruing", recommendations={})))
    assert "  state:           Accruing (meetsThreshold false), 3 active pod(s)" in lines
    assert "    cpu request = p95 (212m) × 1.15 → 243m, not recommended yet (still accruing)" in lines
    assert any(line.startswith("    accruing: 1440 samples") for line in lines)


def test_a_pod_created_before_the_latest_recommendation_says_it_keeps_its_values() -> None:
    pod = enrolled_pod(**{applied_annotation("cpu", "request"): "300m"})
    lines = explain(context(pod, workload_profile()))
    assert (
        "    the profile now recommends request 243m: the pod keeps the values of its creation until it is recreated "
        "(apply) or resized in place (resize)"
    ) in lines


def test_missing_profile_and_not_enrolled_pods_are_explained_too() -> None:
    missing = explain(context(enrolled_pod(), None))
    assert f"Profile: {PROFILE} not found (deleted, or not created yet)" in missing
    pod = enrolled_pod()
    del pod["metadata"]["labels"][MODE_LABEL]
    del pod["metadata"]["annotations"][PROFILE_REF]
    lines = explain(context(pod, None))
    assert f"  mode:        not enrolled (no {MODE_LABEL} label)" in lines
    assert "Profile: none yet (the operator has not stamped a profile-ref on the pod)" in lines


def test_a_pod_stamped_under_another_policy_is_noted() -> None:
    ctx = context(enrolled_pod(), workload_profile())
    ctx = PodContext(ctx.pod, ctx.owners, ctx.identity_labels, (policy("fleet"),), ctx.profile)
    text = "\n".join(explain(ctx))
    assert f"note: the pod is stamped with {PROFILE}; today's policies give checkout--api--fleet-" in text


def test_a_profile_shared_by_more_namespaces_than_listed_says_how_many_more() -> None:
    profile = workload_profile()
    assert profile.status is not None
    names = [f"team-{n:02d}" for n in range(10)]
    profile.status.contributing_namespaces = ContributingNamespaces(count=12, names=names)
    lines = explain(context(enrolled_pod(), profile))
    assert f"  shared by:       12 namespaces: {', '.join(names)}, … (2 more)" in lines
