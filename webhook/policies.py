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

from ballast.api.ballast.v1 import ClusterResourcePolicy, ResourcePolicy
from ballast.internal.policy import validate_policy
from ballast.runtime import WebhookServer

from .specs import SPEC_UNCHANGED, SpecValidation, invalid_message

VALIDATE_PATH = "/validate-ballast-policies"
POLICY_KINDS = (ClusterResourcePolicy.KIND, ResourcePolicy.KIND)

invalid_policy_message = invalid_message
validate_policy_request = SpecValidation(dict.fromkeys(POLICY_KINDS, validate_policy), subject="policy")
"""The `/validate-ballast-policies` handler (CREATE and UPDATE of both policy kinds): denied (422 Invalid) with
every `validate_policy` problem (see `webhook.specs`)."""

__all__ = ["POLICY_KINDS", "SPEC_UNCHANGED", "VALIDATE_PATH", "invalid_policy_message", "register",
           "validate_policy_request"]  # fmt: skip


def register(server: WebhookServer) -> None:
    """Serve `/validate-ballast-policies` on `server`."""
    server.register(VALIDATE_PATH, validate_policy_request)
