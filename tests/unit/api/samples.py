"""One fully populated wire object per kind (and a status where the kind has one), shared by unit and
integration tests: every field the model declares appears at least once."""

from __future__ import annotations

from typing import Any

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.ballast.v1 import (
    BallastConfig,
    ClusterResourcePolicy,
    ConsolidationReport,
    MetricsSource,
    ResourcePolicy,
    WorkloadProfile,
)
from ballast.api.customresource import CustomResource
from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy

JSON = dict[str, Any]
TIME = "2026-11-29T12:00:00Z"
METRICS = "kubernetes-metrics"

LABEL_SELECTOR: JSON = {
    "matchLabels": {"team": "payments"},
    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["api", "worker"]}],
}

POLICY_SPEC: JSON = {
    "priority": 10,
    "selector": {
        "kinds": ["Deployment", "StatefulSet"],
        "namespaces": {"include": ["/team-.*/", "billing"], "exclude": ["team-sandbox"]},
        "annotations": {"ballast.example.com/tier": "/gold|silver/"},
        "labelSelector": LABEL_SELECTOR,
    },
    "metrics": [
        {
            "resource": "cpu",
            "field": "request",
            "source": "kubernetes-metrics",
            "aggregation": "avg",
            "headroom": "1.25",
        },
        {"resource": "memory", "field": "request", "source": "kubernetes-metrics", "aggregation": "p75"},
        {
            "resource": "memory",
            "field": "limit",
            "source": "kubernetes-metrics",
            "aggregation": "p99",
            "headroom": "1.2",
        },
        {"resource": "ephemeral-storage", "field": "limit", "source": "kubelet-summary", "aggregation": "max"},
    ],
    "readiness": {
        "minDataPoints": 250,
        "minTimeSpan": "24h",
        "maxCV": "1.5",
        "cvMeanFloor": {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"},
    },
    "behaviors": {
        "thresholds": {
            "default": "10%",
            "resize": {"default": "20%", "resourceThresholds": {"cpu": {"request": "15%", "limit": "30%"}}},
        },
        "resize": {"maxChangePerCycle": "50%", "interval": "15m"},
        "oom": {
            "enabled": True,
            "bumpRatio": "1.2",
            "minBump": "100Mi",
            "window": "24h",
            "maxLimit": "4Gi",
            "maxKills": 3,
        },
    },
}

CONDITION: JSON = {
    "type": "Valid",
    "status": "True",
    "observedGeneration": 1,
    "lastTransitionTime": TIME,
    "reason": "Validated",
    "message": "regexes, selectors and quantities are valid",
}

NODE_TERM: JSON = {
    "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a", "b"]}],
    "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-x"]}],
}
POD_TERM: JSON = {
    "labelSelector": {"matchLabels": {"app": "etcd"}},
    "namespaceSelector": {},
    "namespaces": ["garden"],
    "topologyKey": "kubernetes.io/hostname",
    "matchLabelKeys": ["pod-template-hash"],
    "mismatchLabelKeys": ["tenant"],
}
POD_SCHEDULING_SPEC: JSON = {
    "podSelector": {"matchLabels": {"role": "etcd"}},
    "nodeSelector": {"worker.gardener.cloud/pool": "etcd"},
    "nodeName": "node-a",
    "schedulerName": "bin-packing",
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [NODE_TERM]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": NODE_TERM}],
        },
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [POD_TERM],
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": POD_TERM}],
        },
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [POD_TERM]},
    },
    "tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "etcd", "effect": "NoSchedule"},
        {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    ],
}

SPECS: dict[type[CustomResource], JSON] = {
    BallastConfig: {
        "identityLabels": ["app.kubernetes.io/name", "app.kubernetes.io/component"],
        "orphanTTL": "72h",
        "retentionWindow": "336h",
        "suspended": True,
    },
    MetricsSource: {"type": "kubernetesMetrics", "config": {"pollInterval": "300s", "reservoirSize": 5000}},
    ClusterResourcePolicy: POLICY_SPEC,
    ResourcePolicy: POLICY_SPEC,
    PodSchedulingPolicy: POD_SCHEDULING_SPEC,
    ClusterPodSchedulingPolicy: {**POD_SCHEDULING_SPEC, "namespaceSelector": {"matchLabels": {"gardener": "seed"}}},
    Balancer: {
        "targets": [
            {
                "name": "zone-a",
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-a"},
                "minReplicas": 1,
                "maxReplicas": 10,
            },
            {"name": "zone-b", "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-b"}},
        ],
        "replicas": 5,
        "selector": {"matchLabels": {"app": "web"}},
        "policy": {
            "policyName": "proportional",
            "priorities": {"targetOrder": ["zone-a", "zone-b"]},
            "proportions": {"targetProportions": {"zone-a": 2, "zone-b": 1}},
            "fallback": {"startupTimeoutSeconds": 120},
        },
    },
}
"""A spec per kind with a spec (WorkloadProfile has none)."""

STATUSES: dict[type[CustomResource], JSON] = {
    BallastConfig: {"conditions": [CONDITION]},
    MetricsSource: {"conditions": [{**CONDITION, "status": "False", "reason": "InvalidSource", "message": "bad"}]},
    ClusterResourcePolicy: {"profileDiscriminator": "fleet-9aa5ac7c", "conditions": [CONDITION]},
    ResourcePolicy: {"profileDiscriminator": "local-84fadaa0", "conditions": [CONDITION]},
    WorkloadProfile: {
        "tupleLabels": {"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "nocomponent"},
        "policyRef": {"kind": "ResourcePolicy", "namespace": "team-a", "name": "local"},
        "measurementHash": "8746f67fe9f3d343",
        "selectorLabels": {"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "--missing--"},
        "containers": [
            {
                "name": "app",
                "usageStats": [
                    {
                        "resource": "cpu",
                        "source": "kubernetes-metrics",
                        "samples": 1440,
                        "timeSpan": "24h0m0s",
                        "p50": "85m",
                        "p75": "90m",
                        "p90": "120m",
                        "p95": "130m",
                        "p99": "1",
                        "mean": "88m",
                        "stdDev": "12m",
                        "cv": "0.136",
                        "lastUpdated": TIME,
                    }
                ],
                "recommendations": {"cpu": {"request": "110m"}, "memory": {"request": "192Mi", "limit": "230Mi"}},
            }
        ],
        "meetsThreshold": True,
        "state": "Sufficient",
        "activeWorkloads": 3,
        "contributingNamespaces": {"count": 2, "names": ["shop", "shop-canary"]},
        "oomKills": [
            {
                "container": "app",
                "count": 1,
                "lastTime": TIME,
                "lastLimit": "230Mi",
                "floor": "330Mi",
                "floorUntil": TIME,
                "repeated": False,
                "namespaces": ["shop"],
                "kills": [
                    {"pod": "billing-0", "namespace": "shop", "uid": "u-1", "finishedAt": TIME, "limit": "230Mi"}
                ],
            }
        ],
        "conditions": [
            {**CONDITION, "type": "Ready", "reason": "SamplesCollected", "message": "all good"},
            {**CONDITION, "type": "Orphaned", "status": "False", "reason": "ActiveWorkloads", "message": ""},
        ],
    },
    Balancer: {
        "replicas": 5,
        "selector": "app=web",
        "conditions": [{**CONDITION, "type": "Balancing", "reason": "Completed", "message": "Balancer running OK"}],
        "targets": [
            {"name": "zone-a", "desired": 4, "placed": 4, "running": 3, "notStarted": 1},
            {"name": "zone-b", "desired": 1, "placed": 1, "running": 1, "notStarted": 0},
        ],
    },
    ConsolidationReport: {
        "lastRefreshTime": TIME,
        "observedRefresh": "2026-12-02T10:00:00Z",
        "observed": {
            "nodes": 3,
            "pods": 12,
            "podDisruptionBudgets": 1,
            "nodePools": 0,
            "karpenter": False,
            "profiles": 2,
            "podsWithRecommendations": 9,
            "defaultPolicy": "Balanced",
            "k": 2,
            "catalogue": "ballast-system/ballast-consolidation-catalogue",
        },
        "current": {
            "nodes": 3,
            "nodesAfter": 3,
            "costPerHour": "0.5760",
            "costPerMonth": "420.48",
            "disruptionCost": "15.00",
            "approved": 0,
            "rejected": 3,
        },
        "recommended": {
            "nodes": 3,
            "nodesAfter": 2,
            "costPerHour": "0.5760",
            "costPerMonth": "420.48",
            "disruptionCost": "15.00",
            "pools": [
                {
                    "name": "general",
                    "policy": "Balanced",
                    "nodes": 3,
                    "nodesAfter": 2,
                    "costPerHour": "0.5760",
                    "costPerMonth": "420.48",
                    "costPerMonthAfter": "280.32",
                    "disruptionCost": "15.00",
                }
            ],
            "freed": {
                "count": 1,
                "nodes": ["node-c"],
                "launched": ["general-replacement-1: general/m5.large/spot"],
                "savingsPerHour": "0.1920",
                "savingsPerMonth": "140.16",
                "unplaced": ["shop/web-0"],
            },
            "first": {
                "nodes": ["node-c"],
                "method": "single-node",
                "decision": "delete",
                "approved": True,
                "savingsPerHour": "0.1920",
                "savingsPerMonth": "140.16",
                "disruptionCost": "5.00",
            },
            "approved": 1,
            "rejected": 2,
            "movesOmitted": 0,
            "moves": [
                {
                    "nodes": ["node-c"],
                    "pools": ["general"],
                    "method": "single-node",
                    "decision": "replace",
                    "approved": True,
                    "score": "1.00",
                    "savingsPerHour": "0.1920",
                    "savingsPerMonth": "140.16",
                    "disruptionCost": "5.00",
                    "replacement": "general/m5.large/spot",
                    "reason": "score 1.00 >= threshold 0.50",
                }
            ],
        },
        "conditions": [{**CONDITION, "type": "Ready", "reason": "Refreshed", "message": "advice computed"}],
    },
}
"""A status per kind that has a status subresource."""


def sample(kind: type[CustomResource], name: str = "sample", namespace: str | None = None) -> JSON:
    """A wire object of `kind` named `name` (in `namespace` for namespaced kinds), with its sample spec."""
    metadata: JSON = {"name": name, "labels": {"sample": "true"}, "annotations": {"note": "a sample"}}
    if kind.SCOPE == "Namespaced":
        metadata["namespace"] = namespace or "default"
    body: JSON = {"apiVersion": kind.API_VERSION, "kind": kind.KIND, "metadata": metadata}
    if kind in SPECS:
        body["spec"] = SPECS[kind]
    return body


def kind_id(value: object) -> str | None:
    """pytest id for a kind parameter (its KIND); None lets pytest name other parameters."""
    if isinstance(value, type) and issubclass(value, CustomResource):
        return value.KIND
    return None
