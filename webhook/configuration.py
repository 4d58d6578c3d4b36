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

from ballast.api.ballast.v1 import BallastConfig, MetricsSource
from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.metricsources import validate_metrics_source
from ballast.runtime import WebhookServer

from .specs import SPEC_UNCHANGED, SpecValidation, invalid_message

VALIDATE_PATH = "/validate-ballast-configuration"
validate_configuration_request = SpecValidation(
    {BallastConfig.KIND: validate_ballast_config, MetricsSource.KIND: validate_metrics_source},
    subject="configuration",
)
"""The `/validate-ballast-configuration` handler (CREATE and UPDATE of BallastConfigs and MetricsSources): denied
(422 Invalid) with every problem of the spec (see `webhook.specs`)."""

__all__ = ["SPEC_UNCHANGED", "VALIDATE_PATH", "invalid_message", "register", "validate_configuration_request"]


def register(server: WebhookServer) -> None:
    """Serve `/validate-ballast-configuration` on `server`."""
    server.register(VALIDATE_PATH, validate_configuration_request)
