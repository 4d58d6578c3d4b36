"""What `place` refuses, naming the value, and what it accepts on purpose."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.balancer import PlacementInputError, PodSummary, Target, place

from .builders import pods, priority, proportional, target

TWO = [target("a"), target("b")]


@pytest.mark.parametrize(
    ("replicas", "targets", "policy", "summaries", "path", "message"),
    [
        (1, TWO, {"name": "random"}, None, "policy.name", "policy not supported: 'random'"),
        (1, TWO, {"target_order": ["a"]}, None, "policy.name", "policy not supported: None"),
        (1, TWO, priority("a", "c"), None, "policy.target_order[1]", "'c' is not the name of a target"),
        (1, TWO, priority("a", "b", "a"), None, "policy.target_order[2]", "'a' is listed twice"),
        (1, TWO, {"name": "priority"}, None, "policy.target_order", "missing"),
        (1, TWO, {"name": "priority", "target_order": "ab"}, None, "policy.target_order", "must be a list"),
        (1, TWO, {"name": "proportional"}, None, "policy.target_proportions", "missing"),
        (1, TWO, proportional(a=1, b=-1), None, "policy.target_proportions['b']", "must not be negative"),
        (1, TWO, proportional(a=1, gone=-1), None, "policy.target_proportions['gone']", "must not be negative"),
        (-1, TWO, priority("a"), None, "replicas", "must not be negative, is -1"),
        (True, TWO, priority("a"), None, "replicas", "must be a whole number"),
        (1.5, TWO, priority("a"), None, "replicas", "must be a whole number"),
        (1, [target("a", -1)], priority("a"), None, "targets[0].min_replicas", "must not be negative"),
        (1, [target("a"), target("b", 0, -2)], priority("a"), None, "targets[1].max_replicas", "must not be negative"),
        (1, [target("a", 3, 2)], priority("a"), None, "targets[0].min_replicas", "3 is more than max_replicas 2"),
        (1, [target("a"), target("a")], priority("a"), None, "targets[1].name", "'a' names a second target"),
        (1, [{"min_replicas": 1}], priority(), None, "targets[0].name", "must be a non-empty string"),
        (1, ["a"], priority(), None, "targets[0]", "must be a mapping"),
        (1, TWO, priority("a"), {"a": {"total": -1}}, "summaries['a'].total", "must not be negative"),
        (1, TWO, priority("a"), {"b": pods(2, 2, 1)}, "summaries['b']", "add up to more than total 2"),
        (1, TWO, priority("a"), {"a": 3}, "summaries['a']", "must be a mapping"),
    ],
)
def test_bad_input_raises_a_value_error_naming_what_is_wrong(
    replicas: Any, targets: Any, policy: Any, summaries: Any, path: str, message: str
) -> None:
    with pytest.raises(PlacementInputError) as caught:
        place(replicas, targets, policy, summaries)
    assert isinstance(caught.value, ValueError)
    assert caught.value.path == path
    assert message in caught.value.message
    assert str(caught.value).startswith(f"{path}: ")


def test_a_bad_input_places_nothing_even_when_the_bad_value_would_not_matter() -> None:
    with pytest.raises(PlacementInputError, match="is not the name of a target"):
        place(0, TWO, priority("a", "b", "typo"))


def test_absent_bounds_mean_zero_and_unbounded_and_target_objects_are_accepted() -> None:
    result = place(5, [{"name": "a"}, Target("b", 1, 1)], priority("a", "b"))
    assert result.placement == {"a": 4, "b": 1}


def test_a_target_without_a_summary_has_no_pods_and_unknown_summary_names_are_ignored() -> None:
    summaries: dict[str, Any] = {"gone": {"total": 3, "not_started": 3}, "b": {"total": 1}}
    assert place(2, TWO, priority("a", "b"), summaries).placement == {"a": 2, "b": 0}
    assert place(2, TWO, priority("a", "b"), {"a": PodSummary()}) == place(2, TWO, priority("a", "b"))


def test_extra_policy_keys_are_ignored() -> None:
    policy = {**priority("b", "a"), "target_proportions": {"a": 1}}
    assert place(2, TWO, policy).placement == {"a": 0, "b": 2}
