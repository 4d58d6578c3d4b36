"""The Go operator's pod finalizer, removed wherever it is found (docs/design.md, difference 17)."""

from __future__ import annotations

from ballast.runtime import Client, ConflictError, NotFoundError

from .keys import LEGACY_POD_FINALIZER


def remove_legacy_finalizer(client: Client, namespace: str, name: str) -> bool:
    """Drop `ballast.tightlinesoftware.com/workloadwatcher` from a pod, guarded by its resourceVersion.

    Returns whether it was removed; a conflict re-reads and retries (other controllers edit finalizers too).
    """
    ref = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}}
    for _ in range(5):
        try:
            pod = client.get("v1/Pod", name, namespace)
        except NotFoundError:
            return False
        finalizers = list(pod["metadata"].get("finalizers") or [])
        if LEGACY_POD_FINALIZER not in finalizers:
            return False
        kept = [f for f in finalizers if f != LEGACY_POD_FINALIZER]
        patch = {"metadata": {"finalizers": kept, "resourceVersion": pod["metadata"]["resourceVersion"]}}
        try:
            client.patch(ref, patch)
            return True
        except ConflictError:
            continue
    return False
