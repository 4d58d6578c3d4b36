"""The kill switch: active while the ConfigMap `ballast-kill-switch` exists in the operator namespace, or while
`BallastConfig ballast` has `spec.suspended: true` (docs/compatibility.md).

The state lives in memory on every replica (the killswitch controller runs everywhere), so a standby's webhook
sees it too — the Go operator keeps it on the leader only.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

CONFIGMAP_REASON = "ConfigMap ballast-kill-switch"
SUSPENDED_REASON = "BallastConfig.spec.suspended"


class KillSwitchState:
    """Thread-safe; `on_transition(active, reason)` is called when the state flips."""

    def __init__(self, on_transition: Callable[[bool, str], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._configmap = False
        self._suspended = False
        self._on_transition = on_transition
        self._resumed: list[queue.Queue[str]] = []

    def update(self, *, configmap: bool, suspended: bool) -> bool:
        """Record what the cache says; returns True when the active state changed."""
        with self._lock:
            was = self._configmap or self._suspended
            previous = self._reason()
            self._configmap, self._suspended = configmap, suspended
            now = configmap or suspended
            reason = self._reason()
            subscribers = list(self._resumed) if was and not now else []
        if now != was and self._on_transition:
            self._on_transition(now, reason)
        for events in subscribers:
            events.put(previous)
        return now != was

    def resumptions(self) -> queue.Queue[str]:
        """A queue of its own that gets the reason the switch was on each time it turns off: a lane watches it
        (`source.Channel`) to re-queue at once what it skipped, instead of at its next periodic requeue."""
        events: queue.Queue[str] = queue.Queue()
        with self._lock:
            self._resumed.append(events)
        return events

    @property
    def active(self) -> bool:
        with self._lock:
            return self._configmap or self._suspended

    @property
    def reason(self) -> str:
        """Why it is active: the Go operator's three reason strings; "" when inactive."""
        with self._lock:
            return self._reason()

    def _reason(self) -> str:
        if self._configmap and self._suspended:
            return f"{CONFIGMAP_REASON} and {SUSPENDED_REASON}"
        if self._configmap:
            return CONFIGMAP_REASON
        if self._suspended:
            return SUSPENDED_REASON
        return ""
