"""`ballast.tightlinesoftware.com/v1`: BallastConfig, MetricsSource, ClusterResourcePolicy, ResourcePolicy and
WorkloadProfile."""

from .ballastconfig import BALLAST_CONFIG_NAME, BallastConfig, BallastConfigSpec, BallastConfigStatus
from .clusterresourcepolicy import ClusterResourcePolicy, ClusterResourcePolicySpec, ClusterResourcePolicyStatus
from .groupversion import GROUP, VERSION
from .metricssource import MetricsSource, MetricsSourceConfig, MetricsSourceSpec
from .policyspec import (
    Aggregation,
    Behaviors,
    MetricConfig,
    MetricField,
    NamespaceFilter,
    PolicySelector,
    Readiness,
    ResizeBehavior,
    ResizeThresholds,
    ResourcePolicySpec,
    ResourcePolicyStatus,
    ResourceThreshold,
    Thresholds,
)
from .resourcepolicy import ResourcePolicy
from .workloadprofile import (
    ContainerProfile,
    ContributingNamespaces,
    PolicyRef,
    Recommendation,
    UsageStats,
    WorkloadProfile,
    WorkloadProfileStatus,
)

__all__ = [
    "BALLAST_CONFIG_NAME",
    "GROUP",
    "VERSION",
    "Aggregation",
    "BallastConfig",
    "BallastConfigSpec",
    "BallastConfigStatus",
    "Behaviors",
    "ClusterResourcePolicy",
    "ClusterResourcePolicySpec",
    "ClusterResourcePolicyStatus",
    "ContainerProfile",
    "ContributingNamespaces",
    "MetricConfig",
    "MetricField",
    "MetricsSource",
    "MetricsSourceConfig",
    "MetricsSourceSpec",
    "NamespaceFilter",
    "PolicyRef",
    "PolicySelector",
    "Readiness",
    "Recommendation",
    "ResizeBehavior",
    "ResizeThresholds",
    "ResourcePolicy",
    "ResourcePolicySpec",
    "ResourcePolicyStatus",
    "ResourceThreshold",
    "Thresholds",
    "UsageStats",
    "WorkloadProfile",
    "WorkloadProfileStatus",
]
