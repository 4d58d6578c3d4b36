"""A problem found in a policy: the field path (`spec.selector.namespaces.include[1]`) and what is wrong there."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PolicyProblem:
    """One invalid field of a policy.

    `path` uses wire names and Kubernetes' field-path notation (`spec.metrics[0].headroom`,
    `spec.readiness.cvMeanFloor[cpu]`). `blocks_matching` is True for a regex or label selector that cannot be
    compiled: the policy cannot be matched at all and is skipped by resolution. Other problems (quantities,
    durations, percentages) are refused at write time, but an already-stored policy keeps matching and those
    fields fall back to their defaults at use time, as in the Go operator.
    """

    path: str
    message: str
    blocks_matching: bool = False

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def index(path: str, position: int) -> str:
    """`path[position]`."""
    return f"{path}[{position}]"


def key(path: str, name: str) -> str:
    """`path[name]`, the field-path form of a map entry."""
    return f"{path}[{name}]"


def quote(text: str) -> str:
    """`text` in double quotes with JSON escapes, as Go's `%q` shows a value in an error message."""
    return json.dumps(text, ensure_ascii=False)
