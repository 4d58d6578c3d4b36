"""BallastConfig: the cluster-wide settings of the operator (only the object named `ballast` is read)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ballast.api.customresource import CustomResource
from ballast.api.formats import duration, qualified_name, unique_items
from ballast.api.meta import ConditionList, Conditions
from ballast.api.wire import WireModel
from ballast.runtime.crdgen import AGE, PrinterColumn

from .groupversion import GROUP, VERSION

BALLAST_CONFIG_NAME = "ballast"
"""The only BallastConfig the operator honours."""
MAX_IDENTITY_LABELS = 32
"""Most identity label keys a BallastConfig may list."""


class BallastConfigSpec(WireModel):
    """What identifies a workload, how long orphaned profiles live, and the kill switch."""

    identity_labels: Annotated[
        list[Annotated[str, qualified_name()]], unique_items(MAX_IDENTITY_LABELS, "label key")
    ] = Field(min_length=1)
    """Ordered pod label keys whose values identify a workload (its profile): qualified names, none repeated."""
    orphan_ttl: Annotated[str, duration()] = "168h"
    """How long a WorkloadProfile without pods is kept before it and its history are deleted (Go duration)."""
    retention_window: Annotated[str, duration()] = "168h"
    """How long samples are kept (Go duration; 0 or less keeps them until the reservoir is full)."""
    suspended: bool = False
    """Stops all mutation and resizing, like the kill-switch ConfigMap."""


class BallastConfigStatus(WireModel):
    """What the operator reports about its configuration."""

    conditions: Conditions = ConditionList()
    """Valid: whether the identity labels and durations are usable (an invalid BallastConfig is not used)."""


class BallastConfig(CustomResource):
    """BallastConfig holds the cluster-wide Ballast settings; only the object named ballast is used."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "BallastConfig"
    PLURAL = "ballastconfigs"
    SCOPE = "Cluster"
    PRINTER_COLUMNS = (PrinterColumn("Suspended", "boolean", ".spec.suspended"), AGE)
    STATUS_SUBRESOURCE = True

    spec: BallastConfigSpec
    """The settings."""
    status: BallastConfigStatus | None = None
    """Written by the operator."""
