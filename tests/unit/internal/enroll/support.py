"""Workload, ReplicaSet and pod objects as the API server returns them, for the `ballast` CLI's unit tests."""

from __future__ import annotations

from typing import Any

from ballast.internal.enrollment import MODE_LABEL

TUPLE = {"app.kubernetes.io/name": "shop", "app.kubernetes.io/component": "api"}
DEPLOYMENT_UID = "d-1"


def template_labels(mode: str | None = None, **extra: str) -> dict[str, str]:
    labels = {"app": "shop", **TUPLE, **extra}
    if mode is not None:
        labels[MODE_LABEL] = mode
    return labels


def deployment(
    name: str = "web",
    *,
    replicas: int = 1,
    mode: str | None = None,
    labels: dict[str, str] | None = None,
    settled: bool = True,
    paused: bool = False,
    revision: str = "3",
) -> dict[str, Any]:
    """A Deployment whose rollout has settled (status counts equal spec.replicas) unless `settled=False`."""
    ready = replicas if settled else max(replicas - 1, 0)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": DEPLOYMENT_UID,
            "generation": 2,
            "annotations": {"deployment.kubernetes.io/revision": revision},
        },
        "spec": {
            "replicas": replicas,
            "paused": paused,
            "selector": {"matchLabels": {"app": "shop"}},
            "template": {"metadata": {"labels": labels if labels is not None else template_labels(mode)}},
        },
        "status": {
            "observedGeneration": 2,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "availableReplicas": ready,
        },
    }


def replica_set(
    name: str = "web-abc", *, revision: str = "3", mode: str | None = None, owner: str = DEPLOYMENT_UID
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "annotations": {"deployment.kubernetes.io/revision": revision},
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": owner, "controller": True}
            ],
        },
        "spec": {"template": {"metadata": {"labels": template_labels(mode, **{"pod-template-hash": "abc"})}}},
    }


def statefulset(
    name: str = "db",
    *,
    replicas: int = 1,
    mode: str | None = None,
    strategy: str = "RollingUpdate",
    partition: int | None = None,
    settled: bool = True,
    observed: bool = True,
) -> dict[str, Any]:
    update_strategy: dict[str, Any] = {"type": strategy}
    if partition is not None:
        update_strategy["rollingUpdate"] = {"partition": partition}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "shop", "uid": "s-1", "generation": 4},
        "spec": {
            "replicas": replicas,
            "updateStrategy": update_strategy,
            "selector": {"matchLabels": {"app": "shop"}},
            "template": {"metadata": {"labels": template_labels(mode)}},
        },
        "status": {
            "observedGeneration": 4 if observed else 3,
            "readyReplicas": replicas,
            "currentRevision": "db-1",
            "updateRevision": "db-1" if settled else "db-2",
        },
    }


def daemonset(
    name: str = "agent",
    *,
    scheduled: int = 1,
    mode: str | None = None,
    strategy: str = "RollingUpdate",
    settled: bool = True,
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "shop", "uid": "ds-1", "generation": 1},
        "spec": {
            "updateStrategy": {"type": strategy, "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            "selector": {"matchLabels": {"app": "shop"}},
            "template": {"metadata": {"labels": template_labels(mode)}},
        },
        "status": {
            "observedGeneration": 1,
            "desiredNumberScheduled": scheduled,
            "updatedNumberScheduled": scheduled if settled else 0,
            "numberAvailable": scheduled,
        },
    }


def pod(name: str, *, mode: str | None = None, uid: str | None = None, terminating: bool = False) -> dict[str, Any]:
    labels = template_labels(mode)
    metadata: dict[str, Any] = {"name": name, "namespace": "shop", "uid": uid or f"uid-{name}", "labels": labels}
    if terminating:
        metadata["deletionTimestamp"] = "2026-11-29T12:00:00Z"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": [{"name": "app"}]}}
