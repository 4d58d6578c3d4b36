"""Scheduling webhook match conditions (`schedulingpolicy`): keep the scheduling webhook's `matchConditions` in
line with the PodSchedulingPolicies and ClusterPodSchedulingPolicies, so the API server calls it only for
objects some policy's `podSelector` can select.

On any change of either policy kind (and of the webhook configuration itself, which is watched by name) the
policies in the cache are rendered (`ballast.internal.scheduling.match_conditions`) and the webhook's condition
`ballast-scheduling-policies` is written by **server-side apply** as field manager `ballast-schedulingpolicy`,
naming only `webhooks[name=<webhook>].matchConditions` and two annotations: the CA bundle, the rules and
whatever Helm, kubectl or anyone else owns stay as they are (both lists are maps keyed by name).

- When the rendering gives no conditions (an enforced policy, a policy that does not compile, an expression
  over the API server's limits) our condition is removed, so every request is sent; so it is when the API
  server refuses the expression (reason `refused`). Each change of state is an info log line, and the gauge
  `ballast_scheduling_match_conditions{state,reason}` always says where it stands.
- `ballast.tightlinesoftware.com/scheduling-rendered` on the configuration records the policy versions the
  conditions were made from (`match_conditions.rendered_record`); `.../scheduling-conditions` says `rendered` or
  `disabled: <reason>: <why>`.
- A missing configuration (scheduling webhooks off, or not installed yet) or one without the webhook is logged
  and tried again after `MISSING_REQUEUE` (and at once when it appears); nothing is created.
- kupid's CRDs (`availability`, docs/design.md, difference 61): a kind whose CRD is not installed has no
  policies, so the conditions are rendered without it (and kept: nothing is sent that no policy selects); a kind
  whose CRD exists but has not been listed since it (re)appeared — and, for `GRACE_SECONDS` after a CRD went
  away, a reinstall in progress — turns the conditions off (reason `crd_pending` / `crd_reinstalling`), so every
  request reaches the webhook, which waits for the list. A change of a CRD requeues at once.
- Leader-only. Until it has run, a new policy is not seen by the webhook for objects the old conditions
  exclude (the lag is the watch plus one apply); an enforced policy turns the conditions off for that reason.
"""

from __future__ import annotations

import queue
from collections.abc import Mapping, Sequence
from typing import Any

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.internal.scheduling.availability import ABSENT, CRD_NAMES, READY, SchedulingAvailability
from ballast.internal.scheduling.match_condition_metrics import record_match_conditions
from ballast.internal.scheduling.match_conditions import (
    CONDITION_NAME,
    Rendering,
    render_match_conditions,
    rendered_record,
)
from ballast.internal.scheduling.policies import as_wire
from ballast.runtime import (
    APPLY,
    APIStatusError,
    Builder,
    CacheScope,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    Manager,
    NotFoundError,
    Request,
    Result,
)
from ballast.runtime.source import Channel

NAME = "schedulingpolicy"
FIELD_MANAGER = "ballast-schedulingpolicy"
CONFIGURATION_KIND = "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration"
RENDERED_ANNOTATION = "ballast.tightlinesoftware.com/scheduling-rendered"
"""The policy versions the conditions were made from (`kind/ns/name=resourceVersion`, sorted; or a hash)."""
STATE_ANNOTATION = "ballast.tightlinesoftware.com/scheduling-conditions"
"""`rendered`, or `disabled: <reason>: <why>` (every request is sent)."""
REFUSED = "refused"
"""The API server refused the rendered expression; every request is sent."""
MISSING_REQUEUE = 60.0
"""How soon a missing configuration (or webhook in it) is looked for again, besides its watch."""
CRD_PENDING = "crd_pending"
"""A kupid CRD exists but its policies have not been listed since it (re)appeared; every request is sent."""
CRD_REINSTALLING = "crd_reinstalling"
"""A kupid CRD went away less than the grace period ago; every request is sent until it is back or the grace ends."""
PENDING_REQUEUE = 1.0
"""How soon a pending kind is looked at again (its list may add nothing, so no policy event would come)."""


def apply_configuration(
    configuration: str, webhook: str, conditions: Sequence[Mapping[str, str]], annotations: Mapping[str, str]
) -> dict[str, Any]:
    """The apply configuration naming only what this controller owns: the annotations and the webhook's
    conditions (`[]` removes ours and keeps everyone else's)."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": configuration, "annotations": dict(annotations)},
        "webhooks": [{"name": webhook, "matchConditions": [dict(condition) for condition in conditions]}],
    }  # fmt: skip


def _state(rendering: Rendering) -> str:
    return "rendered" if rendering.rendered else f"disabled: {rendering.reason}: {rendering.message}"


class SchedulingPolicyReconciler:
    """Renders the policies and applies the webhook's conditions when they differ from what is there."""

    def __init__(
        self,
        manager: Manager,
        *,
        configuration: str,
        webhook: str,
        availability: SchedulingAvailability | None = None,
    ) -> None:
        self.client = manager.client
        self.api = manager.api_reader
        self.configuration = configuration
        self.webhook = webhook
        self.availability = availability
        self._missing = False

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            config: dict[str, Any] = self.api.get(CONFIGURATION_KIND, self.configuration)
        except NotFoundError:
            return self._absent(ctx, f"MutatingWebhookConfiguration {self.configuration} not found")
        webhook = next((w for w in config.get("webhooks") or () if w.get("name") == self.webhook), None)
        if webhook is None:
            return self._absent(ctx, f"MutatingWebhookConfiguration {self.configuration} has no webhook "
                                     f"{self.webhook}")  # fmt: skip
        self._missing = False
        unknown, requeue = self._unknown()
        kinds: tuple[type[ClusterPodSchedulingPolicy | PodSchedulingPolicy], ...] = (
            ClusterPodSchedulingPolicy, PodSchedulingPolicy)  # fmt: skip
        policies = [as_wire(policy) for kind in kinds if self._served(kind.KIND) for policy in self.client.list(kind)]
        current = list(webhook.get("matchConditions") or ())
        others = [condition for condition in current if condition.get("name") != CONDITION_NAME]
        rendering = unknown or render_match_conditions(policies, reserved=len(others))
        record = rendered_record(policies)
        try:
            self._apply(ctx, config, current, rendering, record)
        except APIStatusError as error:
            if not rendering.rendered or error.status != 422:
                raise
            refused = Rendering(None, REFUSED, f"the API server refused the expression: {error.message}")
            ctx.logger.error("the scheduling webhook's matchConditions were refused; every request is sent",
                             extra={"reason": REFUSED, "error": error.message})  # fmt: skip
            self._apply(ctx, config, current, refused, record)
            rendering = refused
        record_match_conditions(rendering.state, rendering.reason, len(rendering.expression))
        return requeue

    def _served(self, kind: str) -> bool:
        """False for a kind whose CRD is not installed: none of its policies can exist."""
        return self.availability is None or self.availability.state(kind) != ABSENT

    def _unknown(self) -> tuple[Rendering | None, Result | None]:
        """The rendering that sends everything while a kind's policies are unknown, and when to look again."""
        availability = self.availability
        if availability is None:
            return None, None
        for kind in availability.kinds:
            availability.refresh(kind)
            if availability.state(kind) not in (READY, ABSENT):
                message = f"{CRD_NAMES[kind]} exists but its policies have not been listed yet"
                return Rendering(None, CRD_PENDING, message), Result(requeue_after=PENDING_REQUEUE)
            if availability.reinstalling(kind):
                left = availability.grace_left(kind)
                message = f"{CRD_NAMES[kind]} went away; it may be reinstalled within {left:.0f}s"
                return Rendering(None, CRD_REINSTALLING, message), Result(requeue_after=left + 0.1)
        return None, None

    def _absent(self, ctx: Context, what: str) -> Result:
        if not self._missing:
            ctx.logger.info(f"{what}: the scheduling webhook's matchConditions are written once it is there",
                            extra={"configuration": self.configuration, "webhook": self.webhook})  # fmt: skip
        self._missing = True
        return Result(requeue_after=MISSING_REQUEUE)

    def _apply(
        self,
        ctx: Context,
        config: Mapping[str, Any],
        current: Sequence[Mapping[str, Any]],
        rendering: Rendering,
        record: str,
    ) -> None:
        """Apply when our condition or the annotations differ from the configuration's; log changes of state."""
        wanted = [dict(condition) for condition in rendering.conditions or ()]
        ours = [dict(condition) for condition in current if condition.get("name") == CONDITION_NAME]
        annotations = {RENDERED_ANNOTATION: record, STATE_ANNOTATION: _state(rendering)}
        present = (config.get("metadata") or {}).get("annotations") or {}
        if ours == wanted and all(present.get(key) == value for key, value in annotations.items()):
            return
        body = apply_configuration(self.configuration, self.webhook, wanted, annotations)
        self.api.patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)
        if present.get(STATE_ANNOTATION) == annotations[STATE_ANNOTATION]:
            return
        if rendering.rendered:
            ctx.logger.info("the scheduling webhook is called only for objects a policy can select",
                            extra={"reason": rendering.reason, "selectors": rendering.terms,
                                   "characters": len(rendering.expression)})  # fmt: skip
        else:
            ctx.logger.info("the scheduling webhook's matchConditions are off: every request is sent",
                            extra={"reason": rendering.reason, "why": rendering.message})  # fmt: skip


def setup(
    manager: Manager, *, configuration: str, webhook: str, availability: SchedulingAvailability | None = None
) -> Controller:
    """Register the controller: `configuration` is the MutatingWebhookConfiguration's name (the wiring passes
    `f"{options.webhook_configuration_name}-scheduling"`), `webhook` the webhook's in it
    (`mscheduling.ballast.tightlinesoftware.com`), `availability` whether kupid's CRDs are installed (None:
    assumed to be). Every event maps to one request, so a burst of policy writes is one reconcile."""
    reconciler = SchedulingPolicyReconciler(
        manager, configuration=configuration, webhook=webhook, availability=availability
    )
    request = Request("", configuration)

    def the_configuration(_: object) -> list[Request]:
        return [request]

    handler = EnqueueRequestsFromMapFunc(the_configuration)
    by_name = CacheScope(field_selector=f"metadata.name={configuration}")
    builder = (
        Builder(manager)
        .watches(ClusterPodSchedulingPolicy, handler)
        .watches(PodSchedulingPolicy, handler)
        .watches(CONFIGURATION_KIND, handler, scope=by_name)
    )
    if availability is not None:
        changes: queue.Queue[str] = queue.Queue()
        availability.on_change(changes.put)
        builder = builder.watches_source(Channel(changes, handler))
    return builder.named(NAME).complete(reconciler)
