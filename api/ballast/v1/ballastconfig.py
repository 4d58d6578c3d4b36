"""BallastConfig: the cluster-wide settings of the operator (only the object named `ballast` is read)."""

from __future__ import annotations

from pydantic import Field

from ballast.api.customresource import CustomResource
from ballast.api.wire import WireModel
from ballast.internal.runtime.crdgen import AGE, PrinterColumn

from .groupversion import GROUP, VERSION

BALLAST_CONFIG_NAME = "ballast"
"""The only BallastConfig the operator honours."""


class BallastConfigSpec(WireModel):
    """What identifies a workload, how long orphaned profiles live, and the kill switch."""

    identity_labels: list[str] = Field(min_length=1)
    """Ordered pod label keys whose values identify a workload (its profile), e.g. app.kubernetes.io/name."""
    orphan_ttl: str = "168h"
    """How long a WorkloadProfile without pods is kept before it and its history are deleted (Go duration)."""
    retention_window: str = "168h"
    """How long samples are kept (Go duration)."""
    suspended: bool = False
    """Stops all mutation and resizing, like the kill-switch ConfigMap."""


class BallastConfigStatus(WireModel):
    """Empty: BallastConfig reports nothing."""


class BallastConfig(CustomResource):
    """BallastConfig holds the cluster-wide Ballast settings; only the object named ballast is used."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "BallastConfig"
    PLURAL = "ballastconfigs"
    SCOPE = "Cluster"
    PRINTER_COLUMNS = (PrinterColumn("Suspended", "boolean", ".spec.suspended"), AGE)

    spec: BallastConfigSpec
    """The settings."""
    status: BallastConfigStatus | None = None
    """Empty: BallastConfig reports no status."""
