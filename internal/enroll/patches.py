"""The JSON merge patches enrollment sends, one function per change (RFC 7386: `None` removes a field)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime import rfc3339

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
"""The template annotation `kubectl rollout restart` stamps; changing it rolls the pods."""
REVISION_HASH_LABEL = "controller-revision-hash"
"""The pod label by which StatefulSet and DaemonSet controllers tell updated pods from old ones."""


def restart_stamp(now: datetime.datetime) -> str:
    """`2026-11-29T12:00:00Z`: the restartedAt value for `now` (UTC, whole seconds)."""
    return rfc3339(now)


def template_patch(mode: str, restarted_at: str | None = None) -> dict[str, Any]:
    """Set the mode label on a workload's (or ReplicaSet's) pod template; with `restarted_at`, also stamp the
    template so its controller rolls every pod once."""
    metadata: dict[str, Any] = {"labels": {MODE_LABEL: mode}}
    if restarted_at is not None:
        metadata["annotations"] = {RESTARTED_AT: restarted_at}
    return {"spec": {"template": {"metadata": metadata}}}


def template_mode_revert(previous_mode: str) -> dict[str, Any]:
    """Put a ReplicaSet's template mode label back as it was ("" removes it)."""
    return {"spec": {"template": {"metadata": {"labels": {MODE_LABEL: previous_mode or None}}}}}


def pod_mode_patch(mode: str) -> dict[str, Any]:
    """Label a live pod (pure metadata: the mode label is in no selector, so nothing restarts)."""
    return {"metadata": {"labels": {MODE_LABEL: mode}}}


def revision_hash_patch(revision: str) -> dict[str, Any]:
    """Relabel a pod to a controller revision, so its controller counts it as already updated."""
    return {"metadata": {"labels": {REVISION_HASH_LABEL: revision}}}


def paused_patch(paused: bool) -> dict[str, Any]:
    """`kubectl rollout pause` / `resume` of a Deployment."""
    return {"spec": {"paused": True if paused else None}}


def partition_patch(partition: int) -> dict[str, Any]:
    """Set a StatefulSet's rolling-update partition: pods with an ordinal below it are not updated."""
    return {"spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}}}


def on_delete_patch() -> dict[str, Any]:
    """Switch a DaemonSet to OnDelete: a template change then replaces no pod until one is deleted."""
    return {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}


def strategy_restore_patch(update_strategy: Mapping[str, Any]) -> dict[str, Any]:
    """Put a DaemonSet's `updateStrategy` back as it was read."""
    return {"spec": {"updateStrategy": dict(update_strategy)}}
