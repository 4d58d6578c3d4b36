"""What happened to each policy in a merge (or a selection), as values the admission webhook counts and reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

APPLIED: Final = "applied"
"""The policy changed the spec."""
UNCHANGED: Final = "unchanged"
"""The policy was merged and changed nothing (everything it asks for was there already, or lost to an earlier
writer)."""
CONFLICT: Final = "conflict"
"""Every required node-affinity term the policy would produce is unsatisfiable: the policy was skipped as a
whole (docs/design.md, difference 29)."""
ERROR: Final = "error"
"""The policy is invalid as stored and was skipped as a whole (docs/design.md, difference 31)."""

Result = Literal["applied", "unchanged", "conflict", "error"]


@dataclass(frozen=True, slots=True)
class FieldConflict:
    """A part of a policy that was not merged because the spec already says otherwise.

    `path` is relative to the pod spec (`nodeSelector[role]`, `nodeName`, `schedulerName`,
    `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`). First writer wins,
    so for a policy that is not enforced these are normal; for an enforced one they are what admission denies.
    """

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True, slots=True)
class PolicyOutcome:
    """One policy's result: `ref` names it (`ClusterPodSchedulingPolicy/etcd`, or `policies[2]` for a bare spec),
    `result` is one of `APPLIED`, `UNCHANGED`, `CONFLICT`, `ERROR`, `message` says why for the last two,
    `changed` lists the spec fields it changed (for the mutation log), `conflicts` what it did not get."""

    ref: str
    result: Result
    message: str = ""
    changed: tuple[str, ...] = ()
    conflicts: tuple[FieldConflict, ...] = ()


@dataclass(frozen=True, slots=True)
class MergeResult:
    """The merged pod spec (a new dict; the inputs are untouched) and one outcome per policy, in input order."""

    spec: dict[str, Any]
    outcomes: tuple[PolicyOutcome, ...]

    @property
    def changed(self) -> bool:
        """Whether any policy changed the spec."""
        return any(outcome.result == APPLIED for outcome in self.outcomes)


def denies(outcome: PolicyOutcome) -> bool:
    """Whether this outcome, for an enforced policy, denies the object: the policy could not be applied whole (a
    field the object already holds otherwise, or every affinity term contradictory). An invalid policy (`ERROR`)
    disables only itself, enforced or not (docs/design.md, differences 31 and 34)."""
    return outcome.result == CONFLICT or bool(outcome.conflicts)
