"""`place`: how many replicas each target gets, by priority or by proportion, with fallback for late pods.

Both policies start from the minimums, which are guaranteed whatever the request: when they add up to more
than `replicas` the difference is `missing`, and the rest of the run still happens (fallback may add replicas on
top). Whatever fits nowhere is `overflow`. Late pods (`PodSummary.not_started`) are assumed never to start, so
their replicas are placed once more on other targets; the late target keeps its own placement, and the
duplicates go away once the originals start (the next run sees no late pods).

How many replicas a late target passes on: `not_started + placement - total` when positive. The late pods are
among those the target is meant to keep, and `placement - total` more are still to be created and will
presumably be late too; when the target has more pods than it is meant to keep, the surplus old pods are
expected to be removed first, the late ones hopefully among them (15 pods, 2 late, placement 10: none).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ballast.api.balancer.v1alpha1 import PRIORITY

from .inputs import Inputs, Target, check_inputs
from .summary import PodSummary


@dataclass(frozen=True, slots=True)
class Placement:
    """The result of `place`.

    `placement` has one entry per target, zeros included, in name order. `missing` is how many replicas the
    minimums add on top of the request; `overflow` how many could not be placed (every target that may take
    them is full). `fallback` says, per late target, how many replicas it passed on to other targets (only
    targets that passed some on). Upstream computes `missing` and `overflow` and drops them.
    """

    placement: dict[str, int]
    missing: int = 0
    overflow: int = 0
    fallback: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Replicas placed over all targets."""
        return sum(self.placement.values())


def passed_on(summary: PodSummary, placed: int) -> int:
    """How many replicas a target with `summary` and `placed` replicas passes on to other targets: its late pods
    that lie within its placement plus the replicas it has yet to create, never below 0; 0 without late pods."""
    if summary.not_started == 0:
        return 0
    return max(0, summary.not_started + placed - summary.total)


def place(
    replicas: int,
    targets: Sequence[Mapping[str, Any] | Target],
    policy: Mapping[str, Any],
    summaries: Mapping[str, PodSummary | Mapping[str, Any]] | None = None,
) -> Placement:
    """Place `replicas` over `targets` by `policy`, given each target's pod summary.

    - `targets`: mappings (or `Target`s) with `name`, `min_replicas` (None means 0) and `max_replicas` (None
      means unbounded); names unique.
    - `policy`: `{"name": "priority", "target_order": [...]}` or
      `{"name": "proportional", "target_proportions": {name: weight}}`.
    - `summaries`: target name to `PodSummary` or `{"total", "running", "not_started"}`; a target without one has
      no pods.

    Priority: each target in `target_order` is filled up to its maximum before the next; a late target passes
    replicas on to the targets after it. A target not in `target_order` gets its minimum and takes no fallback.

    Proportional: highest averages (D'Hondt / Jefferson) over the targets with a weight above 0 and room left,
    the minimums counting as seats already won: each replica goes to the target with the greatest
    `weight / (1 + placed)`, a tie to the alphabetically first name. A target without a weight (or weight 0)
    gets its minimum only. When everything fit, the replicas late targets pass on are placed the same way over
    the targets without late pods; when something did not fit there is no fallback, everything being full.

    The result does not depend on the order of `targets` or of any mapping. Raises `PlacementInputError` (a
    `ValueError`) for an unknown policy, a `target_order` entry that is not a target or is repeated, a missing
    `target_order` or `target_proportions`, a negative number, a minimum above its maximum, duplicate target
    names, or a summary whose running and late pods exceed its total.
    """
    return solve(check_inputs(replicas, targets, policy, summaries))


def solve(inputs: Inputs) -> Placement:
    """`place` over inputs already checked by `check_inputs`."""
    placed = {name: target.min_replicas for name, target in inputs.targets.items()}
    remaining = inputs.replicas - sum(placed.values())
    missing = max(0, -remaining)
    remaining = max(0, remaining)
    caps = {name: target.max_replicas for name, target in inputs.targets.items()}
    fallback: dict[str, int] = {}
    if inputs.policy == PRIORITY:
        for name in inputs.order:
            cap = caps[name]
            given = remaining if cap is None else min(remaining, cap - placed[name])
            placed[name] += given
            remaining -= given
            extra = passed_on(inputs.summaries[name], placed[name])
            if extra:
                fallback[name] = extra
                remaining += extra
        return Placement(placed, missing, remaining, dict(sorted(fallback.items())))
    remaining = highest_averages(remaining, placed, inputs.proportions, caps, placed)
    if remaining:
        return Placement(placed, missing, remaining)
    for name, count in placed.items():
        extra = passed_on(inputs.summaries[name], count)
        if extra:
            fallback[name] = extra
            remaining += extra
    unblocked = [name for name in placed if inputs.summaries[name].not_started == 0]
    remaining = highest_averages(remaining, placed, inputs.proportions, caps, unblocked)
    return Placement(placed, missing, remaining, fallback)


def highest_averages(
    seats: int,
    placed: dict[str, int],
    weights: Mapping[str, int],
    caps: Mapping[str, int | None],
    names: Iterable[str],
) -> int:
    """Give up to `seats` more replicas to `names`, one at a time to the greatest `weight / (1 + placed)`
    (ties to the first name, weight 0 never, a target at its cap no more); update `placed` and return how many
    seats were left when every candidate was full.

    The result is that of the one-at-a-time loop, without its cost in `seats`: each target's averages only
    fall as it wins, so the loop hands out seats in falling order of average, and every average above a
    threshold is won at once. The threshold is found by bisection (`_won_above`), and the last few seats, at
    most one per target, go by sorting the targets' next averages (`_by_next_average`). Averages are compared
    exactly, not as upstream's float64, which can only differ when a weight times a placement exceeds 2**52.
    """
    if seats <= 0:
        return max(seats, 0)
    # (name, weight, placed, cap); no target can win more than `seats`, which bounds the unbounded ones.
    rows = []
    for name in sorted(names):
        weight, held, cap = weights[name], placed[name], caps[name]
        if weight > 0 and (cap is None or held < cap):
            rows.append((name, weight, held, held + seats if cap is None else min(cap, held + seats)))
    room = sum(cap - held for _, _, held, cap in rows)
    if room <= seats:
        for name, _, _, cap in rows:
            placed[name] = cap
        return seats - room
    total_weight = sum(weight for _, weight, _, _ in rows)
    # Threshold total_weight / d: _won_above(d) seats have a greater average; it grows with d, is below `seats`
    # at d = seats (each target wins fewer than weight * seats / total_weight), and above it for a large d.
    low, high = seats, 2 * seats
    while _won_above(high, total_weight, rows) <= seats:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        if _won_above(middle, total_weight, rows) <= seats:
            low = middle
        else:
            high = middle
    for name, weight, held, cap in rows:
        won = _held_above(low, total_weight, weight, held, cap)
        seats -= won - held
        placed[name] = won
    if seats:
        # Fewer seats than targets are left; more than `seats` targets have their next average above the
        # threshold of d = low + 1 and the following one not: the best next averages win, one seat each.
        ready = [name for name, _, _, cap in rows if placed[name] < cap]
        for name in _by_next_average(ready, placed, weights)[:seats]:
            placed[name] += 1
    return 0


def _held_above(d: int, total_weight: int, weight: int, placed: int, cap: int) -> int:
    """Seats a target holds once it has won every average above `total_weight / d`: the averages
    `weight / (1 + j)` above it are those of j < ceil(weight * d / total_weight) - 1, capped, never fewer than
    it already has."""
    return min(cap, max(placed, -(-weight * d // total_weight) - 1))


def _won_above(d: int, total_weight: int, rows: Sequence[tuple[str, int, int, int]]) -> int:
    return sum(min(cap, max(held, -(-weight * d // total_weight) - 1)) - held for _, weight, held, cap in rows)


def _by_next_average(names: Sequence[str], placed: Mapping[str, int], weights: Mapping[str, int]) -> list[str]:
    """`names` by falling `weight / (1 + placed)`, ties by name, exactly. Floats are tried first: rounding keeps
    distinct averages in order or makes them equal, so only neighbours with equal floats need the exact check."""
    ranked = sorted(names, key=lambda name: (-weights[name] / (1 + placed[name]), name))
    for first, second in itertools.pairwise(ranked):
        a, b = weights[first], weights[second]
        if a / (1 + placed[first]) == b / (1 + placed[second]) and a * (1 + placed[second]) != b * (1 + placed[first]):
            return sorted(names, key=lambda name: (-Fraction(weights[name], 1 + placed[name]), name))
    return ranked
