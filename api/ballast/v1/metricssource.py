"""MetricsSource: one place usage samples come from (a metrics plugin and how often it is polled)."""

from __future__ import annotations

from pydantic import Field

from ballast.api.customresource import CustomResource
from ballast.api.wire import Int64, WireModel
from ballast.internal.runtime.crdgen import AGE, PrinterColumn

from .groupversion import GROUP, VERSION


class MetricsSourceConfig(WireModel):
    """How the source is polled and how many samples a series keeps."""

    poll_interval: str = "60s"
    """Time between two polls (Go duration)."""
    reservoir_size: Int64 = Field(default=10000, ge=1)
    """Most samples kept per profile, container and resource; older ones are dropped first."""


class MetricsSourceSpec(WireModel):
    """Which plugin reads the samples, and its settings."""

    type: str = Field(min_length=1)
    """The plugin: kubernetesMetrics or kubeletSummary. Unknown types are skipped with a log line."""
    config: MetricsSourceConfig = Field(default_factory=MetricsSourceConfig)
    """Polling settings."""


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

    spec: MetricsSourceSpec
    """The source."""
