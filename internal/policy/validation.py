"""Write-time validation of a policy spec: every problem, each named by its field path."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ballast.api.ballast.v1.policyspec import ResourcePolicySpec

from .problems import PolicyProblem
from .selector import compile_selector
from .settings import settings_problems

# Fields whose entries are map keys, shown as `field[key]` rather than `field.key`.
_MAP_FIELDS = frozenset({"annotations", "matchLabels", "cvMeanFloor", "resourceThresholds"})


def _field_path(location: Sequence[int | str]) -> str:
    path = "spec"
    in_map = False
    for part in location:
        if isinstance(part, int) or in_map:
            path += f"[{part}]"
            in_map = False
        else:
            path += f".{part}"
            in_map = part in _MAP_FIELDS
    return path


def _schema_problems(error: ValidationError) -> list[PolicyProblem]:
    return [PolicyProblem(_field_path(detail["loc"]), detail["msg"]) for detail in error.errors()]


def policy_problems(spec: ResourcePolicySpec | Mapping[str, Any]) -> list[PolicyProblem]:
    """Return every problem of a policy spec (a model, or its JSON as in an AdmissionReview).

    JSON that does not fit the schema gives the schema's problems only (types, enums, minimums); otherwise the
    regexes, label selector, namespace names, annotation keys, quantities, durations and percentages are
    checked. Raises TypeError for anything but a spec model or a mapping.
    """
    if isinstance(spec, Mapping):
        try:
            spec = ResourcePolicySpec.model_validate(dict(spec))
        except ValidationError as error:
            return _schema_problems(error)
    elif not isinstance(spec, ResourcePolicySpec):
        raise TypeError(f"expected a ResourcePolicySpec or a mapping, got {type(spec).__name__}")
    _, selector_problems = compile_selector(spec.selector)
    return [*selector_problems, *settings_problems(spec)]


def validate_policy(spec: ResourcePolicySpec | Mapping[str, Any]) -> list[str]:
    """Return a message per problem of a policy spec, `path: what is wrong`; an empty list means valid.

    For example `spec.selector.namespaces.include[1]: invalid regex "/(/": missing ): (` or
    `spec.metrics[0].headroom: invalid headroom "x": must be a decimal number > 0 such as "1.2"`. This is what
    the validating webhook refuses a policy with, and what the `Valid=False` condition says. Raises TypeError
    as `policy_problems` does.
    """
    return [str(problem) for problem in policy_problems(spec)]
