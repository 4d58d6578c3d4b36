"""Pieces of `meta/v1` shared by every kind: ObjectMeta, LabelSelector, Condition and Time — the framework's
(`ballast.runtime.crd.meta`), re-exported for the kinds of `ballast.api`.

`ObjectMeta` is lenient: it types the fields controllers read and keeps every other field (managedFields,
future additions) as it came. `Condition` has the fields of `metav1.Condition`. The condition helpers are the
runtime's (`ballast.runtime.conditions`, on typed models and dicts alike):
`set_status_condition` follows `meta.SetStatusCondition`, so `lastTransitionTime` moves only when the status flips.
"""

from __future__ import annotations

from ballast.runtime.crd.meta import (
    CONDITION_REASON_PATTERN,
    CONDITION_TYPE_PATTERN,
    Condition,
    ConditionList,
    Conditions,
    ConditionStatus,
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    OwnerReference,
    Time,
    find_status_condition,
    remove_status_condition,
    set_status_condition,
)

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
