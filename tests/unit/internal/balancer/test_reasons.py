"""`explain`: the reasons behind each target's replicas, as `ballast balancer status` prints them."""

from __future__ import annotations

from ballast.internal.balancer import (
    BLOCKED,
    FALLBACK,
    FULL,
    LATE,
    MINIMUM,
    MISSING,
    OVERFLOW,
    SURPLUS_FIRST,
    UNRANKED,
    Explanation,
    explain,
    place,
)

from .builders import pods, priority, proportional, target


def _codes(explanation: Explanation) -> dict[str, list[str]]:
    return {t.name: [r.code for r in t.reasons] for t in explanation.targets}


def test_a_late_target_and_the_one_holding_its_replicas_say_so() -> None:
    targets = [target("nginx-1", 1, 7), target("nginx-2", 1)]
    summaries = {"nginx-1": pods(4, 3, 1)}
    explanation = explain(5, targets, priority("nginx-1", "nginx-2"), summaries)
    assert explanation.placement == place(5, targets, priority("nginx-1", "nginx-2"), summaries)
    assert _codes(explanation) == {"nginx-1": [LATE], "nginx-2": [FALLBACK]}
    assert explanation.lines() == [
        "nginx-1: 4 (bounds 1..7; pods 4, running 3, late 1)",
        "  - 1 pod Pending past the startup timeout: 1 replica placed on other targets as well",
        "nginx-2: 2 (bounds 1..∞; pods 0, running 0, late 0)",
        "  - 1 replica on behalf of targets with late pods",
    ]
    assert explanation.problems == ()


def test_surplus_old_pods_explain_why_there_is_no_fallback() -> None:
    explanation = explain(10, [target("a", high=10), target("b")], priority("a", "b"), {"a": pods(15, 13, 2)})
    assert _codes(explanation) == {"a": [SURPLUS_FIRST, FULL], "b": []}
    assert "the surplus old pods are expected to go first" in str(explanation.targets[0].reasons[0])


def test_full_minimum_and_unranked_targets() -> None:
    targets = [target("a", high=2), target("b", 1), target("c", 3)]
    assert _codes(explain(6, targets, priority("a", "b"))) == {"a": [FULL], "b": [MINIMUM], "c": [UNRANKED]}
    reasons = explain(3, targets, proportional(a=1, b=1)).targets[2].reasons
    assert [str(r) for r in reasons] == ["no proportion above 0: gets only its minimum (3)"]


def test_proportional_late_targets_are_blocked_and_may_have_no_fallback() -> None:
    targets = [target("a"), target("b", high=3)]
    explanation = explain(4, targets, proportional(a=1, b=1), {"a": pods(2, 0, 2)})
    assert _codes(explanation) == {"a": [LATE, BLOCKED], "b": [FALLBACK, FULL]}
    assert [r.code for r in explanation.problems] == [OVERFLOW]
    full = explain(6, [target("a", high=2), target("b", high=2)], proportional(a=1, b=1), {"a": pods(2, 0, 2)})
    assert "but no fallback: every target was full already" in str(full.targets[0].reasons[0])


def test_a_late_target_outside_the_order_passes_nothing_on() -> None:
    explanation = explain(3, [target("a", 2), target("b")], priority("b"), {"a": pods(2, 0, 2)})
    assert str(explanation.targets[0].reasons[0]).endswith("but no fallback: it is not in targetOrder")


def test_missing_and_overflow_are_problems_of_the_balancer() -> None:
    missing = explain(5, [target("a", 3), target("b", 4)], priority("a", "b"))
    assert [str(p) for p in missing.problems] == [
        "missing 2: the minimums add up to 7, more than the 5 replicas asked for"
    ]
    assert [p.code for p in missing.problems] == [MISSING]
    overflow = explain(7, [target("a", 1, 2), target("b", high=2)], priority("a", "b"))
    assert overflow.lines()[-1].startswith("overflow 3: 3 replicas fit in no target")
