"""The part of a kubelet's job kwok leaves out: reflecting an in-place resize in the Pod's status.

kwok moves Pods through their lifecycle but never actuates a resize: after a `pods/resize` patch it leaves
`containerStatuses[].resources` as they were (verified against kwok v0.8.0). `ResizeActuator` plays the
kubelet's part for the Pods it watches: when a container's spec resources differ from what its status
reports, it writes them to `resources` and `allocatedResources`, clears the resize conditions and records the
generation it acted on (`status.observedGeneration`), as a kubelet does once a resize is done.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import APIError

if TYPE_CHECKING:
    from .environment import Environment

RESIZE_CONDITIONS = ("PodResizePending", "PodResizeInProgress")


def actuated_status(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """The status patch that completes `pod`'s resize, or None when its status already matches its spec."""
    spec = {c["name"]: c.get("resources", {}) for c in pod.get("spec", {}).get("containers", [])}
    status = pod.get("status", {})
    statuses = status.get("containerStatuses") or []
    if not statuses:
        return None  # not started yet: kwok writes the first statuses, and the spec is what they start with
    updated = []
    changed = False
    for reported in statuses:
        wanted = spec.get(reported["name"], {})
        resources = {key: dict(wanted[key]) for key in ("requests", "limits") if wanted.get(key)}
        allocated = resources.get("requests", {})
        stale = reported.get("resources") != resources or reported.get("allocatedResources") != allocated
        changed |= stale
        updated.append({**reported, "resources": resources, "allocatedResources": allocated} if stale else reported)
    if not changed:
        return None
    conditions = [c for c in status.get("conditions", []) if c.get("type") not in RESIZE_CONDITIONS]
    return {
        "metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]},
        "status": {
            "containerStatuses": updated,
            "conditions": conditions,
            "observedGeneration": pod["metadata"].get("generation", 1),
        },
    }


class ResizeActuator:
    """Completes in-place resizes of the Pods matching `label_selector`, polling every `interval` seconds."""

    def __init__(self, env: Environment, label_selector: str, *, interval: float = 0.5) -> None:
        self.env = env
        self.label_selector = label_selector
        self.interval = interval
        self.actuated = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="resize-actuator", daemon=True)

    def start(self) -> ResizeActuator:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=10)

    def __enter__(self) -> ResizeActuator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                self.sweep()
            except APIError:
                continue  # the API server restarting under a fault scenario: try again next round

    def sweep(self) -> int:
        """One round: actuate every pending resize; returns how many Pods were updated."""
        pods = self.env.rest.get("/api/v1/pods", {"labelSelector": self.label_selector})["items"]
        done = 0
        for pod in pods:
            patch = actuated_status(pod)
            if patch is None or pod["metadata"].get("deletionTimestamp"):
                continue
            meta = pod["metadata"]
            try:
                self.env.rest.patch_status(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}", patch)
            except APIError as exc:
                if exc.status in (404, 409):  # deleted, or changed meanwhile: the next round sees the new one
                    continue
                raise
            done += 1
        self.actuated += done
        return done


__all__ = [
    "RESIZE_CONDITIONS",
    "ResizeActuator",
    "actuated_status",
]
