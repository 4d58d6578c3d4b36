"""Admission: `AdmissionReview` in and out, handlers, and JSON patches from mutated copies
(controller-runtime's `webhook/admission`).

    def add_team_label(request: AdmissionRequest) -> AdmissionResponse:
        pod = request.object_copy()
        pod["metadata"].setdefault("labels", {})["team"] = "platform"
        return patched(request, pod)          # RFC 6902 patch diffed against the request's object

Errors travel inside the review (`allowed: false` with `status.code`), never as HTTP errors, and a review
always answers with the request's uid and apiVersion (v1 or v1beta1).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonpatch
import orjson

SUPPORTED_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")


class ReviewError(ValueError):
    """The body is not an AdmissionReview we can answer (the message says what is wrong)."""

    def __init__(self, message: str, code: int = 400) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class AdmissionRequest:
    """The `request` of an AdmissionReview, with the objects already decoded (dicts)."""

    uid: str
    kind: Mapping[str, str]
    resource: Mapping[str, str]
    operation: str
    name: str = ""
    namespace: str = ""
    sub_resource: str = ""
    object: dict[str, Any] | None = None
    old_object: dict[str, Any] | None = None
    dry_run: bool = False
    user_info: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def object_copy(self) -> dict[str, Any]:
        """A deep copy of `object` to mutate (the original stays the base of the patch)."""
        copied: dict[str, Any] = orjson.loads(orjson.dumps(self.object or {}))
        return copied


@dataclass
class AdmissionResponse:
    """What the handler decided; `patch` holds RFC 6902 operations (sent as base64 with patchType JSONPatch)."""

    allowed: bool
    code: int = 200
    message: str = ""
    reason: str = ""
    patch: list[dict[str, Any]] | None = None
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] | None = None  # the status's details (name, group, kind, causes) of a refusal


Handler = Callable[[AdmissionRequest], AdmissionResponse]


def allowed(message: str = "", *, warnings: Sequence[str] = ()) -> AdmissionResponse:
    return AdmissionResponse(True, 200, message, warnings=list(warnings))


def denied(message: str, *, code: int = 403, reason: str = "Forbidden") -> AdmissionResponse:
    """Refuse the request; `message` is what the user sees after "admission webhook ... denied the request"."""
    return AdmissionResponse(False, code, message, reason)


def errored(code: int, message: str) -> AdmissionResponse:
    """The webhook failed to decide (bad request, internal error); the API server applies the failurePolicy."""
    return AdmissionResponse(False, code, message)


def patched(
    request: AdmissionRequest, mutated: Mapping[str, Any], *, warnings: Sequence[str] = ()
) -> AdmissionResponse:
    """Allow with the JSON patch that turns the request's object into `mutated` (no patch if equal)."""
    operations = json_patch(request.object or {}, mutated)
    return AdmissionResponse(True, 200, patch=operations or None, warnings=list(warnings))


def json_patch(old: Any, new: Any) -> list[dict[str, Any]]:
    """RFC 6902 operations that turn `old` into `new`, descending only where they differ.

    A mutating webhook changes a few fields of a large object; `jsonpatch.make_patch` serializes every list
    item to diff lists and costs ~0.5 ms on a 4.6 KB pod, two thirds of a request (benchmarks/webhook.py).
    Here equal subtrees are skipped at C speed (`==`, confirmed by `orjson` so `1`, `1.0` and `True` stay
    apart), equal-length lists are compared item by item, items appended to a list are one `add` each, and only
    another change of length is handed to jsonpatch, which keeps that patch minimal.
    """
    operations: list[dict[str, Any]] = []
    _diff(old, new, "", operations)
    return operations


def _same(old: Any, new: Any) -> bool:
    if old is new:  # a subtree the mutated object shares with the request's: nothing to compare
        return True
    if type(old) is not type(new) or old != new:
        return False
    if isinstance(old, dict | list | float):  # `==` equates 1, 1.0 and True inside containers, and 0.0 with -0.0
        try:
            return orjson.dumps(old) == orjson.dumps(new)
        except orjson.JSONEncodeError:
            return False  # not plain JSON: compare piece by piece
    return True


def _diff(old: Any, new: Any, path: str, operations: list[dict[str, Any]]) -> None:
    if _same(old, new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old.keys() - new.keys():
            operations.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in new.items():
            if key in old:
                if old[key] is not value:  # a shared subtree: no path to build
                    _diff(old[key], value, f"{path}/{_escape(key)}", operations)
            else:
                operations.append({"op": "add", "path": f"{path}/{_escape(key)}", "value": value})
    elif isinstance(old, list) and isinstance(new, list):
        _diff_lists(old, new, path, operations)
    else:
        operations.append({"op": "replace", "path": path, "value": new})


def _diff_lists(old: list[Any], new: list[Any], path: str, operations: list[dict[str, Any]]) -> None:
    if len(old) == len(new):
        for index, (before, after) in enumerate(zip(old, new, strict=True)):
            _diff(before, after, f"{path}/{index}", operations)
    elif len(new) > len(old) and _same(old, new[: len(old)]):
        # appended items (a merged toleration, a sidecar at the end): one `add` each, without a list diff
        for index in range(len(old), len(new)):
            operations.append({"op": "add", "path": f"{path}/{index}", "value": new[index]})
    else:
        for operation in jsonpatch.make_patch(old, new).patch:
            operation["path"] = path + operation["path"]
            if "from" in operation:
                operation["from"] = path + operation["from"]
            operations.append(operation)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def decode_review(body: bytes) -> tuple[str, AdmissionRequest]:
    """Parse an AdmissionReview; returns (apiVersion to answer with, request). Raises ReviewError."""
    try:
        review = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ReviewError(f"the body is not JSON: {exc}") from exc
    if not isinstance(review, dict):
        raise ReviewError("the body is not a JSON object")
    api_version = review.get("apiVersion")
    if review.get("kind") != "AdmissionReview" or api_version not in SUPPORTED_VERSIONS:
        raise ReviewError(
            f"expected an AdmissionReview of {' or '.join(SUPPORTED_VERSIONS)}, "
            f"got {api_version!r} {review.get('kind')!r}"
        )
    raw = review.get("request")
    if not isinstance(raw, dict) or not raw.get("uid"):
        raise ReviewError("the AdmissionReview has no request with a uid")
    obj, old = raw.get("object"), raw.get("oldObject")
    if any(value is not None and not isinstance(value, dict) for value in (obj, old)):
        raise ReviewError("request.object and request.oldObject must be JSON objects")
    _check_types(raw)
    request = AdmissionRequest(
        uid=raw["uid"],
        kind=raw.get("kind") or {},
        resource=raw.get("resource") or {},
        operation=raw.get("operation") or "",
        name=raw.get("name") or "",
        namespace=raw.get("namespace") or "",
        sub_resource=raw.get("subResource") or "",
        object=obj,
        old_object=old,
        dry_run=bool(raw.get("dryRun")),
        user_info=raw.get("userInfo") or {},
        options=raw.get("options"),
        raw=raw,
    )
    return str(api_version), request


_FIELD_TYPES: tuple[tuple[str, type, str], ...] = (
    *((key, str, "a string") for key in ("uid", "operation", "name", "namespace", "subResource")),
    *((key, dict, "a JSON object") for key in ("kind", "resource", "userInfo", "options")),
    ("dryRun", bool, "a boolean"),
)


def _check_types(raw: Mapping[str, Any]) -> None:
    """Each field the handlers read has its type in the API (null counts as absent), as a typed decoder
    checks: a list read as a namespace would otherwise reach a URL path as its `repr`."""
    for key, expected, what in _FIELD_TYPES:
        value = raw.get(key)
        if value is not None and not isinstance(value, expected):
            raise ReviewError(f"request.{key} must be {what}, got {type(value).__name__}")


def encode_review(api_version: str, uid: str, response: AdmissionResponse) -> bytes:
    """The AdmissionReview answer for `response` (controller-runtime's `Complete`)."""
    body: dict[str, Any] = {"uid": uid, "allowed": response.allowed}
    status: dict[str, Any] = {"code": response.code}
    if response.message:
        status["message"] = response.message
    if response.reason:
        status["reason"] = response.reason
    if response.details:
        status["details"] = response.details
    if not response.allowed:
        status["status"] = "Failure"
    body["status"] = status
    if response.patch:
        body["patchType"] = "JSONPatch"
        body["patch"] = base64.b64encode(orjson.dumps(response.patch)).decode()
    if response.warnings:
        body["warnings"] = response.warnings
    if response.audit_annotations:
        body["auditAnnotations"] = response.audit_annotations
    version = api_version if api_version in SUPPORTED_VERSIONS else SUPPORTED_VERSIONS[0]
    return orjson.dumps({"apiVersion": version, "kind": "AdmissionReview", "response": body})


__all__ = [
    "SUPPORTED_VERSIONS",
    "AdmissionRequest",
    "AdmissionResponse",
    "Handler",
    "ReviewError",
    "allowed",
    "decode_review",
    "denied",
    "encode_review",
    "errored",
    "json_patch",
    "patched",
]
