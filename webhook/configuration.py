"""Write-time validation of BallastConfigs and MetricsSources (docs/design.md, difference 26).

The Go operator accepts `pollInterval: banana`, an unknown `type`, identity label keys the API server would refuse
on a pod (`"not a label!!"`), repeated keys and `orphanTTL: banana`, and then quietly stops collecting or merges
every workload into one profile. The CRD schema refuses most of these; this handler refuses every problem the
lanes would refuse to use the object for, each named by its field path, in the shape of a Kubernetes validation
error:

    MetricsSource.ballast.tightlinesoftware.com "kubernetes-metrics" is invalid:
      spec.config.pollInterval: invalid duration "-5s": must be longer than 0, such as "60s"

An UPDATE that leaves the spec as it was (labels, annotations, finalizers) is allowed, so an object stored before
validation existed can still be edited or deleted; status writes go to the status subresource and are not sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ballast.api.ballast.v1 import GROUP, BallastConfig, MetricsSource
from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.runtime import AdmissionRequest, AdmissionResponse, WebhookServer, allowed, denied, errored
from ballast.internal.runtime.log import get_logger
from ballast.internal.sources import validate_metrics_source

VALIDATE_PATH = "/validate-ballast-configuration"
VALIDATORS: Mapping[str, Callable[[Mapping[str, Any]], list[str]]] = {
    BallastConfig.KIND: validate_ballast_config,
    MetricsSource.KIND: validate_metrics_source,
}
"""The kinds this handler validates, each with its spec validator."""
SPEC_UNCHANGED = "spec unchanged"

_log = get_logger("ballast.webhook")


def invalid_message(kind: str, name: str, problems: list[str]) -> str:
    """Kubernetes' `NewInvalid` wording: `<Kind>.<group> "<name>" is invalid: <problem>`, or `[p1, p2]` for
    several."""
    detail = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
    return f'{kind}.{GROUP} "{name}" is invalid: {detail}'


def validate_configuration_request(request: AdmissionRequest) -> AdmissionResponse:
    """The `/validate-ballast-configuration` handler (CREATE and UPDATE of BallastConfigs and MetricsSources).

    Denied (422 Invalid) with every problem of the spec; allowed when there is none, or when an UPDATE leaves the
    spec unchanged. A request without an object, of another kind, or whose spec is not an object is answered 400.
    """
    kind = str(request.kind.get("kind") or "")
    validate = VALIDATORS.get(kind)
    if validate is None:
        return errored(400, f"expected a {' or '.join(VALIDATORS)}, got {kind or 'no kind'}")
    if request.object is None:
        return errored(400, "the request has no object")
    spec = request.object.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        return errored(400, f"spec must be an object, got {type(spec).__name__}")
    if request.operation == "UPDATE" and (request.old_object or {}).get("spec") == spec:
        return allowed(SPEC_UNCHANGED)
    problems = validate(spec)
    if not problems:
        return allowed()
    name = request.name or str((request.object.get("metadata") or {}).get("name") or "")
    _log.info("refused an invalid %s", kind, extra={"kind": kind, "object": name, "problems": problems})
    return denied(invalid_message(kind, name, problems), code=422, reason="Invalid")


def register(server: WebhookServer) -> None:
    """Serve `/validate-ballast-configuration` on `server`."""
    server.register(VALIDATE_PATH, validate_configuration_request)
