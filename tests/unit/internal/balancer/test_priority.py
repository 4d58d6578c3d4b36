"""The priority policy: minimums first, then each target of targetOrder filled up to its maximum in turn."""

from __future__ import annotations

from ballast.internal.balancer import place

from .builders import pods, priority, target


def test_the_proposals_example_fills_the_first_target_after_the_minimums() -> None:
    targets = [target("nginx-1", 1, 7), target("nginx-2", 1)]
    result = place(5, targets, priority("nginx-1", "nginx-2"))
    assert result.placement == {"nginx-1": 4, "nginx-2": 1}
    assert (result.missing, result.overflow, result.fallback) == (0, 0, {})


def test_each_target_is_filled_to_its_maximum_before_the_next_in_target_order() -> None:
    targets = [target("a", high=3), target("b", high=4), target("c")]
    assert place(10, targets, priority("a", "b", "c")).placement == {"a": 3, "b": 4, "c": 3}
    assert place(10, targets, priority("c", "a", "b")).placement == {"a": 0, "b": 0, "c": 10}
    assert place(5, targets, priority("b", "a", "c")).placement == {"a": 1, "b": 4, "c": 0}


def test_a_minimum_counts_towards_the_maximum() -> None:
    targets = [target("a", 2, 3), target("b", 1)]
    assert place(6, targets, priority("a", "b")).placement == {"a": 3, "b": 3}


def test_the_placement_has_every_target_in_name_order_zeros_included() -> None:
    result = place(2, [target("z"), target("m"), target("a")], priority("z", "m", "a"))
    assert list(result.placement.items()) == [("a", 0), ("m", 0), ("z", 2)]


def test_a_target_missing_from_target_order_gets_only_its_minimum() -> None:
    targets = [target("a", high=2), target("b"), target("spare", 2)]
    result = place(10, targets, priority("a", "b"))
    assert result.placement == {"a": 2, "b": 6, "spare": 2}
    assert result.overflow == 0
    full = place(10, [target("a", high=2), target("spare", 1)], priority("a"))
    assert full.placement == {"a": 2, "spare": 1}
    assert full.overflow == 7  # spare is not a destination, even for overflow


def test_minimums_above_the_request_are_missing_and_still_placed() -> None:
    result = place(5, [target("a", 3), target("b", 4)], priority("a", "b"))
    assert result.placement == {"a": 3, "b": 4}
    assert (result.missing, result.overflow) == (2, 0)
    assert result.total == 7


def test_replicas_beyond_every_maximum_overflow() -> None:
    result = place(7, [target("a", 1, 2), target("b", high=2)], priority("a", "b"))
    assert result.placement == {"a": 2, "b": 2}
    assert (result.missing, result.overflow) == (0, 3)


def test_zero_replicas_places_only_the_minimums_which_are_then_missing() -> None:
    result = place(0, [target("a", 1), target("b")], priority("a", "b"))
    assert result.placement == {"a": 1, "b": 0}
    assert (result.missing, result.overflow) == (1, 0)
    assert place(0, [target("a"), target("b")], priority("a", "b")).placement == {"a": 0, "b": 0}


def test_no_targets_leaves_everything_overflowing() -> None:
    result = place(3, [], priority())
    assert (result.placement, result.missing, result.overflow) == ({}, 0, 3)


def test_a_target_with_maximum_zero_takes_nothing() -> None:
    assert place(4, [target("a", 0, 0), target("b")], priority("a", "b")).placement == {"a": 0, "b": 4}


def test_a_late_pod_in_a_minimum_only_target_outside_the_order_is_not_passed_on() -> None:
    result = place(3, [target("a", 2), target("b")], priority("b"), {"a": pods(2, 0, 2)})
    assert result.placement == {"a": 2, "b": 1}
    assert result.fallback == {}
