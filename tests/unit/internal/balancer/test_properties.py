"""Properties of `place` over random Balancers: bounds hold, nothing is lost, the proportional policy is the
one-seat-at-a-time D'Hondt loop, and the order of the inputs changes nothing."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ballast.internal.balancer import Placement, PodSummary, highest_averages, passed_on, place

NAMES = "abcdef"


@st.composite
def _target(draw: st.DrawFn, name: str) -> dict[str, Any]:
    low = draw(st.integers(0, 4))
    high = draw(st.none() | st.integers(low, low + 6))
    return {"name": name, "min_replicas": draw(st.sampled_from([None, low])) if low == 0 else low, "max_replicas": high}


@st.composite
def _summary(draw: st.DrawFn) -> PodSummary:
    total = draw(st.integers(0, 8))
    running = draw(st.integers(0, total))
    return PodSummary(total, running, draw(st.integers(0, total - running)))


@st.composite
def balancers(draw: st.DrawFn, policy: str | None = None, calm: bool = False) -> tuple[Any, ...]:
    """(replicas, targets, policy, summaries); `calm`: no late pods."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True))
    targets = [draw(_target(name)) for name in names]
    kind = policy or draw(st.sampled_from(["priority", "proportional"]))
    if kind == "priority":
        ranked = draw(st.permutations(names))[: draw(st.integers(0, len(names)))]
        settings_: dict[str, Any] = {"name": kind, "target_order": list(ranked)}
    else:
        weights = draw(st.dictionaries(st.sampled_from(NAMES + "xy"), st.integers(0, 6), max_size=8))
        settings_ = {"name": kind, "target_proportions": weights}
    summaries = {n: draw(_summary()) for n in draw(st.lists(st.sampled_from(names), unique=True))}
    if calm:
        summaries = {n: PodSummary(s.total, s.running, 0) for n, s in summaries.items()}
    return draw(st.integers(0, 30)), targets, settings_, summaries


def _lower(targets: list[dict[str, Any]]) -> int:
    return sum(t["min_replicas"] or 0 for t in targets)


@given(balancers())
def test_every_target_stays_within_its_bounds(balancer: tuple[Any, ...]) -> None:
    result = place(*balancer)
    targets = balancer[1]
    assert sorted(result.placement) == sorted(t["name"] for t in targets)
    for t in targets:
        count = result.placement[t["name"]]
        assert (t["min_replicas"] or 0) <= count
        assert t["max_replicas"] is None or count <= t["max_replicas"]


@given(balancers())
def test_nothing_asked_for_is_lost_and_missing_is_what_the_minimums_add(balancer: tuple[Any, ...]) -> None:
    replicas, targets, _, _ = balancer
    result = place(*balancer)
    assert result.total + result.overflow >= max(replicas, _lower(targets))
    assert result.missing == max(0, _lower(targets) - replicas)
    assert result.overflow >= 0


@given(balancers(calm=True))
def test_without_late_pods_and_with_every_target_ranked_exactly_the_request_is_placed(
    balancer: tuple[Any, ...],
) -> None:
    replicas, targets, policy, summaries = balancer
    names = [t["name"] for t in targets]
    if policy["name"] == "priority":
        policy = {**policy, "target_order": sorted(names)}
    else:
        policy = {**policy, "target_proportions": {n: policy["target_proportions"].get(n) or 1 for n in names}}
    result = place(replicas, targets, policy, summaries)
    assert result.total + result.overflow == max(replicas, _lower(targets))
    assert result.fallback == {}


def _dhondt(
    seats: int, placed: dict[str, int], weights: dict[str, int], caps: dict[str, int | None], names: Any
) -> int:
    """Upstream's loop, restated: one seat at a time to the strictly greatest weight / (1 + placed), starting
    from 0, over the names in sorted order that still have room."""
    candidates = sorted(n for n in names if caps[n] is None or placed[n] < caps[n])  # type: ignore[operator]
    while seats > 0:
        best, winner = Fraction(0), None
        for n in candidates:
            cap = caps[n]
            if cap is not None and placed[n] >= cap:
                continue
            rank = Fraction(weights.get(n, 0), 1 + placed[n])
            if rank > best:
                best, winner = rank, n
        if winner is None:
            break
        placed[winner] += 1
        seats -= 1
    return seats


def _reference(replicas: int, targets: list[dict[str, Any]], policy: dict[str, Any], summaries: Any) -> Placement:
    placed = {t["name"]: t["min_replicas"] or 0 for t in targets}
    caps = {t["name"]: t["max_replicas"] for t in targets}
    weights = {n: policy["target_proportions"].get(n, 0) for n in placed}
    remaining = replicas - sum(placed.values())
    missing, remaining = max(0, -remaining), max(0, remaining)
    remaining = _dhondt(remaining, placed, weights, caps, placed)
    if remaining:
        return Placement(dict(sorted(placed.items())), missing, remaining)
    late = {n: summaries.get(n, PodSummary()) for n in placed}
    fallback = {n: passed_on(late[n], placed[n]) for n in sorted(placed) if passed_on(late[n], placed[n])}
    unblocked = [n for n in placed if late[n].not_started == 0]
    overflow = _dhondt(sum(fallback.values()), placed, weights, caps, unblocked)
    return Placement(dict(sorted(placed.items())), missing, overflow, fallback)


@given(balancers(policy="proportional"))
def test_the_proportional_policy_is_the_one_seat_at_a_time_dhondt_loop(balancer: tuple[Any, ...]) -> None:
    assert place(*balancer) == _reference(*balancer)


@settings(max_examples=300)
@given(
    st.integers(0, 3000),
    st.lists(
        st.tuples(st.integers(0, 500), st.integers(0, 1000), st.none() | st.integers(0, 1500)), min_size=1, max_size=6
    ),
)
def test_highest_averages_equals_the_loop_on_large_numbers(seats: int, rows: list[tuple[int, int, int | None]]) -> None:
    names = [f"t{i}" for i in range(len(rows))]
    placed = {n: (min(low, cap) if cap is not None else low) for n, (low, _, cap) in zip(names, rows, strict=True)}
    weights = {n: weight for n, (_, weight, _) in zip(names, rows, strict=True)}
    caps = {n: cap for n, (_, _, cap) in zip(names, rows, strict=True)}
    expected = dict(placed)
    left = _dhondt(seats, expected, weights, caps, names)
    assert highest_averages(seats, placed, weights, caps, names) == left
    assert placed == expected


@given(balancers(), st.randoms(use_true_random=False))
def test_permuting_targets_and_mappings_changes_nothing(balancer: tuple[Any, ...], random: Any) -> None:
    replicas, targets, policy, summaries = balancer
    result = place(*balancer)
    shuffled_targets = random.sample(targets, len(targets))
    shuffled_policy = dict(policy)
    if "target_proportions" in policy:
        items = list(policy["target_proportions"].items())
        shuffled_policy["target_proportions"] = dict(random.sample(items, len(items)))
    shuffled_summaries = dict(random.sample(list(summaries.items()), len(summaries)))
    again = place(replicas, shuffled_targets, shuffled_policy, shuffled_summaries)
    assert again == result
    assert list(again.placement) == sorted(again.placement)
    assert list(again.fallback) == sorted(again.fallback)
