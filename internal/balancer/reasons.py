"""Why each target got its replicas: the reasons `ballast balancer status` prints under each target.

The reasons are derived, not recorded along the way: the fallback a target *received* is the difference from
the same placement without late pods, which is what a reader wants to know ("2 of these are there because
zone-a's pods do not start") and cannot be read off the algorithm's steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from ballast.api.balancer.v1alpha1 import PRIORITY

from .distribute import Placement, passed_on, solve
from .inputs import Target, check_inputs
from .summary import PodSummary

MINIMUM: Final = "minimum"
"""The target is at its minimum, which it gets whatever the request."""
FULL: Final = "full"
"""The target is at its maximum."""
UNRANKED: Final = "unranked"
"""The policy does not rank the target (not in targetOrder, or no proportion above 0): only its minimum."""
LATE: Final = "late"
"""The target has pods Pending past the startup timeout and passes replicas on to other targets."""
SURPLUS_FIRST: Final = "surplus-first"
"""The target has late pods but more pods than it keeps: the surplus old pods go first, no fallback."""
BLOCKED: Final = "blocked"
"""Proportional policy: a target with late pods takes no fallback replicas."""
FALLBACK: Final = "fallback"
"""The target holds replicas on behalf of late targets."""
MISSING: Final = "missing"
"""Problem: the minimums add up to more than the request."""
OVERFLOW: Final = "overflow"
"""Problem: some replicas fit in no target."""


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason: a stable `code` (the constants above) and a sentence for people."""

    code: str
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class TargetExplanation:
    """One target: its replicas, bounds, pods, and the reasons, most telling first (empty for a target that
    simply got its share)."""

    name: str
    replicas: int
    min_replicas: int
    max_replicas: int | None
    summary: PodSummary
    reasons: tuple[Reason, ...]


@dataclass(frozen=True, slots=True)
class Explanation:
    """A placement with its reasons: `targets` by name, `problems` for the Balancer as a whole (missing and
    overflow)."""

    placement: Placement
    targets: tuple[TargetExplanation, ...]
    problems: tuple[Reason, ...]

    def lines(self) -> list[str]:
        """Plain text, one line per target and an indented line per reason, then the problems."""
        lines: list[str] = []
        for target in self.targets:
            bounds = f"{target.min_replicas}..{'∞' if target.max_replicas is None else target.max_replicas}"
            pods = target.summary
            lines.append(
                f"{target.name}: {target.replicas} (bounds {bounds}; pods {pods.total}, running {pods.running}, "
                f"late {pods.not_started})"
            )
            lines.extend(f"  - {reason}" for reason in target.reasons)
        lines.extend(str(problem) for problem in self.problems)
        return lines


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def explain(
    replicas: int,
    targets: Sequence[Mapping[str, Any] | Target],
    policy: Mapping[str, Any],
    summaries: Mapping[str, PodSummary | Mapping[str, Any]] | None = None,
) -> Explanation:
    """`place` with the reasons behind each target's count; same arguments, same `PlacementInputError`."""
    inputs = check_inputs(replicas, targets, policy, summaries)
    result = solve(inputs)
    calm = solve(replace(inputs, summaries={name: replace(s, not_started=0) for name, s in inputs.summaries.items()}))
    ranked = set(inputs.order) if inputs.policy == PRIORITY else {n for n, w in inputs.proportions.items() if w > 0}
    explained = []
    for name, target in inputs.targets.items():
        summary = inputs.summaries[name]
        count = result.placement[name]
        reasons: list[Reason] = []
        if summary.not_started:
            extra = result.fallback.get(name, 0)
            if extra:
                reasons.append(
                    Reason(LATE, f"{_plural(summary.not_started, 'pod')} Pending past the startup timeout: "
                                 f"{_plural(extra, 'replica')} placed on other targets as well")
                )  # fmt: skip
            elif passed_on(summary, count) == 0:
                reasons.append(
                    Reason(SURPLUS_FIRST, f"{_plural(summary.not_started, 'pod')} Pending past the startup "
                                          f"timeout, but {summary.total} pods for {count} replicas: the surplus "
                                          "old pods are expected to go first, so no fallback")
                )  # fmt: skip
            else:
                why = "it is not in targetOrder" if inputs.policy == PRIORITY else "every target was full already"
                reasons.append(
                    Reason(LATE, f"{_plural(summary.not_started, 'pod')} Pending past the startup timeout, "
                                 f"but no fallback: {why}")
                )  # fmt: skip
            if inputs.policy != PRIORITY:
                reasons.append(Reason(BLOCKED, "has late pods, so it takes no fallback replicas"))
        received = count - calm.placement[name]
        if received > 0:
            reasons.append(Reason(FALLBACK, f"{_plural(received, 'replica')} on behalf of targets with late pods"))
        if name not in ranked:
            why = "not in targetOrder" if inputs.policy == PRIORITY else "no proportion above 0"
            reasons.append(Reason(UNRANKED, f"{why}: gets only its minimum ({target.min_replicas})"))
        elif target.max_replicas is not None and count >= target.max_replicas:
            reasons.append(Reason(FULL, f"full: at its maximum ({target.max_replicas})"))
        elif target.min_replicas and count == target.min_replicas:
            reasons.append(Reason(MINIMUM, f"at its minimum ({target.min_replicas})"))
        explained.append(
            TargetExplanation(name, count, target.min_replicas, target.max_replicas, summary, tuple(reasons))
        )
    problems: list[Reason] = []
    if result.missing:
        minimums = sum(t.min_replicas for t in inputs.targets.values())
        problems.append(
            Reason(MISSING, f"missing {result.missing}: the minimums add up to {minimums}, more than the "
                            f"{inputs.replicas} replicas asked for")
        )  # fmt: skip
    if result.overflow:
        problems.append(
            Reason(OVERFLOW, f"overflow {result.overflow}: {_plural(result.overflow, 'replica')} fit in no target "
                             "(every target that may take them is full or has late pods)")
        )  # fmt: skip
    return Explanation(result, tuple(explained), tuple(problems))
