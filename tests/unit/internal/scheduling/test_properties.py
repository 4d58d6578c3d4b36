"""Properties of the merge over random pod specs and policies: idempotence (docs/design.md, difference
28), untouched inputs, and first writer wins."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.scheduling import APPLIED, UNCHANGED, merge_detailed, merge_policies

from .builders import PREFERRED, REQUIRED, req

_KEYS = st.sampled_from("abc")
_REQUIREMENT = st.one_of(
    st.builds(
        lambda k, op, vs: req(k, op, *vs),
        _KEYS,
        st.sampled_from(["In", "NotIn"]),
        st.lists(st.sampled_from("xyz"), min_size=1, max_size=2),
    ),
    st.builds(req, _KEYS, st.sampled_from(["Exists", "DoesNotExist"])),
    st.builds(req, _KEYS, st.sampled_from(["Gt", "Lt"]), st.sampled_from(["1", "3"])),
)
_TERM = st.builds(
    lambda expressions, fields: {
        **({"matchExpressions": expressions} if expressions else {}),
        **({"matchFields": fields} if fields else {}),
    },
    st.lists(_REQUIREMENT, max_size=3),
    st.lists(st.builds(lambda v: req("metadata.name", "In", v), st.sampled_from(["n1", "n2"])), max_size=1),
)
_POD_TERM = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}
_AFFINITY = st.fixed_dictionaries(
    {},
    optional={
        "nodeAffinity": st.fixed_dictionaries(
            {},
            optional={
                REQUIRED: st.builds(lambda terms: {"nodeSelectorTerms": terms}, st.lists(_TERM, max_size=3)),
                PREFERRED: st.lists(
                    st.builds(lambda w, t: {"weight": w, "preference": t}, st.sampled_from([1, 50]), _TERM), max_size=2
                ),
            },
        ),
        "podAffinity": st.fixed_dictionaries({}, optional={REQUIRED: st.lists(st.just(_POD_TERM), max_size=2)}),
        "podAntiAffinity": st.fixed_dictionaries(
            {},
            optional={
                PREFERRED: st.lists(
                    st.builds(lambda w: {"weight": w, "podAffinityTerm": _POD_TERM}, st.sampled_from([1, 2])),
                    max_size=2,
                )
            },
        ),
    },
)
_TOLERATIONS = st.lists(
    st.sampled_from(
        [
            {"key": "a", "operator": "Exists"},
            {"key": "a", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "b", "operator": "Equal", "value": "x", "effect": "NoExecute", "tolerationSeconds": 30},
            {"operator": "Exists"},
        ]
    ),
    max_size=3,
)
_FIELDS = {
    "nodeName": st.sampled_from(["", "n1", "n2"]),
    "schedulerName": st.sampled_from(["", "default-scheduler", "s1", "s2"]),
    "nodeSelector": st.dictionaries(_KEYS, st.sampled_from(["1", "2"]), max_size=3),
    "tolerations": _TOLERATIONS,
    "affinity": _AFFINITY,
}
_POD_SPECS = st.fixed_dictionaries({"containers": st.just([{"name": "c", "image": "app"}])}, optional=_FIELDS)
_POLICY_SPECS = st.fixed_dictionaries({}, optional={**_FIELDS, "podSelector": st.just({})})
_POLICIES = st.lists(_POLICY_SPECS, max_size=4)


@given(_POD_SPECS, _POLICIES)
def test_merging_the_same_policies_into_the_merged_spec_changes_nothing(
    pod: dict[str, Any], policies: list[dict[str, Any]]
) -> None:
    once = merge_detailed(pod, policies)
    again = merge_detailed(once.spec, policies)
    assert again.spec == once.spec
    assert not again.changed
    assert [o.result for o in again.outcomes] == [UNCHANGED if o.result == APPLIED else o.result for o in once.outcomes]


@given(_POD_SPECS, _POLICIES)
def test_the_inputs_are_never_mutated(pod: dict[str, Any], policies: list[dict[str, Any]]) -> None:
    before = copy.deepcopy((pod, policies))
    merged = merge_policies(pod, policies)
    assert (pod, policies) == before
    merged.setdefault("nodeSelector", {})["touched"] = "yes"  # the result is the caller's own
    merged.setdefault("tolerations", []).append({"operator": "Exists"})
    assert (pod, policies) == before


def _unset(name: Any, default: str = "") -> bool:
    return not name or name == default


@given(_POD_SPECS, _POLICIES)
def test_the_first_writer_wins_for_node_name_scheduler_name_and_each_node_selector_key(
    pod: dict[str, Any], policies: list[dict[str, Any]]
) -> None:
    result = merge_detailed(pod, policies)
    writers = [pod] + [p for p, o in zip(policies, result.outcomes, strict=True) if o.result in (APPLIED, UNCHANGED)]
    node_names = [w["nodeName"] for w in writers if w.get("nodeName")]
    assert result.spec.get("nodeName", "") == (node_names[0] if node_names else pod.get("nodeName", ""))
    schedulers = [w["schedulerName"] for w in writers if not _unset(w.get("schedulerName"), "default-scheduler")]
    assert result.spec.get("schedulerName", "") == (schedulers[0] if schedulers else pod.get("schedulerName", ""))
    expected: dict[str, str] = {}
    for writer in writers:
        for key, value in (writer.get("nodeSelector") or {}).items():
            expected.setdefault(key, value)
    assert result.spec.get("nodeSelector", {}) == expected
    assert result.spec["containers"] == pod["containers"]
