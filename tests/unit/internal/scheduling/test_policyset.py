"""Policies compiled once per listing (`PolicySet`, `PolicySets`): the same answers as compiling on every call,
rebuilt when a listed policy changes."""

from __future__ import annotations

import copy
from typing import Any

from ballast.internal.scheduling import (
    PolicySet,
    PolicySets,
    compile_policy,
    merge_detailed,
    select_compiled,
    sharing_pod_spec,
    target_for,
)
from ballast.internal.scheduling.policyset import Memo, Memos
from ballast.runtime.objects import freeze, thaw

from .builders import cluster, namespaced

EVERYWHERE: dict[str, Any] = {"namespaceSelector": {}}


def _policies() -> list[dict[str, Any]]:
    return [
        cluster("zz-last", podSelector={}, nodeSelector={"pool": "b"}, **EVERYWHERE),
        cluster("aa-first", podSelector={"matchLabels": {"app": "web"}}, nodeSelector={"pool": "a"}, **EVERYWHERE),
        cluster("broken", podSelector={"matchExpressions": [{"key": "app", "operator": "Near"}]}, **EVERYWHERE),
        namespaced("shop", "spot", podSelector={}, tolerations=[{"key": "spot", "operator": "Exists"}]),
        namespaced("shop", "db-only", podSelector={"matchLabels": {"app": "db"}}, nodeName="node-9"),
    ]


def _counting() -> tuple[PolicySets, list[int]]:
    calls = [0]

    def compile_counted(policy: Any) -> Any:
        calls[0] += 1
        return compile_policy(thaw(policy))

    return PolicySets(compile_counted), calls


def test_the_set_selects_and_merges_what_compiling_every_time_does() -> None:
    policies = _policies()
    compiled = [compile_policy(p) for p in policies]
    policy_set = PolicySet(compiled)
    spec = {"nodeSelector": {"disk": "ssd"}, "tolerations": [{"key": "a", "operator": "Exists"}]}
    for labels in ({"app": "web"}, {"app": "db"}, {}, {"app": "web", "tier": "1"}):
        expected = select_compiled(compiled, {"env": "prod"}, labels)
        for _ in range(2):  # judged, then remembered
            selection = policy_set.select({"env": "prod"}, labels)
            assert selection.matched == expected.matched
            assert selection.errors == expected.errors
            assert policy_set.merge(spec, selection) == merge_detailed(spec, expected.matched)
    web = policy_set.select({}, {"app": "web"})
    assert [p["metadata"]["name"] for p in web.matched] == ["aa-first", "zz-last", "spot"]
    assert policy_set.refs(web) == (
        "ClusterPodSchedulingPolicy/aa-first,ClusterPodSchedulingPolicy/zz-last,PodSchedulingPolicy/shop/spot"
    )
    assert [o.ref for o in web.errors] == ["ClusterPodSchedulingPolicy/broken"]
    assert [c.policy["metadata"]["name"] for c in policy_set.invalid] == ["broken"]


def test_a_remembered_merge_is_for_its_fields_only() -> None:
    policy_set = PolicySet([compile_policy(p) for p in _policies()])
    selection = policy_set.select({}, {"app": "web"})
    plain = policy_set.merge({}, selection)
    pinned = policy_set.merge({"nodeSelector": {"pool": "c"}}, selection)
    assert plain.spec["nodeSelector"] == {"pool": "a"}
    assert pinned.spec["nodeSelector"] == {"pool": "c"}
    assert [c.path for c in pinned.outcomes[0].conflicts] == ["nodeSelector[pool]"]


def test_a_listing_of_the_same_cached_objects_reuses_the_set() -> None:
    sets, calls = _counting()
    stored = _policies()
    first = sets.get("shop", [freeze(p) for p in stored])
    again = sets.get("shop", [freeze(p) for p in stored])  # new views of the same stored dicts
    assert again is first
    assert calls[0] == len(stored)


def test_a_changed_added_or_removed_policy_rebuilds_the_set() -> None:
    sets, _ = _counting()
    stored = _policies()
    first = sets.get("shop", [freeze(p) for p in stored])
    changed = copy.deepcopy(stored[1])  # the cache replaces an object on every change
    changed["spec"]["nodeSelector"] = {"pool": "z"}
    replaced = [*stored[:1], changed, *stored[2:]]
    second = sets.get("shop", [freeze(p) for p in replaced])
    assert second is not first
    assert second.merge({}, second.select({}, {"app": "web"})).spec["nodeSelector"] == {"pool": "z"}
    third = sets.get("shop", [freeze(p) for p in replaced[:-1]])
    assert third is not second
    fourth = sets.get("shop", [freeze(p) for p in [*replaced, namespaced("shop", "new", podSelector={})]])
    assert fourth is not third
    assert "PodSchedulingPolicy/shop/new" in fourth.refs(fourth.select({}, {}))


def test_namespaces_have_sets_of_their_own() -> None:
    sets, _ = _counting()
    stored = _policies()
    shop = sets.get("shop", [freeze(p) for p in stored])
    other = sets.get("other", [freeze(p) for p in stored[:3]])
    assert other is not shop
    assert sets.get("shop", [freeze(p) for p in stored]) is shop


def test_plain_dicts_and_models_are_never_reused() -> None:
    sets, calls = _counting()
    stored = _policies()
    first = sets.get("shop", stored)
    stored[0]["spec"]["nodeSelector"] = {"pool": "edited-in-place"}
    second = sets.get("shop", stored)
    assert second is not first
    assert calls[0] == 2 * len(stored)
    assert second.merge({}, second.select({}, {})).spec["nodeSelector"] == {"pool": "edited-in-place"}


def test_what_is_remembered_is_bounded_for_every_set_together() -> None:
    memos = Memos(selections=3, merges=2)
    sets = [PolicySet([compile_policy(p) for p in _policies()], memos=memos) for _ in range(3)]
    for number in range(10):
        for policy_set in sets:
            selection = policy_set.select({}, {"app": "web", "n": str(number)})
            assert len(selection.matched) == 3
            assert policy_set.merge({"nodeName": str(number)}, selection).spec["nodeName"] == str(number)
    assert (len(memos.selections), len(memos.merges), len(memos.refs)) == (3, 2, 0)


def test_a_memo_drops_its_oldest_entry_and_never_answers_for_another_owner() -> None:
    memo: Memo[str, int] = Memo(2)
    first, second = object(), object()
    memo.put("a", first, 1)
    memo.put("b", first, 2)
    memo.put("c", first, 3)
    assert (memo.get("a", first), memo.get("b", first), memo.get("c", first)) == (None, 2, 3)
    assert memo.get("b", second) is None  # an id() reused by another object finds nothing


def test_the_oldest_namespace_goes_first() -> None:
    sets, _ = _counting()
    sets.LIMIT = 2
    stored = _policies()
    first = sets.get("one", [freeze(p) for p in stored])
    sets.get("two", [freeze(p) for p in stored])
    sets.get("three", [freeze(p) for p in stored])
    assert sets.get("one", [freeze(p) for p in stored]) is not first
    assert len(sets._sets) == 2


def test_sharing_pod_spec_copies_only_the_way_to_the_spec() -> None:
    deployment: dict[str, Any] = {
        "metadata": {"name": "web", "annotations": {"a": "1"}},
        "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}},
                                             "spec": {"containers": [{"name": "c"}]}}},
    }  # fmt: skip
    before = copy.deepcopy(deployment)
    target = target_for("apps", "Deployment")
    assert target is not None
    result = sharing_pod_spec(deployment, target, {"nodeName": "n1"}, {"b": "2"})
    assert deployment == before
    assert result["spec"]["template"]["spec"] == {"containers": [{"name": "c"}], "nodeName": "n1"}
    assert result["metadata"]["annotations"] == {"a": "1", "b": "2"}
    assert result["spec"]["template"]["spec"]["containers"] is deployment["spec"]["template"]["spec"]["containers"]
    assert result["spec"]["template"]["metadata"] is deployment["spec"]["template"]["metadata"]
    pod = target_for("", "Pod")
    assert pod is not None
    assert sharing_pod_spec({}, pod, {"nodeName": "n1"}) == {"spec": {"nodeName": "n1"}}
