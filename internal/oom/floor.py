"""The memory-limit floor OOM kills set: VPA's bump applied to the limit at OOM, bounded.

    settings = OOMSettings.from_spec(policy.spec.with_defaults())
    state = record(previous, kills, settings, now=now, ceiling=largest_allocatable)
    state.floor, state.floor_until, state.repeated

The rule (docs/design.md, difference 62): the floor is `max(limit + minBump, limit × bumpRatio)` of the highest
limit a kill happened at inside `window` — VPA's recommender applies the same shape to the memory at OOM
(`--oom-bump-up-ratio=1.2`, `--oom-min-bump-up-bytes=100Mi`). The state is replayed from the kills kept, oldest
first, so it is the same whoever computes it and whenever:

- a kill at a limit below the floor (a pod admitted before the raise) is counted and raises nothing, so many
  kills inside one resize interval raise the floor once;
- a kill at or above the floor raises it, up to `maxKills` raises per window; one more such kill means memory
  keeps growing past every raise (a leak): raising stops and the state is `repeated` (`OOMKillsRepeated`);
- the floor never exceeds `maxLimit` (twice the lowest limit killed in the window when omitted) nor `ceiling`
  (the largest allocatable memory of the profile's nodes, difference 25's bound);
- a floor lasts `window` after the kill that last raised it; kills older than `window` are forgotten.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from ballast.api.ballast.v1.policyspec import (
    DEFAULT_OOM_BUMP_RATIO,
    DEFAULT_OOM_MAX_KILLS,
    DEFAULT_OOM_MAX_LIMIT_FACTOR,
    DEFAULT_OOM_MIN_BUMP,
    DEFAULT_OOM_WINDOW,
    ResourcePolicySpec,
)
from ballast.internal.quantity import to_units
from ballast.internal.stats import parse_duration

from .kills import ObservedKill

KEPT_KILLS = 16
"""Kills kept per container (the newest): enough to replay `maxKills` (at most 10) raises."""


@dataclass(frozen=True, slots=True)
class OOMSettings:
    """A policy's `behaviors.oom`, parsed."""

    enabled: bool = True
    bump_ratio: Decimal = Decimal(DEFAULT_OOM_BUMP_RATIO)
    min_bump: int = 100 * 2**20
    window: datetime.timedelta = datetime.timedelta(hours=24)
    max_limit: int | None = None
    max_kills: int = DEFAULT_OOM_MAX_KILLS

    @classmethod
    def from_spec(cls, spec: ResourcePolicySpec) -> OOMSettings:
        """The settings of `spec` (defaults filled in here too). Raises ValueError naming a bad value."""
        oom = spec.with_defaults().behaviors.oom  # type: ignore[union-attr]  # with_defaults fills behaviors.oom
        assert oom is not None
        return cls(
            enabled=bool(oom.enabled),
            bump_ratio=Decimal(oom.bump_ratio or DEFAULT_OOM_BUMP_RATIO),
            min_bump=to_units(oom.min_bump or DEFAULT_OOM_MIN_BUMP, "memory"),
            window=datetime.timedelta(microseconds=parse_duration(oom.window or DEFAULT_OOM_WINDOW) // 1000),
            max_limit=to_units(oom.max_limit, "memory") if oom.max_limit else None,
            max_kills=int(oom.max_kills or DEFAULT_OOM_MAX_KILLS),
        )

    def bump(self, limit: int) -> int:
        """`max(limit + minBump, limit × bumpRatio)` in whole bytes (rounded up)."""
        scaled = int((Decimal(limit) * self.bump_ratio).to_integral_value(rounding=ROUND_CEILING))
        return max(limit + self.min_bump, scaled)


@dataclass(frozen=True, slots=True)
class Kill:
    """A kill as the status keeps it."""

    pod: str
    namespace: str
    uid: str
    finished_at: datetime.datetime
    limit: int

    @property
    def key(self) -> tuple[str, datetime.datetime]:
        return (self.uid or f"{self.namespace}/{self.pod}", self.finished_at)


@dataclass(frozen=True, slots=True)
class OOMState:
    """One container's kills in the window and what they set."""

    kills: tuple[Kill, ...] = ()
    floor: int | None = None
    floor_until: datetime.datetime | None = None
    cap: int | None = None
    repeated: bool = False
    new: tuple[Kill, ...] = field(default=())
    """The kills this `record` call added (for events and metrics)."""

    @property
    def namespaces(self) -> list[str]:
        return sorted({kill.namespace for kill in self.kills})

    @property
    def last(self) -> Kill | None:
        return self.kills[-1] if self.kills else None


def replay(kills: Sequence[Kill], settings: OOMSettings, *, ceiling: int | None) -> OOMState:
    """The floor, its end and whether raising stopped, from `kills` (oldest first) alone."""
    if not kills:
        return OOMState()
    cap = settings.max_limit or DEFAULT_OOM_MAX_LIMIT_FACTOR * min(kill.limit for kill in kills)
    if ceiling is not None:
        cap = min(cap, ceiling)
    floor: int | None = None
    until: datetime.datetime | None = None
    raises = 0
    repeated = False
    for kill in kills:
        if floor is not None and kill.limit < floor:
            continue  # killed at a limit set before the raise: the floor already answers it
        if raises >= settings.max_kills:
            repeated = True
            continue
        floor = min(cap, max(floor or 0, settings.bump(kill.limit)))
        until = kill.finished_at + settings.window
        raises += 1
    return OOMState(tuple(kills), floor, until, cap, repeated)


def record(
    kept: Iterable[Kill],
    observed: Iterable[ObservedKill],
    settings: OOMSettings,
    *,
    now: datetime.datetime,
    ceiling: int | None,
) -> OOMState:
    """The state after adding `observed` kills to the `kept` ones: kills older than the window dropped, each kill
    counted once (by pod UID and time), the newest `KEPT_KILLS` kept, then `replay`."""
    start = now - settings.window
    kills = {kill.key: kill for kill in kept if kill.finished_at > start}
    oldest_kept = min((kill.finished_at for kill in kills.values()), default=None)
    full = len(kills) >= KEPT_KILLS
    new: list[Kill] = []
    for seen in observed:
        kill = Kill(seen.pod, seen.namespace, seen.uid, seen.finished_at, seen.limit)
        if kill.finished_at <= start or kill.key in kills:
            continue
        if full and oldest_kept is not None and kill.finished_at < oldest_kept:
            continue  # older than every kill kept: it was counted, then dropped for newer ones
        kills[kill.key] = kill
        new.append(kill)
    ordered = sorted(kills.values(), key=lambda kill: (kill.finished_at, kill.key))[-KEPT_KILLS:]
    state = replay(ordered, settings, ceiling=ceiling)
    return OOMState(state.kills, state.floor, state.floor_until, state.cap, state.repeated, tuple(new))
