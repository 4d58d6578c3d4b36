"""Policy resolution: candidates, precedence (docs/compatibility.md), per-policy validity (docs/design.md,
difference 8), resolve-time defaults and the compile cache."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.api.ballast.v1.workloadprofile import PolicyRef
from ballast.internal.policy import (
    PodFacts,
    Policy,
    PolicyCache,
    Resolution,
    compile_policy,
    discriminator_for,
    policy_key_for,
    resolve_policy,
)

from .builders import crp, rp

POD = PodFacts("team-a", {"app": "web"}, {}, ("ReplicaSet", "Deployment"))
BAD_REGEX = {"namespaces": {"include": ["/(/"]}}
BAD_SELECTOR = {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}}


def winner(policies: list[Policy], pod: PodFacts = POD) -> tuple[str, str, str] | None:
    resolution = resolve_policy(pod, policies, cache=PolicyCache())
    return None if resolution is None else (resolution.kind, resolution.namespace, resolution.name)


CRP = "ClusterResourcePolicy"
RP = "ResourcePolicy"


@pytest.mark.parametrize(
    ("policies", "expected"),
    [
        ([], None),
        ([crp("default")], (CRP, "", "default")),
        # A ResourcePolicy in the pod's namespace beats every ClusterResourcePolicy, whatever the priorities.
        ([crp("fleet", 1000), rp("team-a", "local", 0)], (RP, "team-a", "local")),
        ([rp("team-a", "local", -5), crp("fleet", 1000)], (RP, "team-a", "local")),
        # Then higher priority.
        ([crp("low", 1), crp("high", 5)], (CRP, "", "high")),
        ([crp("omitted"), crp("negative", -1)], (CRP, "", "omitted")),  # omitted priority is 0
        ([rp("team-a", "low", 1), rp("team-a", "high", 2)], (RP, "team-a", "high")),
        # Then name ascending, in byte order.
        ([crp("beta", 3), crp("alpha", 3)], (CRP, "", "alpha")),
        ([crp("beta"), crp("alpha", 0)], (CRP, "", "alpha")),  # omitted and 0 tie
        ([rp("team-a", "b"), rp("team-a", "a")], (RP, "team-a", "a")),
        ([crp("a9"), crp("a10")], (CRP, "", "a10")),  # not natural order
        ([crp("web.1"), crp("web-2")], (CRP, "", "web-2")),  # "-" (0x2d) sorts before "." (0x2e)
        # A same-named ResourcePolicy and ClusterResourcePolicy: the scope decides.
        ([crp("shared", 9), rp("team-a", "shared", 0)], (RP, "team-a", "shared")),
        # ResourcePolicies of other namespaces are not candidates.
        ([rp("team-b", "theirs", 100), crp("default")], (CRP, "", "default")),
        ([rp("team-b", "theirs", 100)], None),
        # Non-matching policies drop out before precedence.
        ([crp("high", 9, {"kinds": ["StatefulSet"]}), crp("low", 1)], (CRP, "", "low")),
        ([rp("team-a", "local", 0, {"namespaces": {"exclude": ["team-a"]}}), crp("fleet")], (CRP, "", "fleet")),
    ],
)
def test_precedence(policies: list[Policy], expected: tuple[str, str, str] | None) -> None:
    assert winner(policies) == expected


def test_a_pod_without_namespace_sees_no_resource_policy() -> None:
    assert winner([rp("team-a", "local"), crp("fleet")], PodFacts("")) == (CRP, "", "fleet")


@pytest.mark.parametrize("selector", [BAD_REGEX, BAD_SELECTOR, {"annotations": {"team": "/(?P<x/"}}])
def test_invalid_policy_is_skipped_and_the_others_still_resolve(selector: dict[str, object]) -> None:
    # The broken policy would win on priority; the Go operator would fail resolution for every pod instead.
    policies: list[Policy] = [crp("broken", 100, selector), crp("fleet", 1)]
    assert winner(policies) == (CRP, "", "fleet")
    compiled = compile_policy(policies[0])
    assert not compiled.matchable
    assert not compiled.valid
    assert compiled.messages[0].startswith("spec.selector.")


def test_invalid_resource_policy_falls_back_to_cluster_policy() -> None:
    assert winner([rp("team-a", "broken", 0, BAD_REGEX), crp("fleet")]) == (CRP, "", "fleet")


def test_only_invalid_policies_resolve_to_none() -> None:
    assert winner([crp("broken", 0, BAD_SELECTOR)]) is None


def test_skipped_policy_is_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="ballast.internal.policy"):
        winner([crp("broken", 0, BAD_REGEX)])
    assert [record.getMessage() for record in caplog.records] == ["skipping invalid policy"]
    assert caplog.records[0].__dict__["policy"] == "ClusterResourcePolicy//broken"


def test_value_problems_do_not_skip_the_policy() -> None:
    # A bad headroom is refused at write time, but a stored one falls back to 1.0 at use time, as in the Go operator;
    # skipping it would move its pods to another profile.
    policy = crp("sloppy", 5, metrics=[{"resource": "cpu", "source": "m", "headroom": "lots"}])
    assert winner([policy, crp("fleet")]) == (CRP, "", "sloppy")
    compiled = compile_policy(policy)
    assert compiled.matchable
    assert compiled.messages == (
        'spec.metrics[0].headroom: invalid headroom "lots": must be a decimal number 0 < headroom ≤ 100 with at most '
        '6 decimal places, such as "1.2"',
    )


@given(st.permutations(range(6)))
def test_resolution_does_not_depend_on_list_order(order: list[int]) -> None:
    policies: list[Policy] = [
        crp("fleet", 10),
        crp("default", 0),
        crp("alpha", 10),
        rp("team-a", "zeta", 0),
        rp("team-a", "eta", 0),
        rp("team-b", "other", 99),
    ]
    assert winner([policies[i] for i in order]) == (RP, "team-a", "eta")


# The result: identity, discriminator input and defaults.


@pytest.mark.parametrize(
    ("policy", "discriminator", "key", "ref", "policy_ref"),
    [
        (
            crp("default"),
            "default-a9696153",
            "ClusterResourcePolicy//default",
            "default",
            PolicyRef(kind="ClusterResourcePolicy", name="default"),
        ),
        (
            rp("team-a", "local"),
            "local-84fadaa0",
            "ResourcePolicy/team-a/local",
            "team-a/local",
            PolicyRef(kind="ResourcePolicy", namespace="team-a", name="local"),
        ),
    ],
)
def test_resolution_identity(policy: Policy, discriminator: str, key: str, ref: str, policy_ref: PolicyRef) -> None:
    resolution = resolve_policy(POD, [policy], cache=PolicyCache())
    assert resolution is not None
    assert resolution.discriminator == discriminator == discriminator_for(resolution)
    assert resolution.policy_key == key == policy_key_for(resolution)
    assert resolution.ref == ref
    assert resolution.policy_ref() == policy_ref


def test_no_policy_gives_the_nopolicy_discriminator_and_an_empty_key() -> None:
    assert (discriminator_for(None), policy_key_for(None)) == ("nopolicy", "")


def _resolved(policy: Policy) -> Resolution:
    resolution = resolve_policy(POD, [policy], cache=PolicyCache())
    assert resolution is not None
    return resolution


def test_defaults_are_applied_without_touching_the_policy() -> None:
    policy = crp("default", 3)
    before = policy.to_wire()
    spec = _resolved(policy).spec
    assert spec.to_wire() == {
        "priority": 3,
        "readiness": {
            "minDataPoints": 500,
            "minTimeSpan": "24h",
            "maxCV": "1.5",
            "cvMeanFloor": {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"},
        },
        "behaviors": {
            "thresholds": {"default": "10%"},
            "resize": {"maxChangePerCycle": "50%", "interval": "15m"},
            "oom": {"enabled": True, "bumpRatio": "1.2", "minBump": "100Mi", "window": "24h", "maxKills": 3},
        },
    }
    assert policy.to_wire() == before
    assert policy.spec.readiness is None


def test_written_values_win_over_defaults() -> None:
    policy = crp(
        "local-testing",
        readiness={"minDataPoints": 5, "minTimeSpan": "1m", "maxCV": "2.0", "cvMeanFloor": {}},
        behaviors={"thresholds": {"resize": {"default": "20%"}}, "resize": {"interval": "30s"}},
        metrics=[{"resource": "cpu", "field": "request", "source": "m", "aggregation": "avg", "headroom": "1.25"}],
    )
    spec = _resolved(policy).spec
    assert spec.to_wire()["readiness"] == {"minDataPoints": 5, "minTimeSpan": "1m", "maxCV": "2.0", "cvMeanFloor": {}}
    assert spec.to_wire()["behaviors"] == {
        "thresholds": {"default": "10%", "resize": {"default": "20%"}},  # resize.default is not defaulted
        "resize": {"maxChangePerCycle": "50%", "interval": "30s"},
        "oom": {"enabled": True, "bumpRatio": "1.2", "minBump": "100Mi", "window": "24h", "maxKills": 3},
    }
    assert spec.to_wire()["metrics"] == policy.spec.to_wire()["metrics"]  # headroom untouched


def test_each_resolution_owns_its_spec() -> None:
    policy = crp("default", rv="7")
    cache = PolicyCache()
    first = resolve_policy(POD, [policy], cache=cache)
    second = resolve_policy(POD, [policy], cache=cache)
    assert first is not None
    assert second is not None
    assert first.spec is not second.spec
    assert first.spec.readiness is not None
    first.spec.readiness.min_data_points = 1
    assert second.spec.readiness is not None
    assert second.spec.readiness.min_data_points == 500
    assert policy.spec.readiness is None


# The compile cache.


def test_cache_reuses_a_compiled_version() -> None:
    cache = PolicyCache()
    assert cache.compile(crp("p", rv="1")) is cache.compile(crp("p", rv="1"))
    assert len(cache) == 1


def test_cache_recompiles_a_new_version() -> None:
    cache = PolicyCache()
    old = cache.compile(crp("p", 0, {"kinds": ["Deployment"]}, rv="1"))
    new = cache.compile(crp("p", 0, {"kinds": ["StatefulSet"]}, rv="2"))
    assert old.matches(POD)
    assert not new.matches(POD)


def test_cache_keys_on_kind_and_namespace() -> None:
    cache = PolicyCache()
    compiled = [
        cache.compile(crp("p", rv="1")),
        cache.compile(rp("a", "p", rv="1")),
        cache.compile(rp("b", "p", rv="1")),
    ]
    assert [(c.kind, c.namespace) for c in compiled] == [(CRP, ""), (RP, "a"), (RP, "b")]
    assert len(cache) == 3


def test_cache_does_not_keep_objects_without_a_resource_version() -> None:
    cache = PolicyCache()
    assert cache.compile(crp("p")) is not cache.compile(crp("p"))
    assert len(cache) == 0


def test_cache_evicts_the_least_recently_used() -> None:
    cache = PolicyCache(max_entries=2)
    first = cache.compile(crp("a", rv="1"))
    cache.compile(crp("b", rv="1"))
    assert cache.compile(crp("a", rv="1")) is first  # a is now the most recent
    cache.compile(crp("c", rv="1"))
    assert len(cache) == 2
    assert cache.compile(crp("a", rv="1")) is first
    assert cache.compile(crp("b", rv="1")) is not None  # recompiled after eviction
    assert len(cache) == 2


def test_cache_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_entries must be at least 1"):
        PolicyCache(max_entries=0)


@pytest.mark.parametrize(
    ("policy", "error", "message"),
    [
        (crp(""), ValueError, "ClusterResourcePolicy has no metadata.name"),
        (rp("", "local"), ValueError, "ResourcePolicy 'local' has no metadata.namespace"),
        ("default", TypeError, "expected a ClusterResourcePolicy or ResourcePolicy, got str"),
    ],
)
def test_compile_refuses_objects_without_identity(policy: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        compile_policy(policy)  # type: ignore[arg-type]


def test_cluster_policy_namespace_is_ignored() -> None:
    policy = crp("default")
    policy.metadata.namespace = "stray"
    assert compile_policy(policy).namespace == ""
