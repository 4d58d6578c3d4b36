"""Status conditions with `meta.SetStatusCondition` semantics (k8s.io/apimachinery/pkg/api/meta), on dicts and on
typed models alike.

- A dict condition is the wire shape: `type`, `status` ("True"/"False"/"Unknown"), `reason`, `message`,
  `lastTransitionTime` (RFC 3339 text) and optionally `observedGeneration`.
- A typed condition is any object with the attributes of `TypedCondition` (`ballast.runtime.crd.meta.Condition`
  is one; this module does not import it, so it goes by attribute names). Its `last_transition_time` is a
  datetime.

One rule for both: `lastTransitionTime` changes only when `status` changes — a condition rewritten with the same
status keeps the time it last flipped. `set_status_condition` applies it to a list in place (read-modify-write);
`condition` builds the entry a server-side apply body sends, from the one the object carries now.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar, overload

from .clock import Clock, RealClock, rfc3339

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"


class TypedCondition(Protocol):
    """What the helpers read of a typed condition: the fields of `metav1.Condition`, by their Python names."""

    @property
    def type(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def last_transition_time(self) -> datetime.datetime | None: ...
    @property
    def observed_generation(self) -> int | None: ...


AnyCondition = Mapping[str, Any] | TypedCondition
C = TypeVar("C", bound=AnyCondition)
T = TypeVar("T", bound=TypedCondition)

# Wire key -> attribute of a typed condition.
_ATTRIBUTES = {
    "type": "type",
    "status": "status",
    "reason": "reason",
    "message": "message",
    "lastTransitionTime": "last_transition_time",
    "observedGeneration": "observed_generation",
}


def _get(condition: AnyCondition, key: str) -> Any:
    if isinstance(condition, Mapping):
        return condition.get(key)
    return getattr(condition, _ATTRIBUTES[key], None)


def _set(condition: AnyCondition, key: str, value: Any) -> None:
    if isinstance(condition, dict):
        condition[key] = value
    else:
        setattr(condition, _ATTRIBUTES[key], value)


def _carries(condition: AnyCondition, key: str) -> bool:
    # A dict says only what it holds; a typed condition always has every field (None included).
    return key in condition if isinstance(condition, Mapping) else True


def _check(condition: AnyCondition) -> None:
    if not _get(condition, "type") or _get(condition, "status") not in (TRUE, FALSE, UNKNOWN):
        shown = dict(condition) if isinstance(condition, Mapping) else condition
        raise ValueError(f"a condition needs a type and a status of True/False/Unknown, got {shown!r}")


def find_status_condition(conditions: Sequence[C] | None, type_: str) -> C | None:
    """The condition of `type_`, or None when `conditions` (which may be None) has none."""
    for condition in conditions or ():
        if _get(condition, "type") == type_:
            return condition
    return None


def is_status_condition_true(conditions: Sequence[AnyCondition] | None, type_: str) -> bool:
    """Whether the condition of `type_` is present with status True."""
    condition = find_status_condition(conditions, type_)
    return condition is not None and _get(condition, "status") == TRUE


@overload
def kept_transition_time(previous: Mapping[str, Any], status: str) -> str | None: ...
@overload
def kept_transition_time(previous: TypedCondition, status: str) -> datetime.datetime | None: ...
@overload
def kept_transition_time(previous: None, status: str) -> None: ...
def kept_transition_time(previous: AnyCondition | None, status: str) -> str | datetime.datetime | None:
    """`previous`'s lastTransitionTime if a condition of `status` keeps it (same status, and a time to keep) —
    the text of a dict, the datetime of a typed model; None when the time moves (a flip, or no `previous`)."""
    if previous is None or _get(previous, "status") != status:
        return None
    return _get(previous, "lastTransitionTime") or None  # a zero time is no time to keep


def condition(
    type_: str,
    status: str,
    reason: str,
    message: str,
    *,
    previous: AnyCondition | None,
    now: datetime.datetime | str,
    observed_generation: int | None = None,
) -> dict[str, Any]:
    """The condition of `type_` to send in a server-side apply body (a dict in wire shape).

    `previous` is the condition of that type the object carries now (None when it has none): its
    lastTransitionTime is kept when `status` is the same, else the time is `now` — a datetime, or RFC 3339 text
    when the caller stamps several writes with one. `observedGeneration` is written only when given.
    """
    written: dict[str, Any] = {"type": type_, "status": status, "reason": reason, "message": message}
    _check(written)
    kept = kept_transition_time(previous, status)
    since = kept if kept is not None else now
    written["lastTransitionTime"] = since if isinstance(since, str) else rfc3339(since)
    if observed_generation is not None:
        written["observedGeneration"] = observed_generation
    return written


def _new_time(new: AnyCondition, now: datetime.datetime | None, *, typed: bool) -> Any:
    # The time `new` brings on a flip or an insert: its own, or now when it carries none (a zero time means now);
    # a datetime for a typed condition, RFC 3339 text for a dict.
    given = _get(new, "lastTransitionTime")
    moment = given or (now if now is not None else RealClock().now())
    if typed:
        return datetime.datetime.fromisoformat(moment) if isinstance(moment, str) else moment
    return moment if isinstance(moment, str) else rfc3339(moment)


def _typed_element(conditions: list[Any]) -> type[Any] | None:
    """The typed condition class `conditions` holds (from an element, or from a typed empty list), else None."""
    for element in conditions:
        if not isinstance(element, Mapping):
            return type(element)
        return None
    element_type: type[Any] | None = getattr(conditions, "element_type", None)
    return element_type


def _added(new: AnyCondition, now: datetime.datetime | None, element: type[Any] | None) -> Any:
    if element is not None and isinstance(new, Mapping):
        # A dict into a typed list becomes a typed element: a list holds one kind of entry (a dict among models
        # serialises with a warning, and the helpers would read it by the wrong names).
        return element.model_validate({**new, "lastTransitionTime": _new_time(new, now, typed=False)})
    if not isinstance(new, Mapping):
        added = copy.copy(new)  # as `model_copy()`: the caller's condition stays the caller's
        _set(added, "lastTransitionTime", _new_time(new, now, typed=True))
        return added
    added_dict = dict(new)
    added_dict["lastTransitionTime"] = _new_time(new, now, typed=False)
    return added_dict


@overload
def set_status_condition(
    conditions: list[dict[str, Any]],
    new: Mapping[str, Any],
    now: datetime.datetime | None = None,
    *,
    clock: Clock | None = None,
) -> bool: ...
@overload
def set_status_condition(
    conditions: list[T], new: T | Mapping[str, Any], now: datetime.datetime | None = None, *, clock: Clock | None = None
) -> bool: ...
def set_status_condition(
    conditions: list[Any], new: Any, now: datetime.datetime | None = None, *, clock: Clock | None = None
) -> bool:
    """Insert or update `new` in `conditions` (in place); returns whether anything changed
    (`meta.SetStatusCondition(&conditions, new)`).

    A list holds one kind of entry: a typed list (one with typed elements, or the empty list a typed model's
    `Conditions` field starts with) turns a dict `new` into its element type; a list of dicts takes dicts.
    A new type is appended as a copy of `new`. An existing entry takes `new`'s status; its lastTransitionTime
    moves only when the status does. reason, message and observedGeneration are overwritten — of a dict `new`,
    only the keys it carries. The time written is `new`'s own when it carries one, else `now`, else
    `clock.now()` (pass `clock=ctx.clock` in a reconciler, so a test's `FakeClock` sets it), else the real time.
    Raises ValueError for a condition without a type or with a status other than True/False/Unknown, and
    TypeError when `conditions` is not a list (None: a model built without its `Conditions` default).
    """
    if not isinstance(conditions, list):
        raise TypeError(
            f"set_status_condition takes the list of conditions to edit in place, not {type(conditions).__name__}"
        )
    _check(new)
    if now is None and clock is not None:
        now = clock.now()
    existing = find_status_condition(conditions, _get(new, "type"))
    if existing is None:
        conditions.append(_added(new, now, _typed_element(conditions)))
        return True
    changed = False
    if _get(existing, "status") != _get(new, "status"):
        _set(existing, "status", _get(new, "status"))
        _set(existing, "lastTransitionTime", _new_time(new, now, typed=not isinstance(existing, Mapping)))
        changed = True
    for key in ("reason", "message", "observedGeneration"):
        if _carries(new, key) and _get(existing, key) != _get(new, key):
            _set(existing, key, _get(new, key))
            changed = True
    return changed


def remove_status_condition(conditions: list[C], type_: str) -> bool:
    """Remove the condition of `type_` from `conditions` in place — every entry of it, as
    `meta.RemoveStatusCondition` does; returns whether one was there."""
    before = len(conditions)
    conditions[:] = [c for c in conditions if _get(c, "type") != type_]
    return len(conditions) != before


__all__ = [
    "AnyCondition",
    "TypedCondition",
    "condition",
    "find_status_condition",
    "is_status_condition_true",
    "kept_transition_time",
    "remove_status_condition",
    "set_status_condition",
]
