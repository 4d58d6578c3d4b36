"""The OOM floor: VPA's bump of the limit at OOM, bounded by maxLimit, maxKills and the ceiling, lasting a window."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from ballast.api.ballast.v1 import Behaviors, OOMBehavior, ResourcePolicySpec
from ballast.internal.oom import KEPT_KILLS, Kill, ObservedKill, OOMSettings, record, replay

MI = 2**20
T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)


def kill(minutes: float, limit: int, *, pod: str = "app-1", namespace: str = "team-a", uid: str = "") -> ObservedKill:
    return ObservedKill("app", pod, namespace, uid or pod, T0 + datetime.timedelta(minutes=minutes), limit)


def stored(seen: ObservedKill) -> Kill:
    return Kill(seen.pod, seen.namespace, seen.uid, seen.finished_at, seen.limit)


def test_settings_default_to_vpa_shape_and_on() -> None:
    settings = OOMSettings.from_spec(ResourcePolicySpec())
    assert settings.enabled is True
    assert settings.bump_ratio == Decimal("1.2")
    assert settings.min_bump == 100 * MI
    assert settings.window == datetime.timedelta(hours=24)
    assert settings.max_kills == 3
    assert settings.max_limit is None


def test_settings_read_the_policy() -> None:
    oom = OOMBehavior(enabled=False, bump_ratio="1.5", min_bump="50Mi", window="2h", max_limit="2Gi", max_kills=5)
    settings = OOMSettings.from_spec(ResourcePolicySpec(behaviors=Behaviors(oom=oom)))
    assert (settings.enabled, settings.bump_ratio, settings.min_bump) == (False, Decimal("1.5"), 50 * MI)
    assert (settings.window, settings.max_limit, settings.max_kills) == (datetime.timedelta(hours=2), 2048 * MI, 5)


@pytest.mark.parametrize(
    ("limit", "floor"),
    [
        (256 * MI, 356 * MI),  # small: the minimum bump wins (256 Mi + 100 Mi > 307.2 Mi)
        (1024 * MI, 1288490189),  # large: the ratio wins, 1.2 × 1 Gi rounded up to a byte
        (500 * MI, 600 * MI),  # the two meet
    ],
)
def test_bump_is_the_larger_of_ratio_and_minimum(limit: int, floor: int) -> None:
    assert OOMSettings().bump(limit) == max(limit + 100 * MI, -(-limit * 12 // 10))
    assert OOMSettings().bump(limit) == floor


def test_policy_ratio_and_minimum_are_used() -> None:
    settings = OOMSettings(bump_ratio=Decimal(2), min_bump=10 * MI)
    assert settings.bump(100 * MI) == 200 * MI
    assert OOMSettings(min_bump=500 * MI).bump(1024 * MI) == 1524 * MI


def test_a_kill_sets_the_floor_for_a_window() -> None:
    state = record([], [kill(0, 500 * MI)], OOMSettings(), now=T0, ceiling=None)
    assert state.floor == 600 * MI
    assert state.floor_until == T0 + datetime.timedelta(hours=24)
    assert len(state.new) == 1
    assert not state.repeated


def test_kills_at_the_old_limit_raise_the_floor_once() -> None:
    # Four pods killed at the same limit inside one resize interval: one raise, four kills counted.
    kills = [kill(i, 500 * MI, pod=f"app-{i}") for i in range(4)]
    state = record([], kills, OOMSettings(), now=T0 + datetime.timedelta(minutes=5), ceiling=None)
    assert state.floor == 600 * MI
    assert len(state.kills) == 4
    assert not state.repeated


def test_a_kill_below_the_floor_raises_nothing() -> None:
    first = record([], [kill(0, 500 * MI)], OOMSettings(), now=T0, ceiling=None)
    later = record(first.kills, [kill(30, 400 * MI, pod="old")], OOMSettings(), now=T0, ceiling=None)
    assert later.floor == 600 * MI
    assert later.floor_until == first.floor_until


def test_a_kill_is_counted_once_across_restarts() -> None:
    # The pod's status keeps reporting the same lastState; a restarted operator starts from the kept kills.
    seen = kill(0, 500 * MI)
    first = record([], [seen], OOMSettings(), now=T0, ceiling=None)
    again = record(first.kills, [seen], OOMSettings(), now=T0 + datetime.timedelta(minutes=1), ceiling=None)
    assert again.new == ()
    assert len(again.kills) == 1
    assert again.floor == first.floor


def test_a_linear_leak_stops_at_max_limit_with_repeated() -> None:
    # The leak grows past every raise; each kill happens at the limit the previous raise set.
    settings = OOMSettings(max_limit=1024 * MI, max_kills=10)
    kept: tuple[Kill, ...] = ()
    limit = 500 * MI
    floors = []
    for step in range(20):
        state = record(kept, [kill(step * 10, limit)], settings, now=T0 + datetime.timedelta(minutes=step * 10),
                       ceiling=None)  # fmt: skip
        kept, limit = state.kills, state.floor or limit
        floors.append(state.floor)
        if state.repeated:
            break
    assert max(f or 0 for f in floors) == 1024 * MI
    assert state.repeated
    assert step <= 11  # bounded: at most maxKills raises, then one more kill says "leak"


def test_raising_stops_after_max_kills() -> None:
    settings = OOMSettings(max_kills=2)
    kills = [kill(0, 500 * MI), kill(10, 600 * MI), kill(20, 720 * MI)]
    state = replay([stored(k) for k in kills], settings, ceiling=None)
    assert state.floor == 720 * MI  # 500 → 600 → 720, then no further raise
    assert state.repeated


def test_default_max_limit_is_twice_the_lowest_killed_limit() -> None:
    kills = [stored(kill(i * 10, limit)) for i, limit in enumerate([500 * MI, 600 * MI, 900 * MI])]
    state = replay(kills, OOMSettings(), ceiling=None)
    assert state.cap == 1000 * MI
    assert state.floor == 1000 * MI


def test_ceiling_caps_the_floor() -> None:
    state = record([], [kill(0, 1024 * MI)], OOMSettings(), now=T0, ceiling=1100 * MI)
    assert state.floor == 1100 * MI


def test_floor_lapses_after_the_window() -> None:
    first = record([], [kill(0, 500 * MI)], OOMSettings(), now=T0, ceiling=None)
    later = record(first.kills, [], OOMSettings(), now=T0 + datetime.timedelta(hours=24, seconds=1), ceiling=None)
    assert later.kills == ()
    assert later.floor is None
    assert not later.repeated


def test_kills_older_than_the_window_are_ignored() -> None:
    state = record([], [kill(-25 * 60, 500 * MI)], OOMSettings(), now=T0, ceiling=None)
    assert state.kills == ()
    assert state.new == ()


def test_at_most_kept_kills_are_kept_and_dropped_ones_are_not_recounted() -> None:
    kills = [kill(i, 500 * MI, pod=f"app-{i}") for i in range(KEPT_KILLS + 4)]
    state = record([], kills, OOMSettings(), now=T0 + datetime.timedelta(hours=1), ceiling=None)
    assert len(state.kills) == KEPT_KILLS
    again = record(state.kills, kills[:4], OOMSettings(), now=T0 + datetime.timedelta(hours=1), ceiling=None)
    assert again.new == ()
