"""The Balancer's status after one run, as the typed `BalancerStatus` of `ballast.api.balancer.v1alpha1`.

`replicas` (pods observed), `selector` (`spec.selector` in query-parameter form), `targets[]` (what this run learnt
of each target, the previous run's figures where it did not get that far) and five conditions: `Balancing`
(the failed phase or `Completed`), `ReplicasMissing` / `ReplicasOverflow` (kept as they were when nothing was
placed), `TargetConflict` and `Valid` (False, reason `StoredSpecInvalid`, for a spec stored before a rule of the CRD
it breaks).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from ballast.api.balancer.v1alpha1 import (
    BALANCING,
    COMPLETED,
    PROPORTIONAL,
    REPLICAS_MISSING,
    REPLICAS_OVERFLOW,
    STORED_SPEC_INVALID,
    TARGET_CONFLICT,
    UNKNOWN_PROPORTION_TARGETS,
    VALID,
    Balancer,
    BalancerStatus,
    TargetStatus,
)
from ballast.api.meta import Condition
from ballast.runtime import labels as label_selectors
from ballast.runtime.conditions import FALSE, TRUE, condition, find_status_condition
from ballast.runtime.crd.meta import CONDITION_MESSAGE_MAX_LENGTH

from .run import BalancerRun
from .stored import spec_problems

RUNNING_OK = "Balancer running OK"
NO_CONFLICT = "NoConflict"
CONFLICT = "Conflict"
NO_PROBLEM = "NoProblem"
VALID_REASON = "Valid"
_MISSING_TEXT = "replicas added on top of spec.replicas to satisfy the targets' minReplicas"
_OVERFLOW_TEXT = "replicas that fit in no target (every target that may take them is at maxReplicas)"


def metric_figures(run: BalancerRun) -> tuple[dict[str, dict[str, int | None]], dict[str, int] | None]:
    """The run's figures for `record_balancer`: per target, and the placement's problems (None: not placed)."""
    targets = {
        t.name: {"desired": t.desired, "placed": t.replicas, "running": t.summary.running if t.summary else None,
                 "not_started": t.summary.not_started if t.summary else None}
        for t in run.targets
    }  # fmt: skip
    placement = run.placement
    return targets, None if placement is None else {"missing": placement.missing, "overflow": placement.overflow}


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """A `metav1.LabelSelector` in query-parameter form, requirements sorted by key (apimachinery's String());
    raises `labels.SelectorError`."""
    parsed = label_selectors.from_label_selector(selector or {})
    return ",".join(str(r) for r in sorted(parsed.requirements, key=lambda r: (r.key, r.operator)))


def balancer_status(run: BalancerRun, now: datetime.datetime) -> BalancerStatus:
    """The status to write after `run`; `run.balancer.status` is the one it has now."""
    balancer = run.balancer
    current = balancer.status or BalancerStatus()
    try:
        selector: str | None = selector_string(balancer.spec.selector.model_dump(by_alias=True))
    except label_selectors.SelectorError:
        selector = current.selector
    return BalancerStatus(
        replicas=run.observed if run.observed is not None else current.replicas,
        selector=selector,
        conditions=_conditions(balancer, run, current.conditions or [], now),
        targets=_targets(run, current.targets or []),
    )


def new_conflict(before: BalancerStatus | None, after: BalancerStatus) -> str | None:
    """The TargetConflict message when the targets conflict and the message is not the one already there (an
    event to raise), else None."""
    now = find_status_condition(after.conditions or [], TARGET_CONFLICT)
    then = find_status_condition((before.conditions if before else None) or [], TARGET_CONFLICT)
    if now is None or now.status != TRUE or (then is not None and then.message == now.message):
        return None
    return str(now.message)


def _conditions(
    balancer: Balancer, run: BalancerRun, previous: Sequence[Condition], now: datetime.datetime
) -> list[Condition]:
    generation = balancer.metadata.generation or 0

    def build(type_: str, status: str, reason: str, message: str) -> Condition:
        return Condition.model_validate(condition(
            type_, status, reason, _cut(message), now=now, observed_generation=generation,
            previous=find_status_condition(previous, type_),
        ))  # fmt: skip

    if run.error is None:
        conditions = [build(BALANCING, TRUE, COMPLETED, RUNNING_OK)]
    else:
        conditions = [build(BALANCING, FALSE, run.error.phase, str(run.error))]
    placement = run.placement
    for type_, count, what in (
        (REPLICAS_MISSING, placement.missing if placement else None, _MISSING_TEXT),
        (REPLICAS_OVERFLOW, placement.overflow if placement else None, _OVERFLOW_TEXT),
    ):
        if count is None:
            conditions.extend(kept for kept in [find_status_condition(previous, type_)] if kept is not None)
        elif count:
            conditions.append(build(type_, TRUE, type_, f"{count} {what}"))
        else:
            conditions.append(build(type_, FALSE, NO_PROBLEM, f"no {what}"))
    conflicts = [f"target {t.name} is not scaled, also scaled by {t.conflict}" for t in run.targets if t.conflict]
    if conflicts:
        conditions.append(build(TARGET_CONFLICT, TRUE, CONFLICT, _listed(conflicts)))
    else:
        conditions.append(build(TARGET_CONFLICT, FALSE, NO_CONFLICT, "every target is scaled by this Balancer only"))
    conditions.append(build(VALID, *_validity(balancer)))
    return conditions


def _listed(conflicts: Sequence[str]) -> str:
    """The conflicts joined with "; ", as many whole as a condition's message holds, then how many more (100
    targets of one Deployment each conflicting with the 99 others, or one target with many other owners, pass
    what the API server takes)."""
    joined = "; ".join(conflicts)
    if len(joined) <= CONDITION_MESSAGE_MAX_LENGTH:
        return joined
    kept: list[str] = []
    for conflict in conflicts:
        more = _more(len(conflicts) - len(kept) - 1)
        if len("; ".join([*kept, conflict])) + len(more) > CONDITION_MESSAGE_MAX_LENGTH:
            break
        kept.append(conflict)
    if not kept:  # the first conflict alone is longer than a message: cut, leaving room for the count
        kept = [_cut(conflicts[0], CONDITION_MESSAGE_MAX_LENGTH - len(_more(len(conflicts) - 1)))]
    return "; ".join(kept) + _more(len(conflicts) - len(kept))


def _more(count: int) -> str:
    return f"; and {count} more targets in conflict" if count else ""


def _cut(message: str, limit: int = CONDITION_MESSAGE_MAX_LENGTH) -> str:
    """`message` within `limit` characters, its end replaced by "…" when it is cut."""
    return message if len(message) <= limit else message[: limit - 1] + "…"


def _targets(run: BalancerRun, previous: Sequence[TargetStatus]) -> list[TargetStatus]:
    """What this run learnt of each target, and what the last one did where this one did not get that far."""
    before = {t.name: t for t in previous}
    targets = []
    for target in run.targets:
        old = before.get(target.name) or TargetStatus(name=target.name)
        summary = target.summary

        def chosen(value: int | None, old_value: int | None) -> int | None:
            return value if value is not None else old_value

        targets.append(TargetStatus(
            name=target.name, desired=chosen(target.desired, old.desired), placed=chosen(target.replicas, old.placed),
            running=chosen(summary.running if summary else None, old.running),
            not_started=chosen(summary.not_started if summary else None, old.not_started),
        ))  # fmt: skip
    return targets


def _validity(balancer: Balancer) -> tuple[str, str, str]:
    problems = spec_problems(balancer.spec)
    if problems:  # stored before a rule of the CRD: still run, as far as the placement can (difference 59)
        return FALSE, STORED_SPEC_INVALID, "; ".join(problems) + " (the CRD refuses this now; stored before)"
    policy = balancer.spec.policy
    names = {t.name for t in balancer.spec.targets}
    if policy.policy_name == PROPORTIONAL and policy.proportions is not None:
        unknown = sorted(set(policy.proportions.target_proportions) - names)
        if unknown:
            return (
                TRUE,
                UNKNOWN_PROPORTION_TARGETS,
                (f"targetProportions names no target {', '.join(repr(n) for n in unknown)}; ignored, as upstream does"),
            )
    return TRUE, VALID_REASON, "the spec is valid"


_CONDITION_FIELDS = ("type", "status", "reason", "message", "observedGeneration")


def status_differs(current: BalancerStatus | None, wanted: BalancerStatus) -> bool:
    """Whether `wanted` says anything `current` does not (conditions compared without their times, which
    `condition` keeps unless the status flips)."""

    def shape(status: Mapping[str, Any]) -> tuple[Any, ...]:
        conditions = sorted(
            (tuple(c.get(k) for k in _CONDITION_FIELDS) for c in status.get("conditions") or []), key=str
        )
        targets = sorted((sorted(t.items()) for t in status.get("targets") or []), key=str)
        return status.get("replicas"), status.get("selector"), conditions, targets

    return shape(current.to_wire() if current is not None else {}) != shape(wanted.to_wire())
