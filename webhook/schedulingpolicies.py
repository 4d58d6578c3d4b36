"""Write-time validation of PodSchedulingPolicies and ClusterPodSchedulingPolicies (kupid's validating webhook).

A policy the API server would refuse in a pod spec — a toleration without a key that is not `Exists`, a node
selector key that is no label key, a pod affinity term without a topology key — would be merged into every pod it
selects and break each of them. It is refused when it is written instead, with every problem named by its field
path, in the shape of a Kubernetes validation error:

    PodSchedulingPolicy.kupid.gardener.cloud "spot" is invalid:
      spec.tolerations[1].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", …

An UPDATE that leaves the spec and the name as they were and adds no finalizer (labels, annotations, a finalizer
removed) is allowed, so a policy stored before validation existed can still be relabelled and deleted.
"""

from __future__ import annotations

from ballast.api.kupid.v1alpha1 import GROUP
from ballast.internal.scheduling import CLUSTER_KIND, NAMESPACED_KIND, validate_scheduling_policy
from ballast.runtime import WebhookServer

from .specs import SPEC_UNCHANGED, ObjectValidation, invalid_message

VALIDATE_PATH = "/validate-kupid"
SCHEDULING_POLICY_KINDS = (CLUSTER_KIND, NAMESPACED_KIND)

validate_scheduling_policy_request = ObjectValidation(
    dict.fromkeys(SCHEDULING_POLICY_KINDS, validate_scheduling_policy), subject="policy", group=GROUP
)
"""The `/validate-kupid` handler (CREATE and UPDATE of both kinds): denied (422 Invalid) with every
`validate_scheduling_policy` problem (see `webhook.specs`)."""

__all__ = ["SCHEDULING_POLICY_KINDS", "SPEC_UNCHANGED", "VALIDATE_PATH", "invalid_message", "register",
           "validate_scheduling_policy_request"]  # fmt: skip


def register(server: WebhookServer) -> None:
    """Serve `/validate-kupid` on `server`."""
    server.register(VALIDATE_PATH, validate_scheduling_policy_request)
