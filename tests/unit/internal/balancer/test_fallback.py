"""Fallback: the replicas of late pods are placed once more on other targets; how many a late target passes on is
`not_started + placement - total` when positive, so surplus old pods are expected to go first."""

from __future__ import annotations

from ballast.internal.balancer import passed_on, place

from .builders import pods, priority, proportional, target


def test_passed_on_counts_late_pods_within_the_placement_plus_replicas_not_created_yet() -> None:
    assert passed_on(pods(4, 3, 1), 4) == 1  # the late pod
    assert passed_on(pods(2, 1, 1), 4) == 3  # the late pod and 2 pods still to come, presumably late too
    assert passed_on(pods(15, 13, 2), 10) == 0  # 5 surplus old pods go first, the late ones hopefully among them
    assert passed_on(pods(12, 9, 3), 10) == 1
    assert passed_on(pods(0), 5) == 0  # no late pods: nothing, however many are still to come


def test_priority_passes_a_late_targets_replicas_to_the_next_in_the_order() -> None:
    targets = [target("nginx-1", 1, 7), target("nginx-2", 1)]
    result = place(5, targets, priority("nginx-1", "nginx-2"), {"nginx-1": pods(4, 3, 1)})
    assert result.placement == {"nginx-1": 4, "nginx-2": 2}  # the late target keeps its own placement
    assert result.fallback == {"nginx-1": 1}
    assert result.overflow == 0


def test_priority_fallback_skips_a_full_target_and_cascades_through_late_ones() -> None:
    targets = [target("a"), target("b", high=1), target("c"), target("d")]
    summaries = {"a": pods(3, 1, 2), "c": pods(0, 0, 0)}
    result = place(3, targets, priority("a", "b", "c", "d"), summaries)
    assert result.placement == {"a": 3, "b": 1, "c": 1, "d": 0}
    late_c = {"a": pods(3, 1, 2), "c": pods(1, 0, 1)}
    cascaded = place(3, targets, priority("a", "b", "c", "d"), late_c)
    assert cascaded.placement == {"a": 3, "b": 1, "c": 1, "d": 1}  # c got 1, its late pod goes on to d
    assert cascaded.fallback == {"a": 2, "c": 1}


def test_priority_fallback_of_the_last_target_overflows() -> None:
    result = place(4, [target("a", high=2), target("b")], priority("a", "b"), {"b": pods(2, 0, 2)})
    assert result.placement == {"a": 2, "b": 2}
    assert (result.fallback, result.overflow) == ({"b": 2}, 2)


def test_surplus_old_pods_go_first_so_there_is_no_fallback() -> None:
    targets = [target("a", high=10), target("b")]
    summaries = {"a": pods(15, 13, 2)}
    by_priority = place(10, targets, priority("a", "b"), summaries)
    assert by_priority.placement == {"a": 10, "b": 0}
    assert by_priority.fallback == {}
    by_weight = place(10, targets, proportional(a=1, b=0), summaries)
    assert by_weight.placement == {"a": 10, "b": 0}
    assert by_weight.fallback == {}


def test_fallback_happens_even_when_minimums_are_missing() -> None:
    result = place(4, [target("a", 3), target("b", 3)], priority("a", "b"), {"a": pods(3, 1, 2)})
    assert result.placement == {"a": 3, "b": 5}
    assert (result.missing, result.overflow, result.fallback) == (2, 0, {"a": 2})


def test_proportional_fallback_goes_by_weight_to_targets_without_late_pods_only() -> None:
    targets = [target("a"), target("b"), target("c")]
    plain = place(6, targets, proportional(a=1, b=1, c=1))
    assert plain.placement == {"a": 2, "b": 2, "c": 2}
    result = place(6, targets, proportional(a=1, b=1, c=1), {"a": pods(2, 0, 2)})
    assert result.placement == {"a": 2, "b": 3, "c": 3}
    assert result.fallback == {"a": 2}
    blocked = place(6, targets, proportional(a=1, b=1, c=1), {"a": pods(2, 0, 2), "b": pods(2, 1, 1)})
    assert blocked.placement == {"a": 2, "b": 2, "c": 5}  # b passes 1 on and takes none
    assert blocked.fallback == {"a": 2, "b": 1}


def test_proportional_fallback_overflows_when_every_target_without_late_pods_is_full() -> None:
    targets = [target("a"), target("b", high=3)]
    result = place(4, targets, proportional(a=1, b=1), {"a": pods(2, 0, 2)})
    assert result.placement == {"a": 2, "b": 3}
    assert (result.fallback, result.overflow) == ({"a": 2}, 1)
    everyone_late = place(4, targets, proportional(a=1, b=1), {"a": pods(2, 0, 2), "b": pods(2, 0, 1)})
    assert everyone_late.placement == {"a": 2, "b": 2}
    assert everyone_late.overflow == 3


def test_proportional_fallback_never_reaches_a_target_without_a_weight() -> None:
    targets = [target("a"), target("b"), target("spare", 1)]
    result = place(4, targets, proportional(a=1, b=1), {"a": pods(2, 0, 2)})
    assert result.placement == {"a": 2, "b": 3, "spare": 1}  # a 2, b 1, then a's 2 to b alone


def test_proportional_has_no_fallback_when_the_first_pass_overflowed() -> None:
    targets = [target("a", high=2), target("b", high=2)]
    result = place(6, targets, proportional(a=1, b=1), {"a": pods(2, 0, 2)})
    assert result.placement == {"a": 2, "b": 2}
    assert (result.overflow, result.fallback) == (2, {})


def test_without_late_pods_the_summaries_change_nothing() -> None:
    targets = [target("a", 1, 4), target("b")]
    for policy in (priority("a", "b"), proportional(a=2, b=1)):
        alone = place(7, targets, policy)
        assert place(7, targets, policy, {"a": pods(9, 9), "b": pods(1, 0)}) == alone
