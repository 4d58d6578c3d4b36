"""Write-time validation of our kinds' specs: what `/validate-ballast-policies` and
`/validate-ballast-configuration` share.

    validate = SpecValidation({"MetricsSource": validate_metrics_source}, subject="configuration")
    server.register(path, validate)

Each kind maps to a pure validator returning its problems, each named by its field path. A spec with problems
is denied with 422 Invalid in Kubernetes' `NewInvalid` wording; an UPDATE that leaves the spec as it was
(labels, annotations, finalizers) is allowed, so an object stored before validation existed can still be edited
or deleted. A request without an object, of another kind, or whose spec is not an object is answered 400.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ballast.api.ballast.v1 import GROUP
from ballast.internal.runtime import AdmissionRequest, AdmissionResponse, allowed, denied, errored
from ballast.internal.runtime.log import get_logger

SPEC_UNCHANGED = "spec unchanged"
SpecValidator = Callable[[Mapping[str, Any]], list[str]]
"""A spec (wire dict) → its problems (`spec.x.y: …`); empty when valid."""

_log = get_logger("ballast.webhook")


def invalid_message(kind: str, name: str, problems: list[str]) -> str:
    """Kubernetes' `NewInvalid` wording: `<Kind>.<group> "<name>" is invalid: <problem>`, or `[p1, p2]` for
    several."""
    detail = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
    return f'{kind}.{GROUP} "{name}" is invalid: {detail}'


def _spec(obj: Mapping[str, Any] | None) -> object:
    return (obj or {}).get("spec") or {}


@dataclass(frozen=True)
class SpecValidation:
    """An admission handler validating the spec of each kind in `validators`; `subject` names what it refuses in
    its log line (`refused an invalid <subject>`, with the object's name under that key)."""

    validators: Mapping[str, SpecValidator]
    subject: str

    def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        kind = str(request.kind.get("kind") or "")
        validate = self.validators.get(kind)
        if validate is None:
            return errored(400, f"expected a {' or '.join(self.validators)}, got {kind or 'no kind'}")
        if request.object is None:
            return errored(400, "the request has no object")
        spec = _spec(request.object)
        if not isinstance(spec, Mapping):
            return errored(400, f"spec must be an object, got {type(spec).__name__}")
        if request.operation == "UPDATE" and _spec(request.old_object) == spec:
            return allowed(SPEC_UNCHANGED)
        problems = validate(spec)
        if not problems:
            return allowed()
        name = request.name or str((request.object.get("metadata") or {}).get("name") or "")
        _log.info(f"refused an invalid {self.subject}", extra={"kind": kind, self.subject: name, "problems": problems})
        return denied(invalid_message(kind, name, problems), code=422, reason="Invalid")
