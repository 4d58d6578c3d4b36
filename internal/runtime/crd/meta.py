"""Pieces of `meta/v1` shared by every kind: ObjectMeta, LabelSelector, Condition and Time.

`ObjectMeta` is lenient: it types the fields controllers read and keeps every other field (managedFields,
future additions) as it came. `Condition` has the fields of `metav1.Condition`. The condition helpers are the
runtime's (`ballast.runtime.conditions`, on typed models and dicts alike), re-exported here:
`set_status_condition` follows `meta.SetStatusCondition`, so `lastTransitionTime` moves only when the status flips.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, ConfigDict, Field, GetCoreSchemaHandler, PlainSerializer, Strict
from pydantic_core import CoreSchema

from ballast.runtime.clock import rfc3339
from ballast.runtime.conditions import find_status_condition, remove_status_condition, set_status_condition

from .wire import ATOMIC_LIST, ATOMIC_STRUCT, Int64, WireModel, list_map


@lru_cache(maxsize=4096)
def _utc_seconds(value: datetime) -> datetime:
    # metav1.Time carries whole seconds; a naive datetime is taken as UTC, never as local time. Cached: a status
    # repeats one timestamp many times, and equal datetimes (one instant, or one naive value) give one result.
    offset = value.utcoffset()
    if offset is None or (not offset and value.tzinfo is not UTC):
        value = value.replace(tzinfo=UTC)  # naive, or another zone at UTC (pydantic's own `Z` zone)
    elif offset:
        value = value.astimezone(UTC)
    return value.replace(microsecond=0) if value.microsecond else value


Time = Annotated[
    datetime,
    Strict(False),
    AfterValidator(_utc_seconds),
    PlainSerializer(rfc3339, return_type=str),
]
"""A `metav1.Time`: parsed from RFC 3339, held as an aware UTC datetime truncated to seconds, written as
`2026-01-02T03:04:05Z`."""


class OwnerReference(WireModel):
    """An entry of `metadata.ownerReferences`."""

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(WireModel):
    """`metadata` of any object. Every field is optional; fields not listed here are kept as they came."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: Time | None = None
    deletion_timestamp: Time | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None


class LabelSelectorRequirement(WireModel):
    """A requirement on labels: key, operator (In, NotIn, Exists, DoesNotExist) and values."""

    key: str
    """The label key the selector applies to."""
    operator: str
    """How the key relates to the values: In, NotIn, Exists or DoesNotExist."""
    values: Annotated[list[str] | None, ATOMIC_LIST] = None
    """Values for In and NotIn; empty for Exists and DoesNotExist."""


class LabelSelector(WireModel):
    """A `metav1.LabelSelector`: `matchLabels` and `matchExpressions`, ANDed. Replaced as a whole on apply."""

    model_config = ConfigDict(json_schema_extra=ATOMIC_STRUCT)

    match_labels: dict[str, str] | None = None
    """Labels that must all be present with exactly these values."""
    match_expressions: Annotated[list[LabelSelectorRequirement] | None, ATOMIC_LIST] = None
    """Requirements that must all hold."""


ConditionStatus = Literal["True", "False", "Unknown"]

CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
CONDITION_MESSAGE_MAX_LENGTH = 32768
"""The longest `message` a `metav1.Condition` may carry (characters, as the API server counts them)."""


def _transition_time_required(schema: dict[str, Any]) -> None:
    # The CRD requires lastTransitionTime (metav1.Condition's `+required`); only the Python side may leave it out
    # until set_status_condition fills it.
    required = schema.setdefault("required", [])
    if "lastTransitionTime" not in required:
        required.insert(2, "lastTransitionTime")


class Condition(WireModel):
    """One entry of status.conditions, shaped like metav1.Condition (the API server checks the same rules)."""

    model_config = ConfigDict(json_schema_extra=_transition_time_required)

    type: str = Field(max_length=316, pattern=CONDITION_TYPE_PATTERN)
    """The condition's type in CamelCase, e.g. Ready; unique within the list."""
    status: ConditionStatus
    """True, False or Unknown."""
    observed_generation: Int64 | None = Field(default=None, ge=0)
    """The metadata.generation the condition was set from."""
    # Required on the wire (the schema says so); may be left out in code: set_status_condition fills it from the
    # caller's clock, as Go's meta.SetStatusCondition does.
    last_transition_time: Time | None = None
    """When the status last changed."""
    reason: str = Field(min_length=1, max_length=1024, pattern=CONDITION_REASON_PATTERN)
    """A CamelCase word saying why the condition has this status."""
    message: str = Field(max_length=CONDITION_MESSAGE_MAX_LENGTH)
    """A human-readable message; may be empty."""


class ConditionList(list[Condition]):
    """The list a `Conditions` field holds: a list of `Condition` that says so even while empty, so
    `set_status_condition(obj.status.conditions, {...})` adds a typed `Condition` to a fresh object."""

    element_type: ClassVar[type[Condition]] = Condition

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return handler(list[Condition])  # validated and written as the list it is


def _unique_types(conditions: list[Condition] | None) -> ConditionList:
    # Also turns the declared default (`= ConditionList()`) into this object's own list.
    seen: set[str] = set()
    for condition in conditions or ():
        if condition.type in seen:
            raise ValueError(f"two conditions of type {condition.type!r}; a type may appear once")
        seen.add(condition.type)
    return conditions if isinstance(conditions, ConditionList) else ConditionList(conditions or ())


def _empty(conditions: list[Condition] | None) -> bool:
    return not conditions


Conditions = Annotated[
    list[Condition],
    AfterValidator(_unique_types),
    list_map("type"),
    Field(validate_default=True, exclude_if=_empty),
]
"""`status.conditions`: one entry per type (a duplicate fails validation), merged by type on server-side apply.
Declare it `conditions: Conditions = ConditionList()`: it starts as an empty typed list (Go's nil slice:
`set_status_condition` appends to it, and each object gets its own) and, while empty, is left out of the wire
form, as Go's `omitempty` leaves it out."""

__all__ = [
    "CONDITION_REASON_PATTERN",
    "CONDITION_TYPE_PATTERN",
    "Condition",
    "ConditionList",
    "ConditionStatus",
    "Conditions",
    "LabelSelector",
    "LabelSelectorRequirement",
    "ObjectMeta",
    "OwnerReference",
    "Time",
    "find_status_condition",
    "remove_status_condition",
    "set_status_condition",
]
