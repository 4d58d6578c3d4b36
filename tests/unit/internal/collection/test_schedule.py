"""Which MetricsSources a cycle collects together (docs/design.md, difference 19), and when a source's own
reconcile only requeues."""

from __future__ import annotations

from ballast.internal.collection import TOGETHER_WINDOW, Polled, PollSchedule

METRICS = Polled("metrics", "u-metrics", 1, 300.0)
KUBELET = Polled("kubelet", "u-kubelet", 1, 300.0)


def test_a_source_due_within_the_window_is_taken_with_the_running_cycle_and_its_own_reconcile_requeues() -> None:
    schedule = PollSchedule()
    schedule.collected(METRICS, [], at=0.0)
    schedule.collected(KUBELET, [], at=0.002)  # its own first cycle, a moment later
    assert schedule.due_with(METRICS, [METRICS, KUBELET], now=300.0) == [KUBELET]

    schedule.collected(METRICS, [KUBELET], at=300.0)
    assert schedule.remaining(KUBELET, now=300.002) == 299.998  # taken: the rest of its interval
    assert schedule.remaining(METRICS, now=300.0) is None  # a running source's own reconcile is never skipped
    assert schedule.due_with(METRICS, [KUBELET], now=600.0) == [KUBELET]  # aligned from then on


def test_a_source_is_not_taken_early_beyond_the_window_nor_unknown_nor_changed() -> None:
    schedule = PollSchedule()
    schedule.collected(METRICS, [], at=0.0)
    schedule.collected(KUBELET, [], at=100.0)
    assert schedule.due_with(METRICS, [KUBELET], now=300.0) == []  # due at 400 s: a third of its interval early

    schedule.collected(KUBELET, [], at=300.0 * TOGETHER_WINDOW - 1)  # due 29 s after the running cycle
    assert schedule.due_with(METRICS, [KUBELET], now=300.0) == [KUBELET]  # just within the window
    assert schedule.due_with(METRICS, [Polled("new", "u-new", 1, 300.0)], now=300.0) == []  # never collected here
    assert schedule.due_with(METRICS, [KUBELET._replace(generation=2)], now=300.0) == []  # its spec changed
    assert schedule.due_with(METRICS, [KUBELET._replace(uid="u-again")], now=300.0) == []  # deleted and recreated


def test_sources_of_different_intervals_are_never_collected_together() -> None:
    schedule = PollSchedule()
    fast = Polled("fast", "u-fast", 1, 60.0)
    schedule.collected(METRICS, [], at=0.0)
    schedule.collected(fast, [], at=0.0)
    assert schedule.due_with(fast, [METRICS], now=300.0) == []  # due at this very moment, and still its own
    assert schedule.due_with(METRICS, [fast], now=300.0) == []


def test_a_taken_source_that_changed_or_is_forgotten_is_collected_at_once() -> None:
    schedule = PollSchedule()
    schedule.collected(METRICS, [KUBELET], at=0.0)
    assert schedule.remaining(KUBELET._replace(generation=2), now=0.5) is None
    assert schedule.remaining(KUBELET._replace(uid="u-again"), now=0.5) is None
    assert schedule.remaining(KUBELET, now=0.5) == 299.5
    assert schedule.remaining(KUBELET, now=300.0 - 300.0 * TOGETHER_WINDOW) is None  # due again
    schedule.forget("kubelet")
    assert schedule.remaining(KUBELET, now=0.5) is None
