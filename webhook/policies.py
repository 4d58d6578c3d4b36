"""Write-time validation of ClusterResourcePolicies and ResourcePolicies (docs/design.md, difference 18).

The Go operator finds a bad regex, label selector or quantity only when it resolves a policy (and then fails
resolution for every pod); we refuse it when it is written, with every problem named by its field path, in the
shape of a Kubernetes validation error:

    ClusterResourcePolicy.ballast.tightlinesoftware.com "fleet" is invalid:
      spec.selector.namespaces.include[1]: invalid regex "/(/": missing ): (

A policy stored before the webhook existed keeps working (item 8 skips only that policy at resolve time), and
an UPDATE that leaves its spec as it was (labels, annotations, finalizers) is allowed, so it can still be
edited or deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ballast.api.ballast.v1 import GROUP, ClusterResourcePolicy, ResourcePolicy
from ballast.internal.policy import validate_policy
from ballast.internal.runtime import AdmissionRequest, AdmissionResponse, WebhookServer, allowed, denied, errored
from ballast.internal.runtime.log import get_logger

VALIDATE_PATH = "/validate-ballast-policies"
POLICY_KINDS = (ClusterResourcePolicy.KIND, ResourcePolicy.KIND)
SPEC_UNCHANGED = "spec unchanged"

_log = get_logger("ballast.webhook")


def invalid_policy_message(kind: str, name: str, problems: list[str]) -> str:
    """Kubernetes' `NewInvalid` wording: `<Kind>.<group> "<name>" is invalid: <problem>`, or `[p1, p2]` for
    several."""
    detail = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
    return f'{kind}.{GROUP} "{name}" is invalid: {detail}'


def validate_policy_request(request: AdmissionRequest) -> AdmissionResponse:
    """The `/validate-ballast-policies` handler (CREATE and UPDATE of both policy kinds).

    Denied (422 Invalid) with every `validate_policy` problem; allowed when there is none, or when an UPDATE
    leaves the spec unchanged. A request without an object, of another kind, or whose spec is not an object
    is answered 400.
    """
    kind = str(request.kind.get("kind") or "")
    if kind not in POLICY_KINDS:
        return errored(400, f"expected a {' or '.join(POLICY_KINDS)}, got {kind or 'no kind'}")
    if request.object is None:
        return errored(400, "the request has no object")
    spec = request.object.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        return errored(400, f"spec must be an object, got {type(spec).__name__}")
    if request.operation == "UPDATE" and _spec(request.old_object) == spec:
        return allowed(SPEC_UNCHANGED)
    problems = validate_policy(spec)
    if not problems:
        return allowed()
    name = request.name or str((request.object.get("metadata") or {}).get("name") or "")
    _log.info("refused an invalid policy", extra={"kind": kind, "policy": name, "problems": problems})
    return denied(invalid_policy_message(kind, name, problems), code=422, reason="Invalid")


def _spec(obj: Mapping[str, Any] | None) -> object:
    return (obj or {}).get("spec") or {}


def register(server: WebhookServer) -> None:
    """Serve `/validate-ballast-policies` on `server`."""
    server.register(VALIDATE_PATH, validate_policy_request)
