"""Whether each kupid policy kind can be read: its CRD absent, present but not yet listed, or ready
(docs/design.md, difference 61).

The scheduling webhook and its `schedulingpolicy` lane must tell *absent* from *unknown*. While a CRD does not
exist no policy of its kind can exist, so admitting unchanged is right and the lane keeps its conditions; while it
exists but the kind's informer has not listed since it (re)appeared, policies may exist that nobody has read, so
the webhook waits for that list (and answers "not ready" if it does not come) and the lane sends everything.

    availability = SchedulingAvailability({CLUSTER_KIND: cluster_informer, NAMESPACED_KIND: informer})
    availability.crd_changed(CLUSTER_KIND, present=True)   # from a watch on the CRD (wiring)
    availability.state(CLUSTER_KIND)                       # ABSENT, PENDING or READY
    availability.wait_ready(CLUSTER_KIND, timeout=5.0)     # an admission waits for the first list

A CRD that went away is reported ABSENT at once, but for `grace` seconds (`reinstalling()`) the lane still sends
everything: a delete-and-reinstall (`ballastd apply-crds` after `kubectl delete crd`, the README's migration from
upstream kupid) then never leaves a window in which conditions rendered without the kind are in force while the
CRD is back. A CRD being deleted (`deletionTimestamp` set) is absent: its policies are going with it.

Nothing here reads the cluster: the wiring feeds CRD events in, and the informers are anything with `relist()`,
`wait_for_list(ticket, timeout)`, `completed_lists` and `served` (`ballast.runtime.informer.SharedIndexInformer`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ballast.api.kupid.v1alpha1 import GROUP, VERSION

from .policies import CLUSTER_KIND, NAMESPACED_KIND

ABSENT = "absent"
"""The kind's CRD does not exist (or is being deleted): no policy of the kind exists."""
PENDING = "pending"
"""The CRD exists (or is not known yet) but the kind has not been listed since it (re)appeared."""
READY = "ready"
"""The CRD exists and the kind's informer has listed since: its store is the policies."""

RETRY_SECONDS = 0.2
"""How often a waiting admission lists a kind again whose CRD is there but not served yet."""
GRACE_SECONDS = 30.0
"""How long after a CRD went away the lane still sends every request (a reinstall in progress)."""

POLICY_KINDS = {
    CLUSTER_KIND: f"{GROUP}/{VERSION}/{CLUSTER_KIND}",
    NAMESPACED_KIND: f"{GROUP}/{VERSION}/{NAMESPACED_KIND}",
}
"""Each kind as the cache names it (group/version/kind)."""

CRD_NAMES = {
    CLUSTER_KIND: "clusterpodschedulingpolicies.kupid.gardener.cloud",
    NAMESPACED_KIND: "podschedulingpolicies.kupid.gardener.cloud",
}
"""Each kind's CustomResourceDefinition."""


class PolicyInformer(Protocol):
    """What availability needs of a kind's informer."""

    completed_lists: int
    served: bool

    def relist(self) -> int: ...

    def wait_for_list(self, ticket: int, timeout: float | None = None) -> bool: ...


@dataclass
class _Kind:
    informer: PolicyInformer
    present: bool | None = None  # None until the CRD's watch has said
    ticket: int = 1  # the informer's first list
    gone_at: float | None = None  # monotonic time the CRD went away


class SchedulingAvailability:
    """Per kind: the CRD's presence (fed by `crd_changed`) and the informer's lists since it appeared."""

    def __init__(
        self,
        informers: Mapping[str, PolicyInformer],
        *,
        grace: float = GRACE_SECONDS,
        monotonic: Callable[[], float] | None = None,
    ) -> None:
        self._kinds = {kind: _Kind(informer) for kind, informer in informers.items()}
        self._grace = grace
        self._monotonic = monotonic or time.monotonic
        self._lock = threading.Lock()
        self._listeners: list[Callable[[str], None]] = []

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._kinds)

    def on_change(self, listener: Callable[[str], None]) -> None:
        """Call `listener(kind)` after each change of a kind's CRD presence (the lane re-renders)."""
        self._listeners.append(listener)

    def crd_changed(self, kind: str, *, present: bool) -> None:
        """The CRD of `kind` exists (and is not being deleted) or not. A CRD (re)appearing makes its informer list
        at once — it may be backing off for up to 30 s after the 404s of the CRD's absence."""
        with self._lock:
            state = self._kinds[kind]
            if state.present == present:
                return
            appeared = present and (state.present is not None or not state.informer.served)
            # Only a CRD seen before and gone now is being reinstalled (one missing at start is just absent).
            state.gone_at = self._monotonic() if state.present and not present else None
            state.present = present
            if appeared:
                state.ticket = state.informer.relist()
        for listener in self._listeners:
            listener(kind)

    def state(self, kind: str) -> str:
        """ABSENT, PENDING or READY (see the module's docstring)."""
        with self._lock:
            state = self._kinds[kind]
            if state.present is False:
                return ABSENT
            if state.present is None:
                return PENDING
            informer = state.informer
            return READY if informer.served and informer.completed_lists >= state.ticket else PENDING

    def reinstalling(self, kind: str) -> bool:
        """Whether the CRD of `kind` went away less than the grace period ago (and has not come back)."""
        with self._lock:
            gone_at = self._kinds[kind].gone_at
        return gone_at is not None and self._monotonic() - gone_at < self._grace

    def grace_left(self, kind: str) -> float:
        """Seconds until `reinstalling(kind)` turns False (0 when it is)."""
        with self._lock:
            gone_at = self._kinds[kind].gone_at
        return 0.0 if gone_at is None else max(0.0, self._grace - (self._monotonic() - gone_at))

    def refresh(self, kind: str) -> None:
        """List `kind` again if its CRD is there but its last list still found the kind not served (a CRD is
        seen as soon as it is created, a little before the API server serves its kind)."""
        with self._lock:
            self._retry(self._kinds[kind])

    @staticmethod
    def _retry(state: _Kind) -> None:
        informer = state.informer
        if state.present and not informer.served and informer.completed_lists >= state.ticket:
            state.ticket = informer.relist()

    def wait_ready(self, kind: str, timeout: float) -> bool:
        """Wait up to `timeout` (real) seconds for a PENDING kind's list, listing again every `RETRY_SECONDS`
        while the kind is not served yet; True when the kind is READY or ABSENT."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                state = self._kinds[kind]
                self._retry(state)
                present, ticket, informer = state.present, state.ticket, state.informer
            if present is None:
                return False
            if not present or self.state(kind) == READY:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if informer.wait_for_list(ticket, remaining) and self.state(kind) == READY:
                return True
            time.sleep(min(RETRY_SECONDS, max(0.0, deadline - time.monotonic())))
