"""Policy status (`policystatus-cluster`, `policystatus-namespaced`): the discriminator and the `Valid` condition.

`status.profileDiscriminator` is what profile names under this policy end with (docs/compatibility.md).
`Valid` says whether the policy's regexes, selectors and quantities are usable (docs/design.md, difference 8 and
18): an invalid policy is skipped by resolution, alone, and this condition says why.
"""

from __future__ import annotations

from ballast.api.ballast.v1 import ClusterResourcePolicy, ResourcePolicy
from ballast.api.ballast.v1.policyspec import VALID
from ballast.internal.naming import policy_discriminator
from ballast.internal.operator import OperatorOptions
from ballast.internal.policy import validate_policy
from ballast.runtime import APPLY, Builder, Context, Controller, Manager, NotFoundError, Request, Result
from ballast.runtime.conditions import condition, find_status_condition

FIELD_MANAGER = "ballast-policystatus"
PolicyKind = type[ClusterResourcePolicy] | type[ResourcePolicy]
NAMES: dict[PolicyKind, str] = {
    ClusterResourcePolicy: "policystatus-cluster",
    ResourcePolicy: "policystatus-namespaced",
}


class PolicyStatusReconciler:
    def __init__(
        self, manager: Manager, kind: type[ClusterResourcePolicy] | type[ResourcePolicy], options: OperatorOptions
    ):
        self.client = manager.client
        self.kind = kind
        self.clock = options.clock

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            policy = self.client.get(self.kind, request.name, request.namespace or None)
        except NotFoundError:
            return None
        problems = validate_policy(policy.spec)
        valid = "False" if problems else "True"
        current_status = policy.status
        discriminator = policy_discriminator(self.kind.KIND, request.namespace, request.name)
        current = find_status_condition(current_status.conditions, VALID) if current_status else None
        message = "; ".join(problems) if problems else "the policy's selectors, regexes and quantities are valid"
        reason = "InvalidPolicy" if problems else "Valid"
        if (
            current_status is not None
            and current_status.profile_discriminator == discriminator
            and current is not None
            and (current.status, current.reason, current.message) == (valid, reason, message)
            and current.observed_generation == (policy.metadata.generation or 0)
        ):
            return None
        metadata: dict[str, object] = {"name": request.name}
        if request.namespace:
            metadata["namespace"] = request.namespace
        body = {
            "apiVersion": self.kind.API_VERSION, "kind": self.kind.KIND, "metadata": metadata,
            "status": {"profileDiscriminator": discriminator, "conditions": [
                condition(VALID, valid, reason, message, previous=current, now=self.clock.now(),
                          observed_generation=policy.metadata.generation or 0),
            ]},
        }  # fmt: skip
        self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)
        if problems:
            ctx.logger.info("policy is invalid and will be skipped by resolution", extra={"problems": problems})
        return None


def setup(manager: Manager, *, options: OperatorOptions) -> list[Controller]:
    """Register one controller per policy kind."""
    return [
        Builder(manager).for_(kind).named(name).complete(PolicyStatusReconciler(manager, kind, options))
        for kind, name in NAMES.items()
    ]
