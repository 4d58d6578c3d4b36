"""Webhooks for custom kinds: a defaulter and a validator on a typed model, registered by a builder
(controller-runtime's `ctrl.NewWebhookManagedBy(mgr).For(&CronJob{}).WithDefaulter(d).WithValidator(v)`,
`admission.CustomDefaulter`, `admission.CustomValidator` and `apierrors.NewInvalid`).

    class CronJobDefaulter:
        def default(self, ctx: AdmissionContext, obj: CronJob) -> None:
            obj.spec.suspend = False if obj.spec.suspend is None else obj.spec.suspend

    class CronJobValidator:
        def validate_create(self, ctx, obj): return check(obj)                 # warnings, or raise Invalid
        def validate_update(self, ctx, old, new): return check(new)
        def validate_delete(self, ctx, obj): return []

    WebhookBuilder(manager).for_(CronJob).with_defaulter(CronJobDefaulter()).with_validator(CronJobValidator()).complete()
    # serves /mutate-batch-tutorial-kubebuilder-io-v1-cronjob and /validate-batch-tutorial-kubebuilder-io-v1-cronjob

- The defaulter gets the AdmissionReview's object decoded into the kind's model and mutates it; the answer is
  the JSON patch of what it changed (fields the model does not declare are kept and never patched away).
- A validator returns warnings (shown by kubectl, sent as `Warning` headers) or raises `Invalid` built from
  `FieldError`s: the answer is a 422 `Invalid` status naming the kind, the name and each field, with one cause
  per field, as the API server's own validation writes it. An `APIStatusError` raised is answered with its
  status; any other exception is a denial carrying its message (logged, never a 500).
- An object that does not fit the model is answered 400 with pydantic's errors as field paths.
- `webhook_configurations(...)` renders the Mutating/ValidatingWebhookConfiguration controller-gen writes for
  the kinds (config/webhook/manifests.yaml); `envtest.manifests.WebhookInstallOptions` installs them pointing at
  a local server.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

import jsonpatch
import orjson
import pydantic

from .admission import AdmissionRequest, AdmissionResponse, Handler, allowed, denied, errored, json_patch
from .apierrors import APIStatusError
from .crd.customresource import CustomResource
from .crd.wire import wire_path
from .log import Logger, get_logger

if TYPE_CHECKING:
    from .manager import Manager
    from .webhook import WebhookServer

K = TypeVar("K", bound=CustomResource)
K_contra = TypeVar("K_contra", bound=CustomResource, contravariant=True)

_log = get_logger("ballast.runtime.webhook")

ErrorType = Literal[
    "FieldValueNotFound",
    "FieldValueRequired",
    "FieldValueDuplicate",
    "FieldValueInvalid",
    "FieldValueNotSupported",
    "FieldValueForbidden",
    "FieldValueTooLong",
    "FieldValueTooMany",
    "InternalError",
    "FieldValueTypeInvalid",
]
_TYPE_TEXT: Mapping[str, str] = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "InternalError": "Internal error",
    "FieldValueTypeInvalid": "Invalid value",
}
_WITHOUT_VALUE = frozenset({"FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong", "InternalError"})
_OMIT = object()


@dataclass(frozen=True)
class FieldError:
    """One field's error (k8s.io/apimachinery's `field.Error`): `field` is the path (`spec.schedule`,
    `spec.containers[0].image`), `type` the cause type, `value` the bad value (left out of the message when not
    given, and always for Required/Forbidden/TooLong/Internal), `detail` the explanation."""

    field: str
    detail: str = ""
    value: Any = _OMIT
    type: ErrorType = "FieldValueInvalid"

    def body(self) -> str:
        """The message without the field (Go's `ErrorBody`): `Invalid value: "*/x": not a cron schedule`."""
        text = _TYPE_TEXT[self.type]
        if self.type not in _WITHOUT_VALUE and self.value is not _OMIT:
            text += f": {_go_value(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"


def invalid(field: str, value: Any, detail: str) -> FieldError:
    """`field.Invalid(path, value, detail)`."""
    return FieldError(field, detail, value, "FieldValueInvalid")


def required(field: str, detail: str = "") -> FieldError:
    """`field.Required(path, detail)`."""
    return FieldError(field, detail, type="FieldValueRequired")


def forbidden(field: str, detail: str) -> FieldError:
    """`field.Forbidden(path, detail)`."""
    return FieldError(field, detail, type="FieldValueForbidden")


def not_supported(field: str, value: Any, valid: Sequence[str]) -> FieldError:
    """`field.NotSupported(path, value, validValues)`."""
    detail = "supported values: " + ", ".join(f'"{v}"' for v in valid) if valid else ""
    return FieldError(field, detail, value, "FieldValueNotSupported")


def _go_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


class Invalid(Exception):  # noqa: N818 (apierrors.NewInvalid; the API's reason is `Invalid`)
    """Raise from a validator (or a defaulter) to refuse an object with field errors: answered 422, reason
    `Invalid`, message `<Kind>.<group> "<name>" is invalid: <field>: <error>[, ...]` and one status cause per
    field, as `apierrors.NewInvalid(groupKind, name, errs)`. `warnings` still reach the client."""

    def __init__(self, errors: FieldError | Sequence[FieldError], *, warnings: Sequence[str] = ()) -> None:
        self.errors: tuple[FieldError, ...] = (errors,) if isinstance(errors, FieldError) else tuple(errors)
        if not self.errors:
            raise ValueError("Invalid needs at least one FieldError")
        self.warnings = list(warnings)
        super().__init__(_aggregate(self.errors))

    def response(self, group: str, kind: str, name: str) -> AdmissionResponse:
        qualified = f"{kind}.{group}" if group else kind
        message = f'{qualified} "{name}" is invalid: {_aggregate(self.errors)}'
        causes = [{"reason": e.type, "message": e.body(), "field": e.field} for e in self.errors]
        details = {"name": name, "group": group, "kind": kind, "causes": causes}
        return AdmissionResponse(False, 422, message, "Invalid", warnings=list(self.warnings), details=details)


def _aggregate(errors: Sequence[FieldError]) -> str:
    """Go's `ErrorList.ToAggregate().Error()`: one message as is, several in brackets, repeats dropped."""
    messages = list(dict.fromkeys(str(e) for e in errors))
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


@dataclass(frozen=True)
class AdmissionContext:
    """What a defaulter or validator is called with besides the object (Go's `ctx` with
    `admission.RequestFromContext`): the request (operation, user, dry run) and a logger naming the object."""

    request: AdmissionRequest
    logger: Logger


class CustomDefaulter(Protocol[K_contra]):
    """`admission.CustomDefaulter`: set defaults on `obj` in place. Raising refuses the request."""

    def default(self, ctx: AdmissionContext, obj: K_contra, /) -> None: ...


class CustomValidator(Protocol[K_contra]):
    """`admission.CustomValidator`: each returns warnings (or None) or raises `Invalid` to refuse."""

    def validate_create(self, ctx: AdmissionContext, obj: K_contra, /) -> Sequence[str] | None: ...

    def validate_update(self, ctx: AdmissionContext, old: K_contra, new: K_contra, /) -> Sequence[str] | None: ...

    def validate_delete(self, ctx: AdmissionContext, obj: K_contra, /) -> Sequence[str] | None: ...


# ------------------------------------------------------------------------------------------------ paths


def mutating_path(kind: type[CustomResource]) -> str:
    """`/mutate-<group with dots as dashes>-<version>-<lowercase kind>`, as controller-runtime and controller-gen."""
    return f"/mutate-{_path_suffix(kind)}"


def validating_path(kind: type[CustomResource]) -> str:
    """`/validate-<group with dots as dashes>-<version>-<lowercase kind>`."""
    return f"/validate-{_path_suffix(kind)}"


def _path_suffix(kind: type[CustomResource]) -> str:
    return f"{kind.GROUP.replace('.', '-')}-{kind.VERSION}-{kind.KIND.lower()}"


# ----------------------------------------------------------------------------------------------- handlers


class _Decoded(Exception):  # noqa: N818 (internal: carries the 400 answer)
    def __init__(self, response: AdmissionResponse) -> None:
        super().__init__(response.message)
        self.response = response


def _decode(kind: type[K], raw: Mapping[str, Any] | None, what: str) -> K:
    if raw is None:
        raise _Decoded(errored(400, f"the admission request has no {what} to decode as {kind.KIND}"))
    try:
        return kind.from_wire(raw)  # what the API server sent: a newer schema's fields kept
    except pydantic.ValidationError as exc:
        problems = "; ".join(f"{wire_path(e['loc']) or '<object>'}: {e['msg']}" for e in exc.errors())
        raise _Decoded(
            errored(400, f"cannot decode the {what} as {kind.API_VERSION} {kind.KIND}: {problems}")
        ) from None


def _context(request: AdmissionRequest, kind: type[CustomResource]) -> AdmissionContext:
    logger = _log.with_values(
        webhook_kind=kind.KIND, name=request.name, namespace=request.namespace, operation=request.operation
    )
    return AdmissionContext(request, logger)


def _refusal(exc: Exception, kind: type[CustomResource], name: str, ctx: AdmissionContext) -> AdmissionResponse:
    """What a raising defaulter or validator answers (controller-runtime: an APIStatus as its status, any other
    error `Denied(err.Error())`)."""
    if isinstance(exc, Invalid):
        return exc.response(kind.GROUP, kind.KIND, name)
    if isinstance(exc, APIStatusError):
        details = exc.details or None
        return AdmissionResponse(False, exc.status, exc.message, exc.reason, details=details)
    ctx.logger.warning("the %s webhook refused the request: %s: %s", kind.KIND, type(exc).__name__, exc)
    return denied(str(exc) or type(exc).__name__)


def _name(request: AdmissionRequest, obj: CustomResource) -> str:
    return request.name or obj.metadata.name or obj.metadata.generate_name or ""


def defaulting_handler(kind: type[K], defaulter: CustomDefaulter[K]) -> Handler:
    """The mutating handler: decode the object as `kind`, call `defaulter.default`, answer the patch."""

    def handle(request: AdmissionRequest) -> AdmissionResponse:
        ctx = _context(request, kind)
        if request.operation == "DELETE":  # nothing to default (controller-runtime allows it too)
            return allowed()
        try:
            obj = _decode(kind, request.object, "object")
        except _Decoded as exc:
            return exc.response
        before = obj.to_wire()
        try:
            defaulter.default(ctx, obj)
        except Exception as exc:
            return _refusal(exc, kind, _name(request, obj), ctx)
        try:
            after = obj.to_wire()
        except Exception as exc:  # the defaulter set a value the model cannot serialise
            return _refusal(exc, kind, _name(request, obj), ctx)
        operations = _patch_of_changes(request.object or {}, before, after)
        return AdmissionResponse(True, 200, patch=operations or None)

    return handle


def _patch_of_changes(raw: Mapping[str, Any], before: Any, after: Any) -> list[dict[str, Any]]:
    """The patch from the request's object to it with the defaulter's changes: the model's own form of the
    object (`before`) may differ from the raw one (fields it fills in or normalises), which must not be
    patched, so the changes are the difference `before` → `after`, applied to the raw object."""
    changes = json_patch(before, after)
    if not changes:
        return []
    try:
        target = jsonpatch.apply_patch(copy.deepcopy(dict(raw)), changes)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
        target = after  # a change under a node the raw object lacks: patch towards the model's form
    return json_patch(dict(raw), target)


def validating_handler(kind: type[K], validator: CustomValidator[K]) -> Handler:
    """The validating handler: decode the object (and the old one on UPDATE, the old one on DELETE) as `kind`
    and call `validate_create`, `validate_update` or `validate_delete`."""

    def handle(request: AdmissionRequest) -> AdmissionResponse:
        ctx = _context(request, kind)
        try:
            if request.operation == "CREATE":
                obj = _decode(kind, request.object, "object")
                call: Callable[[], Sequence[str] | None] = lambda: validator.validate_create(ctx, obj)  # noqa: E731
            elif request.operation == "UPDATE":
                obj = _decode(kind, request.object, "object")
                old = _decode(kind, request.old_object, "oldObject")
                call = lambda: validator.validate_update(ctx, old, obj)  # noqa: E731
            elif request.operation == "DELETE":
                obj = _decode(kind, request.old_object, "oldObject")
                call = lambda: validator.validate_delete(ctx, obj)  # noqa: E731
            else:
                return errored(400, f"unknown operation {request.operation!r}")
        except _Decoded as exc:
            return exc.response
        try:
            warnings = call()
        except Exception as exc:
            return _refusal(exc, kind, _name(request, obj), ctx)
        if warnings is not None and (isinstance(warnings, str) or not all(isinstance(w, str) for w in warnings)):
            return _refusal(TypeError("a validator returns a list of warning strings"), kind, "", ctx)
        return allowed(warnings=list(warnings or ()))

    return handle


# ------------------------------------------------------------------------------------------------ builder


@dataclass(frozen=True)
class KindWebhooks:
    """What `complete()` registered for one kind, and what its webhook configurations say: the paths (None when
    that webhook is not there) and whether the validating webhook is called on DELETE."""

    kind: type[CustomResource]
    mutating_path: str | None = None
    validating_path: str | None = None
    validate_delete: bool = False

    @classmethod
    def of(
        cls, kind: type[CustomResource], *, defaulting: bool = True, validating: bool = True,
        validate_delete: bool = False,
    ) -> KindWebhooks:  # fmt: skip
        """The webhooks of `kind` at controller-runtime's paths (for rendering without a manager)."""
        return cls(
            kind,
            mutating_path(kind) if defaulting else None,
            validating_path(kind) if validating else None,
            validate_delete and validating,
        )


class WebhookBuilder:
    """`ctrl.NewWebhookManagedBy(mgr)`: `for_(Kind)`, then `with_defaulter(d)` and/or `with_validator(v)`, then
    `complete()` registers the handlers on the manager's webhook server (the first one added, or a new default
    `WebhookServer` added to the manager), or on `server` when given."""

    def __init__(self, manager: Manager | None = None, *, server: WebhookServer | None = None) -> None:
        if manager is None and server is None:
            raise ValueError("WebhookBuilder needs a manager or a server")
        self.manager = manager
        self.server = server

    def for_(self, kind: type[K]) -> KindWebhookBuilder[K]:
        """`For(&Kind{})`: the kind the webhooks decode objects as (a CustomResource subclass)."""
        if not (isinstance(kind, type) and issubclass(kind, CustomResource) and "KIND" in kind.__dict__):
            raise TypeError(f"for_() takes a CustomResource kind class, got {kind!r}")
        return KindWebhookBuilder(self, kind)

    def webhook_server(self) -> WebhookServer:
        """The server the handlers go to."""
        from .webhook import WebhookServer  # noqa: PLC0415 (loaded with the builder's first use, not the package)

        if self.server is not None:
            return self.server
        assert self.manager is not None
        for candidate in self.manager.webhook_servers:
            if isinstance(candidate, WebhookServer):
                self.server = candidate
                return candidate
        self.server = WebhookServer()
        self.manager.add_webhook_server(self.server)
        return self.server


class KindWebhookBuilder(Generic[K]):
    """`WebhookBuilder.for_(Kind)`: add a defaulter and/or a validator, then `complete()`."""

    def __init__(self, builder: WebhookBuilder, kind: type[K]) -> None:
        self.builder = builder
        self.kind = kind
        self._defaulter: CustomDefaulter[K] | None = None
        self._validator: CustomValidator[K] | None = None
        self._validate_delete = False
        self._mutating_path: str | None = None
        self._validating_path: str | None = None

    def with_defaulter(self, defaulter: CustomDefaulter[K], *, path: str | None = None) -> KindWebhookBuilder[K]:
        """Serve `defaulter` (at controller-runtime's mutate path, or `path`)."""
        self._defaulter, self._mutating_path = defaulter, path
        return self

    def with_validator(
        self, validator: CustomValidator[K], *, validate_delete: bool = False, path: str | None = None
    ) -> KindWebhookBuilder[K]:
        """Serve `validator` (at the validate path, or `path`); `validate_delete` puts DELETE in its webhook
        configuration (controller-gen's `verbs=create;update;delete`)."""
        self._validator, self._validate_delete, self._validating_path = validator, validate_delete, path
        return self

    def complete(self) -> KindWebhooks:
        """Register the handlers; returns the paths (for `webhook_configurations`). Raises ValueError without a
        defaulter or validator, or when a path is already registered."""
        kind = self.kind
        if self._defaulter is None and self._validator is None:
            raise ValueError(f"the {kind.KIND} webhook needs with_defaulter() or with_validator()")
        server = self.builder.webhook_server()
        mutate = validate = None
        if self._defaulter is not None:
            mutate = self._mutating_path or mutating_path(kind)
            server.register(mutate, defaulting_handler(kind, self._defaulter))
        if self._validator is not None:
            validate = self._validating_path or validating_path(kind)
            server.register(validate, validating_handler(kind, self._validator))
        registered = KindWebhooks(kind, mutate, validate, self._validate_delete and validate is not None)
        server.kind_webhooks.append(registered)
        return registered


# ----------------------------------------------------------------------------------------- configurations

MUTATING_CONFIGURATION = "mutating-webhook-configuration"
VALIDATING_CONFIGURATION = "validating-webhook-configuration"


def webhook_configurations(
    webhooks: Sequence[KindWebhooks],
    *,
    service_name: str = "webhook-service",
    service_namespace: str = "system",
    mutating_name: str = MUTATING_CONFIGURATION,
    validating_name: str = VALIDATING_CONFIGURATION,
    domain: str = "kb.io",
    failure_policy: Literal["Fail", "Ignore"] = "Fail",
) -> list[dict[str, Any]]:
    """The MutatingWebhookConfiguration and ValidatingWebhookConfiguration controller-gen writes for these
    webhooks (each left out when it has no webhook): one webhook per kind named `m<kind>-<version>.<domain>` /
    `v<kind>-<version>.<domain>` (kubebuilder's scaffold), a service client config with the path, rules for the
    kind's group/version/resource, CREATE and UPDATE (and DELETE for a validator that asked for it),
    `sideEffects: None`, `admissionReviewVersions: [v1]`, `failurePolicy: Fail`."""
    mutating: list[dict[str, Any]] = []
    validating: list[dict[str, Any]] = []
    for hooks in webhooks:
        kind = hooks.kind
        if hooks.mutating_path is not None:
            mutating.append(_webhook("m", kind, hooks.mutating_path, ["CREATE", "UPDATE"], service_name,
                                     service_namespace, domain, failure_policy))  # fmt: skip
        if hooks.validating_path is not None:
            operations = ["CREATE", "UPDATE", *(["DELETE"] if hooks.validate_delete else [])]
            validating.append(_webhook("v", kind, hooks.validating_path, operations, service_name,
                                       service_namespace, domain, failure_policy))  # fmt: skip
    rendered: list[dict[str, Any]] = []
    sections: tuple[tuple[str, str, list[dict[str, Any]]], ...] = (
        ("MutatingWebhookConfiguration", mutating_name, mutating),
        ("ValidatingWebhookConfiguration", validating_name, validating),
    )
    for config_kind, name, items in sections:
        if items:
            rendered.append({
                "apiVersion": "admissionregistration.k8s.io/v1", "kind": config_kind,
                "metadata": {"name": name}, "webhooks": sorted(items, key=lambda w: str(w["name"])),
            })  # fmt: skip
    return rendered


def _webhook(
    prefix: str, kind: type[CustomResource], path: str, operations: list[str], service: str, namespace: str,
    domain: str, failure_policy: str,
) -> dict[str, Any]:  # fmt: skip
    return {
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": service, "namespace": namespace, "path": path}},
        "failurePolicy": failure_policy,
        "name": f"{prefix}{kind.KIND.lower()}-{kind.VERSION}.{domain}",
        "rules": [{
            "apiGroups": [kind.GROUP], "apiVersions": [kind.VERSION], "operations": operations,
            "resources": [kind.PLURAL],
        }],
        "sideEffects": "None",
    }  # fmt: skip


__all__ = [
    "MUTATING_CONFIGURATION",
    "VALIDATING_CONFIGURATION",
    "AdmissionContext",
    "CustomDefaulter",
    "CustomValidator",
    "ErrorType",
    "FieldError",
    "Invalid",
    "KindWebhookBuilder",
    "KindWebhooks",
    "WebhookBuilder",
    "defaulting_handler",
    "forbidden",
    "invalid",
    "mutating_path",
    "not_supported",
    "required",
    "validating_handler",
    "validating_path",
    "webhook_configurations",
]
