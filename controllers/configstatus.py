"""Configuration status (`configstatus-ballastconfig`, `configstatus-metricssource`): the `Valid` condition.

`Valid` says whether a BallastConfig's identity labels and durations (and its name: only `ballast` is read), or a
MetricsSource's type and pollInterval, can be used (docs/design.md, difference 26; the checks are
`ballast.internal.enrollment.config` and `ballast.internal.metricsources.validation`). The validating webhook
refuses such objects at write time; one stored before (or while the webhook was down) is not used by the lanes, and
this controller says why: `Valid=False` with every problem, a `Warning` event `InvalidConfig`/`InvalidSource` on
the object and a log line — once per change of the problems, not at every poll. Server-side apply on the status
subresource, field manager `ballast-configstatus`, which owns only this condition.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ballast.api.ballast.v1 import BallastConfig, MetricsSource
from ballast.api.ballast.v1.policyspec import VALID
from ballast.internal.enrollment import BALLAST_CONFIG_NAME
from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.metricsources import validate_metrics_source
from ballast.internal.operator import OperatorOptions
from ballast.runtime import APPLY, Builder, Context, Controller, Manager, NotFoundError, Request, Result
from ballast.runtime.conditions import condition, find_status_condition
from ballast.runtime.predicate import generation_changed

FIELD_MANAGER = "ballast-configstatus"
EVENT_COMPONENT = "ballast"
VALID_REASON = "Valid"


@dataclass(frozen=True, slots=True)
class ConfigKind:
    """One kind this controller reports on: how its spec is checked and what its condition says."""

    kind: type[BallastConfig] | type[MetricsSource]
    name: str
    """The controller's name (`--controllers`)."""
    validate: Callable[[Any], list[str]]
    invalid_reason: str
    """The condition's reason and the event's when the spec has problems."""
    unused: str
    """What happens to an invalid object (a sentence), for the event and the log line."""
    valid_message: str
    name_problems: Callable[[str], list[str]] = lambda _: []
    """What is wrong with the object's name (only one BallastConfig is read)."""


def ballast_config_name_problems(name: str) -> list[str]:
    """A BallastConfig the operator never reads: only the one named `ballast` is."""
    if name == BALLAST_CONFIG_NAME:
        return []
    return [f'metadata.name: only the BallastConfig named "{BALLAST_CONFIG_NAME}" is read; "{name}" never is']


BALLAST_CONFIG = ConfigKind(
    BallastConfig, "configstatus-ballastconfig", validate_ballast_config, "InvalidConfig",
    "Not used: nothing is enrolled or re-keyed and no orphaned profile is deleted until it is fixed.",
    "the identity labels, orphanTTL and retentionWindow are valid", ballast_config_name_problems,
)  # fmt: skip
METRICS_SOURCE = ConfigKind(
    MetricsSource, "configstatus-metricssource", validate_metrics_source, "InvalidSource",
    "Not polled: the profiles it feeds are not Ready until it is fixed.",
    "the type and pollInterval are valid",
)  # fmt: skip
KINDS = (BALLAST_CONFIG, METRICS_SOURCE)


class ConfigStatusReconciler:
    """Applies one object's `Valid` condition when it differs from what the object says (status, reason,
    message, observedGeneration); an invalid spec also gets an event and a log line."""

    def __init__(self, manager: Manager, config: ConfigKind, options: OperatorOptions) -> None:
        self.client = manager.client
        self.config = config
        self.clock = options.clock
        self.recorder = manager.get_event_recorder(EVENT_COMPONENT)

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        kind = self.config.kind
        try:
            obj: BallastConfig | MetricsSource = self.client.get(kind, request.name)
        except NotFoundError:
            return None
        problems = [*self.config.name_problems(request.name), *self.config.validate(obj.spec)]
        status, reason = ("False", self.config.invalid_reason) if problems else ("True", VALID_REASON)
        message = "; ".join(problems) if problems else self.config.valid_message
        generation = obj.metadata.generation or 0
        current = find_status_condition(obj.status.conditions, VALID) if obj.status else None
        if current is not None and (current.status, current.reason, current.message, current.observed_generation) == (
            status, reason, message, generation,
        ):  # fmt: skip
            return None
        body = {
            "apiVersion": kind.API_VERSION, "kind": kind.KIND, "metadata": {"name": request.name},
            "status": {"conditions": [condition(VALID, status, reason, message, previous=current,
                                                now=self.clock.now(), observed_generation=generation)]},
        }  # fmt: skip
        self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)
        if problems and (current is None or (current.status, current.message) != (status, message)):
            text = f'{kind.KIND} "{request.name}" is invalid: {message}. {self.config.unused}'
            self.recorder.event(obj, "Warning", reason, text)
            ctx.logger.warning("%s", text, extra={"kind": kind.KIND, "object": request.name, "problems": problems})
        return None


def setup(manager: Manager, *, options: OperatorOptions, names: set[str] | None = None) -> list[Controller]:
    """Register one controller per kind (those named in `names`; default: both). Status writes do not bump the
    generation, so a controller's own apply does not wake it."""
    return [
        Builder(manager)
        .for_(config.kind, predicates=[generation_changed()])
        .named(config.name)
        .complete(ConfigStatusReconciler(manager, config, options))
        for config in KINDS
        if names is None or config.name in names
    ]
