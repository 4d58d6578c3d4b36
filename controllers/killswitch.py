"""Kill switch (`killswitch`): keeps the in-memory kill-switch state current — on **every** replica.

Active while ConfigMap `ballast-kill-switch` exists in the operator namespace or `BallastConfig ballast` has
`spec.suspended: true` (docs/compatibility.md). The Go operator runs this controller on the leader only, so a
standby's webhook never sees the switch; here it does not need leadership (docs/design.md, difference 2).
"""

from __future__ import annotations

from ballast.api.ballast.v1 import BallastConfig
from ballast.internal.enrollment import BALLAST_CONFIG_NAME, KILL_SWITCH_CONFIGMAP
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.internal.telemetry import KILL_SWITCH_ACTIVE, KILL_SWITCH_TRANSITIONS
from ballast.runtime import (
    Builder,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    Manager,
    NotFoundError,
    Request,
    Result,
)

NAME = "killswitch"
CONFIGMAP = "v1/ConfigMap"
_KEY = Request("", "kill-switch")


class KillSwitchReconciler:
    def __init__(self, manager: Manager, state: KillSwitchState, options: OperatorOptions) -> None:
        self.client = manager.client
        self.state = state
        self.namespace = options.operator_namespace

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            self.client.get(CONFIGMAP, KILL_SWITCH_CONFIGMAP, self.namespace)
            configmap = True
        except NotFoundError:
            configmap = False
        try:
            config: BallastConfig = self.client.get(BallastConfig, BALLAST_CONFIG_NAME)
            suspended = bool(config.spec.suspended)
        except NotFoundError:
            suspended = False
        if self.state.update(configmap=configmap, suspended=suspended):
            active = self.state.active
            transition = "activated" if active else "deactivated"
            KILL_SWITCH_TRANSITIONS.inc({"transition": transition})
            ctx.logger.info(f"Kill switch {transition}", extra={"kill_switch_reason": self.state.reason})
        KILL_SWITCH_ACTIVE.replace(
            [({"reason": self.state.reason}, 1.0)] if self.state.active else [({"reason": ""}, 0.0)]
        )
        return None


def setup(manager: Manager, *, state: KillSwitchState, options: OperatorOptions) -> Controller:
    """Register the kill-switch controller; the ConfigMap cache must be scoped to the switch (the wiring does)."""

    def one_key(_: object) -> list[Request]:
        return [_KEY]

    handler = EnqueueRequestsFromMapFunc(one_key)
    return (
        Builder(manager)
        .watches(CONFIGMAP, handler)
        .watches(BallastConfig, handler)
        .named(NAME)
        .with_options(need_leader_election=False)
        .complete(KillSwitchReconciler(manager, state, options))
    )
