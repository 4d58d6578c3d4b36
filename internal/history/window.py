"""The retention window: where `first_seen` goes when a cycle is written (docs/design.md, difference 12)."""

from __future__ import annotations


def next_first_seen(first_seen_ms: int | None, *, kept: int, at_ms: int, cutoff_ms: int | None) -> int:
    """Return a series' `first_seen` after a cycle at `at_ms`, given the samples `kept` from before the cycle.

    Without retention (`cutoff_ms` is `None`) it is set once and never moves, as the Go operator's SETNX. With
    retention it never lies before the window: when samples from before the cycle remain, it moves up to
    `cutoff_ms` (a busy series whose reservoir holds only minutes still counts its whole window for readiness);
    when none remain (new series, or every sample expired), the series starts over at `at_ms`.
    Both backends, and the Redis Lua script, apply exactly this rule.
    """
    if cutoff_ms is None:
        return at_ms if first_seen_ms is None else first_seen_ms
    if first_seen_ms is not None and first_seen_ms >= cutoff_ms:
        return first_seen_ms
    return at_ms if kept == 0 else cutoff_ms
