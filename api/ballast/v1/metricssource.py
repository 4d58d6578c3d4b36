"""MetricsSource: one place usage samples come from (a metrics plugin and how often it is polled)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ballast.api.customresource import CustomResource
from ballast.api.formats import enum, positive_duration
from ballast.api.meta import ConditionList, Conditions
from ballast.api.wire import Int64, WireModel
from ballast.runtime.crdgen import AGE, PrinterColumn

from .groupversion import GROUP, VERSION

SOURCE_TYPE_NAMES = ("kubernetesMetrics", "kubeletSummary")
"""The plugins `spec.type` may name (the CRD's enum; `ballast.internal.metricsources.SOURCE_TYPES` implements them)."""


class MetricsSourceConfig(WireModel):
    """How the source is polled and how many samples a series keeps."""

    poll_interval: Annotated[str, positive_duration()] = "60s"
    """Time between two polls: a Go duration longer than 0, such as 60s or 1m30s."""
    reservoir_size: Int64 = Field(default=10000, ge=1)
    """Most samples kept per profile, container and resource; older ones are dropped first."""


class MetricsSourceSpec(WireModel):
    """Which plugin reads the samples, and its settings."""

    type: Annotated[str, enum(*SOURCE_TYPE_NAMES)] = Field(min_length=1)
    """The plugin: kubernetesMetrics or kubeletSummary."""
    config: MetricsSourceConfig = Field(default_factory=MetricsSourceConfig)
    """Polling settings."""


class MetricsSourceStatus(WireModel):
    """What the operator reports about a source."""

    conditions: Conditions = ConditionList()
    """Valid: whether the type and the settings are usable (an invalid source is not polled)."""


class MetricsSource(CustomResource):
    """MetricsSource names a source of usage samples that policies refer to by name."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "MetricsSource"
    PLURAL = "metricssources"
    SCOPE = "Cluster"
    PRINTER_COLUMNS = (
        PrinterColumn("Type", "string", ".spec.type"),
        PrinterColumn("PollInterval", "string", ".spec.config.pollInterval"),
        AGE,
    )
    STATUS_SUBRESOURCE = True

    spec: MetricsSourceSpec
    """The source."""
    status: MetricsSourceStatus | None = None
    """Written by the operator."""
