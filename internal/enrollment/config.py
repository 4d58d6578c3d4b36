"""Whether a BallastConfig can be used: every problem of its spec, each named by its field path.

The identity labels are label keys (qualified names) and none is repeated: a key the API server would refuse on a
pod matches no pod, so every pod falls back to the same placeholder tuple and every workload under a policy would
share one profile (re-keying the real ones into orphans). `orphanTTL` and `retentionWindow` are Go durations.

This is what the validating webhook refuses a BallastConfig with, and what its `Valid=False` condition says. A
stored BallastConfig with a problem (written before validation existed) is not used: nothing is enrolled or
re-keyed, no orphaned profile is deleted and no retention window applies until it is fixed (docs/design.md,
difference 26). `spec.suspended` is still honoured by the kill switch, which only ever stops work.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ballast.api.ballast.v1.ballastconfig import MAX_IDENTITY_LABELS, BallastConfigSpec
from ballast.api.wire import wire_path
from ballast.internal.naming import label_key_problem
from ballast.internal.stats.duration import duration_problem


def validate_ballast_config(spec: BallastConfigSpec | Mapping[str, Any]) -> list[str]:
    """Return a message per problem of a BallastConfig spec (a model, or its JSON as in an AdmissionReview),
    `path: what is wrong`; an empty list means it can be used.

    For example `spec.identityLabels[0]: invalid label key "not a label!!": the name must consist of …`,
    `spec.identityLabels[2]: label key "app" appears more than once (first at spec.identityLabels[0])` or
    `spec.orphanTTL: invalid duration "banana": must be a Go duration such as "168h", "15m" or "1h30m"`. JSON that
    does not fit the model gives the model's problems only. Raises TypeError for anything but a spec or a mapping.
    """
    if isinstance(spec, Mapping):
        try:
            spec = BallastConfigSpec.model_validate(dict(spec))
        except ValidationError as error:
            return [f"{wire_path(detail['loc'], 'spec')}: {detail['msg']}" for detail in error.errors()]
    elif not isinstance(spec, BallastConfigSpec):
        raise TypeError(f"expected a BallastConfigSpec or a mapping, got {type(spec).__name__}")
    problems = _identity_problems(spec.identity_labels)
    for field, text in (("orphanTTL", spec.orphan_ttl), ("retentionWindow", spec.retention_window)):
        problem = duration_problem(text, example="168h")
        if problem is not None:
            problems.append(f"spec.{field}: {problem}")
    return problems


def _identity_problems(keys: Sequence[str]) -> list[str]:
    path = "spec.identityLabels"
    problems: list[str] = []
    if len(keys) > MAX_IDENTITY_LABELS:
        problems.append(f"{path}: at most {MAX_IDENTITY_LABELS} label keys, got {len(keys)}")
    first: dict[str, int] = {}
    for position, key in enumerate(keys):
        problem = label_key_problem(key)
        if problem is not None:
            problems.append(f"{path}[{position}]: {problem}")
        if key in first:
            shown = json.dumps(key, ensure_ascii=False)
            problems.append(
                f"{path}[{position}]: label key {shown} appears more than once (first at {path}[{first[key]}])"
            )
        else:
            first[key] = position
    return problems
