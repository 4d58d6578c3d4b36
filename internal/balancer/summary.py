"""Pod summaries: how many of a target's pods exist, run, and are late to start — the only view of the pods the
placement needs.

A pod counts while it is `Running` or `Pending`; `Succeeded`, `Failed`, `Unknown` and a missing phase are ignored,
as upstream. A `Pending` pod is *late* ("not started within the deadline") once its creation time plus the startup
timeout lies strictly before `now`. Without a fallback policy there is no timeout and no pod is ever late, which is
what upstream's fifty-year deadline amounts to. A terminating pod (`deletionTimestamp` set) is counted by its phase
like any other, as upstream does: it still holds its replica until it is gone.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import PlacementInputError

RUNNING = "Running"
"""Pod phase counted in `total` and `running`."""
PENDING = "Pending"
"""Pod phase counted in `total`, and in `not_started` once late."""


@dataclass(frozen=True, slots=True)
class PodSummary:
    """One target's pods: `total` Running or Pending, `running` of them Running, `not_started` Pending past the
    startup timeout (upstream's `NotStartedWithinDeadline`). `running + not_started <= total` always holds."""

    total: int = 0
    running: int = 0
    not_started: int = 0

    def as_dict(self) -> dict[str, int]:
        """The summary as the mapping `place` also accepts."""
        return {"total": self.total, "running": self.running, "not_started": self.not_started}


@dataclass(frozen=True, slots=True)
class PodState:
    """The part of a pod a summary reads, for callers that keep projections rather than wire dicts."""

    phase: str | None
    created: datetime.datetime | None = None
    """The pod's creationTimestamp (time-zone aware); None means it cannot be late."""


Pod = Mapping[str, Any] | PodState
"""A pod as a wire dict (`status.phase`, `metadata.creationTimestamp`) or a `PodState`."""


def _timeout(startup_timeout_seconds: float | None) -> datetime.timedelta | None:
    if startup_timeout_seconds is None:
        return None
    if isinstance(startup_timeout_seconds, bool) or not isinstance(startup_timeout_seconds, int | float):
        raise PlacementInputError(
            "startup_timeout_seconds", f"must be a number of seconds or None, not {startup_timeout_seconds!r}"
        )
    if startup_timeout_seconds < 0:
        raise PlacementInputError("startup_timeout_seconds", f"must not be negative, is {startup_timeout_seconds}")
    return datetime.timedelta(seconds=startup_timeout_seconds)


def _aware(moment: datetime.datetime, path: str) -> datetime.datetime:
    if moment.tzinfo is None:
        raise PlacementInputError(path, "needs a time zone (naive datetimes are ambiguous)")
    return moment


def _state(pod: Pod, path: str) -> PodState:
    if isinstance(pod, PodState):
        return PodState(pod.phase, None if pod.created is None else _aware(pod.created, f"{path}.created"))
    phase = (pod.get("status") or {}).get("phase")
    stamp = (pod.get("metadata") or {}).get("creationTimestamp")
    if stamp is None or isinstance(stamp, datetime.datetime):
        created = stamp
    else:
        try:
            created = datetime.datetime.fromisoformat(str(stamp))
        except ValueError:
            raise PlacementInputError(
                f"{path}.metadata.creationTimestamp", f"is not an RFC 3339 time: {stamp!r}"
            ) from None
    if created is not None:
        created = _aware(created, f"{path}.metadata.creationTimestamp")
    return PodState(phase if isinstance(phase, str) else None, created)


def summarize_pods(pods: Iterable[Pod], now: datetime.datetime, startup_timeout_seconds: float | None) -> PodSummary:
    """Summarise one target's pods at `now`.

    `startup_timeout_seconds` is the Balancer's `spec.policy.fallback.startupTimeoutSeconds`, or None when it has
    no fallback (no pod is ever late). A Pending pod without a creation time is never late: there is nothing to
    measure the timeout from. Raises `PlacementInputError` for a negative timeout, a naive `now` or creation time,
    or a creationTimestamp that does not parse.
    """
    return _summarize(pods, now, _timeout(startup_timeout_seconds), "pods")


def _summarize(
    pods: Iterable[Pod], now: datetime.datetime, timeout: datetime.timedelta | None, path: str
) -> PodSummary:
    now = _aware(now, "now")
    total = running = not_started = 0
    for position, pod in enumerate(pods):
        state = _state(pod, f"{path}[{position}]")
        if state.phase == RUNNING:
            total += 1
            running += 1
        elif state.phase == PENDING:
            total += 1
            if timeout is not None and state.created is not None and state.created + timeout < now:
                not_started += 1
    return PodSummary(total, running, not_started)


def summarize_targets(
    pods_by_target: Mapping[str, Iterable[Pod]], now: datetime.datetime, startup_timeout_seconds: float | None
) -> dict[str, PodSummary]:
    """`summarize_pods` for each target's pods, by target name (sorted), ready to pass to `place`."""
    timeout = _timeout(startup_timeout_seconds)
    return {
        name: _summarize(pods_by_target[name], now, timeout, f"pods_by_target[{name!r}]")
        for name in sorted(pods_by_target)
    }
