"""Write-time validation of our kinds: what `/validate-ballast-policies`, `/validate-ballast-configuration` and
`/validate-kupid` share.

    validate = SpecValidation({"MetricsSource": validate_metrics_source}, subject="configuration")
    validate = ObjectValidation({"PodSchedulingPolicy": validate_scheduling_policy}, subject="policy",
                                group="kupid.gardener.cloud")
    server.register(path, validate)

Each kind maps to a pure validator returning its problems, each named by its field path: `SpecValidation` gives
it the spec, `ObjectValidation` the whole object (for checks of `metadata` too). An object with problems is denied
with 422 Invalid in Kubernetes' `NewInvalid` wording under the handler's API group; an UPDATE that leaves what is
validated as it was (for a spec validation: the spec; for an object validation: the spec, the name, and the
finalizers unless some are added) is allowed, so an object stored before validation existed can still be edited,
have its finalizers removed and be deleted. A request without an object, of another kind, or whose spec (or
metadata) is not an object is answered 400.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ballast.api.ballast.v1 import GROUP
from ballast.runtime import AdmissionRequest, AdmissionResponse, allowed, denied, errored
from ballast.runtime.log import get_logger

SPEC_UNCHANGED = "spec unchanged"
SpecValidator = Callable[[Mapping[str, Any]], list[str]]
"""A spec (wire dict) → its problems (`spec.x.y: …`); empty when valid."""
ObjectValidator = Callable[[Mapping[str, Any]], list[str]]
"""A whole object (wire dict) → its problems (`metadata.name: …`, `spec.x.y: …`); empty when valid."""

_log = get_logger("ballast.webhook")


def invalid_message(kind: str, name: str, problems: list[str], group: str = GROUP) -> str:
    """Kubernetes' `NewInvalid` wording: `<Kind>.<group> "<name>" is invalid: <problem>`, or `[p1, p2]` for
    several."""
    detail = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
    return f'{kind}.{group} "{name}" is invalid: {detail}'


def _spec(obj: Mapping[str, Any] | None) -> object:
    return (obj or {}).get("spec") or {}


def _metadata(obj: Mapping[str, Any] | None) -> object:
    return (obj or {}).get("metadata") or {}


@dataclass(frozen=True)
class SpecValidation:
    """An admission handler validating the spec of each kind in `validators`; `subject` names what it refuses in
    its log line (`refused an invalid <subject>`, with the object's name under that key); `group` is the API
    group the denial names."""

    validators: Mapping[str, SpecValidator]
    subject: str
    group: str = GROUP

    def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        kind = str(request.kind.get("kind") or "")
        validate = self.validators.get(kind)
        if validate is None:
            return errored(400, f"expected a {' or '.join(self.validators)}, got {kind or 'no kind'}")
        if request.object is None:
            return errored(400, "the request has no object")
        malformed = self._malformed(request.object)
        if malformed is not None:
            return errored(400, malformed)
        if request.operation == "UPDATE" and self._unchanged(request.old_object, request.object):
            return allowed(SPEC_UNCHANGED)
        problems = self._problems(validate, request.object)
        if not problems:
            return allowed()
        metadata = _metadata(request.object)
        name = request.name or str((metadata.get("name") if isinstance(metadata, Mapping) else "") or "")
        _log.info(f"refused an invalid {self.subject}", extra={"kind": kind, self.subject: name, "problems": problems})
        return denied(invalid_message(kind, name, problems, self.group), code=422, reason="Invalid")

    def _malformed(self, obj: Mapping[str, Any]) -> str | None:
        """Why `obj` cannot be validated at all, or None."""
        spec = _spec(obj)
        if not isinstance(spec, Mapping):
            return f"spec must be an object, got {type(spec).__name__}"
        return None

    def _unchanged(self, old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
        """Whether an UPDATE from `old` to `new` leaves what is validated as it was."""
        return _spec(old) == _spec(new)

    def _problems(self, validate: SpecValidator, obj: Mapping[str, Any]) -> list[str]:
        spec = _spec(obj)
        return validate(spec) if isinstance(spec, Mapping) else []  # not a mapping: refused by `_malformed`


def _finalizers(metadata: object) -> list[Any]:
    finalizers = metadata.get("finalizers") if isinstance(metadata, Mapping) else None
    return list(finalizers) if isinstance(finalizers, list) else []


@dataclass(frozen=True)
class ObjectValidation(SpecValidation):
    """A `SpecValidation` whose validators see the whole object (`ObjectValidator`). An UPDATE is left alone
    when the spec and `metadata.name` are unchanged and no finalizer is added (removing one must work, or an
    invalid object stored earlier could never finish deleting)."""

    def _malformed(self, obj: Mapping[str, Any]) -> str | None:
        metadata = _metadata(obj)
        if not isinstance(metadata, Mapping):
            return f"metadata must be an object, got {type(metadata).__name__}"
        return super()._malformed(obj)

    def _unchanged(self, old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
        if not super()._unchanged(old, new):
            return False
        before, after = _metadata(old), _metadata(new)
        if not isinstance(before, Mapping) or not isinstance(after, Mapping) or before.get("name") != after.get("name"):
            return False
        kept = _finalizers(before)
        return all(finalizer in kept for finalizer in _finalizers(after))

    def _problems(self, validate: ObjectValidator, obj: Mapping[str, Any]) -> list[str]:
        return validate(obj)
