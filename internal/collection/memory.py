"""The collection lane's leader-local memory, rebuilt by a fresh leader within one cycle of each source:

- per source, the resources its latest cycle delivered for each profile (what `Ready` is judged by);
- per profile (same uid), the last status applied: its state, the memo of each series' last computation (what
  `refresh` reuses) and the body sent (a status that did not change is not written again);
- the ceilings of each profile's recommendations and the allocatable of the nodes they come from (`ceilings`).

One collection worker runs the cycles, but status writers report from threads, and the OOM watcher counts the
samples it writes from its own: access is locked.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .ceilings import Ceilings, RecommendationCeilings
from .plan import StatusPlan
from .refresh import PolicyStamp, SeriesMemo
from .status import ContainerState, Pair, ProfileStatus


@dataclass(slots=True)
class ProfileMemory:
    """The last status this process applied to a profile (same uid), and what it was computed from."""

    uid: str
    state: ContainerState
    memos: dict[Pair, SeriesMemo]
    meets_threshold: bool
    body: Mapping[str, Any] | None = None
    """The status body applied (None: not known to be in the API server)."""
    status: ProfileStatus | None = None
    """The status assembled from `state` (reused as long as nothing in `state` changes)."""
    stamp: PolicyStamp = None
    """The policy stamp `status` was assembled under (`FedProfile.policy_stamp`: any source's cycle reuses it)."""

    def status_if_unchanged(self, plan: StatusPlan, ceilings: Ceilings | None = None) -> ProfileStatus | None:
        """The status assembled last time, when `plan` changes nothing in the state under the same stamp and the
        same ceilings (None: none)."""
        status = self.status
        if (
            status is None
            or plan.changed
            or self.stamp != plan.fed.policy_stamp
            or status.ceilings != dict(ceilings or {})
        ):
            return None
        return status

    def working_copy(self) -> tuple[ContainerState, dict[Pair, SeriesMemo]]:
        """The state and memos to plan a cycle on (the memos themselves are shared: they only ever grow)."""
        return {container: dict(resources) for container, resources in self.state.items()}, dict(self.memos)


class CollectionMemory:
    """See the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._delivered: dict[str, dict[str, frozenset[str]]] = {}
        self._profiles: dict[str, ProfileMemory] = {}
        self.ceilings = RecommendationCeilings()

    # --------------------------------------------------------------------------------------------- sources

    def forget_source(self, source: str) -> None:
        """A deleted MetricsSource delivers nothing any more."""
        with self._lock:
            self._delivered.pop(source, None)

    def remember_delivered(self, source: str, delivered: Mapping[str, frozenset[str]]) -> None:
        """What `source`'s latest cycle delivered, per profile it fed (replacing the previous cycle's)."""
        with self._lock:
            self._delivered[source] = dict(delivered)

    def delivered_to(self, profile: str) -> dict[str, frozenset[str] | None]:
        """Per source polled by this process, what its latest cycle delivered for `profile` (None: not fed)."""
        with self._lock:
            return {source: by_profile.get(profile) for source, by_profile in self._delivered.items()}

    # -------------------------------------------------------------------------------------------- profiles

    def profile(self, name: str, uid: str) -> ProfileMemory | None:
        """What this process last applied to profile `name`, if it is still the same object (uid)."""
        with self._lock:
            remembered = self._profiles.get(name)
        return remembered if remembered is not None and remembered.uid == uid else None

    def remember(self, name: str, applied: ProfileMemory, *, cached_meets_threshold: bool) -> bool:
        """Record a status applied (or found unchanged); returns whether `meetsThreshold` just became true — judged
        against what this process applied before, or the cached status for a profile it has not written yet."""
        with self._lock:
            previous = self._profiles.get(name)
            self._profiles[name] = applied
        was = previous.meets_threshold if previous is not None and previous.uid == applied.uid else None
        return applied.meets_threshold and not (cached_meets_threshold if was is None else was)

    def samples_written(self, observed: Mapping[str, Mapping[Pair, int]], at_ms: int) -> None:
        """Count a written cycle's samples (per profile, per pair) into the memos they make older."""
        with self._lock:
            for profile, counts in observed.items():
                remembered = self._profiles.get(profile)
                if remembered is None:
                    continue
                for pair, count in counts.items():
                    memo = remembered.memos.get(pair)
                    if memo is not None:
                        memo.saw_samples(count, at_ms)

    def keep_only(self, profiles: Collection[str]) -> None:
        """Forget profiles that are gone."""
        with self._lock:
            for gone in [name for name in self._profiles if name not in profiles]:
                del self._profiles[gone]
        self.ceilings.keep_only(profiles)
