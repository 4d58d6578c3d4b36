"""Status conditions with `meta.SetStatusCondition` semantics (k8s.io/apimachinery/pkg/api/meta).

Conditions are dicts with `type`, `status` ("True"/"False"/"Unknown"), `reason`, `message`,
`lastTransitionTime` and optionally `observedGeneration`. `lastTransitionTime` changes only when `status`
changes — a condition rewritten with the same status keeps the time it last flipped.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"


def _format(time: datetime.datetime) -> str:
    return time.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def find_status_condition(conditions: Sequence[Mapping[str, Any]] | None, type_: str) -> Mapping[str, Any] | None:
    for condition in conditions or ():
        if condition.get("type") == type_:
            return condition
    return None


def is_status_condition_true(conditions: Sequence[Mapping[str, Any]] | None, type_: str) -> bool:
    condition = find_status_condition(conditions, type_)
    return condition is not None and condition.get("status") == TRUE


def set_status_condition(conditions: list[dict[str, Any]], new: Mapping[str, Any], now: datetime.datetime) -> bool:
    """Insert or update `new` in `conditions` (in place); returns whether anything changed.

    `lastTransitionTime` is set to `now` for a new condition or a status change, and kept otherwise (unless
    `new` carries one and the status changed). reason, message and observedGeneration are updated in place.
    """
    if not new.get("type") or new.get("status") not in (TRUE, FALSE, UNKNOWN):
        raise ValueError(f"a condition needs a type and a status of True/False/Unknown, got {dict(new)!r}")
    for existing in conditions:
        if existing.get("type") != new["type"]:
            continue
        changed = False
        if existing.get("status") != new["status"]:
            existing["status"] = new["status"]
            existing["lastTransitionTime"] = new.get("lastTransitionTime") or _format(now)
            changed = True
        for key in ("reason", "message", "observedGeneration"):
            if key in new and existing.get(key) != new[key]:
                existing[key] = new[key]
                changed = True
        return changed
    condition = dict(new)
    condition["lastTransitionTime"] = new.get("lastTransitionTime") or _format(now)  # a zero time means now
    conditions.append(condition)
    return True


def remove_status_condition(conditions: list[dict[str, Any]], type_: str) -> bool:
    """Remove the condition of `type_`; returns whether one was removed."""
    for index, condition in enumerate(conditions):
        if condition.get("type") == type_:
            del conditions[index]
            return True
    return False
