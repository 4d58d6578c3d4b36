"""Policies compiled once into immutable matchers, and a cache keyed by the object's identity and version (any value
derived from a policy can be kept the same way: `PolicyMemo`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ballast.api.ballast.v1.clusterresourcepolicy import ClusterResourcePolicy
from ballast.api.ballast.v1.resourcepolicy import ResourcePolicy
from ballast.api.ballast.v1.workloadprofile import PolicyKind

from .facts import PodFacts
from .problems import PolicyProblem
from .selector import PolicyMatcher, compile_selector
from .settings import settings_problems

Policy = ClusterResourcePolicy | ResourcePolicy
"""Either policy kind, as pydantic models."""

DEFAULT_CACHE_ENTRIES = 1024
_Derived = TypeVar("_Derived")


@dataclass(frozen=True, slots=True)
class CompiledPolicy:
    """A policy ready for matching: its identity, priority, compiled selector and every problem found.

    `matcher` is None when a regex or label selector cannot be compiled; such a policy never matches and
    resolution skips it (docs/design.md, difference 8). `problems` feed the `Valid` condition and the validating
    webhook. `policy` is the model compiled from: treat it as read-only.
    """

    kind: PolicyKind
    namespace: str
    name: str
    priority: int
    policy: Policy
    matcher: PolicyMatcher | None
    problems: tuple[PolicyProblem, ...] = ()

    @property
    def valid(self) -> bool:
        """Whether the policy has no problem at all (`Valid=True`)."""
        return not self.problems

    @property
    def matchable(self) -> bool:
        """Whether the selector compiled; False means resolution skips the policy."""
        return self.matcher is not None

    @property
    def messages(self) -> tuple[str, ...]:
        """Each problem as `path: message`, e.g. `spec.selector.namespaces.include[1]: invalid regex "/(/": …`."""
        return tuple(str(problem) for problem in self.problems)

    def matches(self, pod: PodFacts) -> bool:
        """Whether the selector selects `pod` (always False when the policy is not matchable).

        A ResourcePolicy's own namespace is not checked here; `resolve_policy` only considers a pod's own.
        """
        return self.matcher is not None and self.matcher.matches(pod)


def compile_policy(policy: Policy) -> CompiledPolicy:
    """Compile `policy`'s selector and check its values; never raises for bad content (see `problems`).

    Raises TypeError for anything but a ClusterResourcePolicy or ResourcePolicy model, ValueError for a policy
    without a name or a ResourcePolicy without a namespace.
    """
    if not isinstance(policy, ClusterResourcePolicy | ResourcePolicy):
        raise TypeError(f"expected a ClusterResourcePolicy or ResourcePolicy, got {type(policy).__name__}")
    kind: PolicyKind = "ResourcePolicy" if isinstance(policy, ResourcePolicy) else "ClusterResourcePolicy"
    name = policy.metadata.name
    if not name:
        raise ValueError(f"{kind} has no metadata.name")
    # A ClusterResourcePolicy is cluster-scoped: a namespace in its metadata means nothing.
    namespace = (policy.metadata.namespace or "") if kind == "ResourcePolicy" else ""
    if kind == "ResourcePolicy" and not namespace:
        raise ValueError(f"{kind} {name!r} has no metadata.namespace")
    matcher, selector_problems = compile_selector(policy.spec.selector)
    return CompiledPolicy(
        kind=kind,
        namespace=namespace,
        name=name,
        priority=policy.spec.priority or 0,
        policy=policy,
        matcher=matcher,
        problems=selector_problems + settings_problems(policy.spec),
    )


class PolicyMemo(Generic[_Derived]):
    """Values derived from policies, keyed by (kind, namespace, name, uid, resourceVersion), least recently used
    evicted: what a controller reads from a policy on every reconcile (its compiled selector, its defaulted
    settings) is derived once per version of the object.

    A new resourceVersion derives afresh, so an edited policy is never read through its old value; objects
    without a resourceVersion (built in code) are derived on every call. Policies must not be mutated in place
    while cached (the informer cache's objects are not). Thread-safe.
    """

    def __init__(self, max_entries: int = DEFAULT_CACHE_ENTRIES) -> None:
        """Raises ValueError when `max_entries` is below 1."""
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self._max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str, str, str, str], _Derived] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, policy: Policy, derive: Callable[[Policy], _Derived]) -> _Derived:
        """Return `derive(policy)`, reused while the object's uid and resourceVersion are unchanged. Raises what
        `derive` raises (nothing is kept then)."""
        metadata = policy.metadata
        if not metadata.resource_version:
            return derive(policy)
        cache_key = (
            policy.KIND,
            metadata.namespace or "",
            metadata.name or "",
            metadata.uid or "",
            metadata.resource_version,
        )
        with self._lock:
            if cache_key in self._entries:
                self._entries.move_to_end(cache_key)
                return self._entries[cache_key]
        derived = derive(policy)
        with self._lock:
            self._entries[cache_key] = derived
            self._entries.move_to_end(cache_key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return derived


class PolicyCache:
    """Compiled policies, one per version of the object (`PolicyMemo`). Thread-safe."""

    def __init__(self, max_entries: int = DEFAULT_CACHE_ENTRIES) -> None:
        """Raises ValueError when `max_entries` is below 1."""
        self._compiled = PolicyMemo[CompiledPolicy](max_entries)

    def __len__(self) -> int:
        return len(self._compiled)

    def compile(self, policy: Policy) -> CompiledPolicy:
        """Return `compile_policy(policy)`, reused while the object's uid and resourceVersion are unchanged.

        Raises as `compile_policy` does.
        """
        return self._compiled.get(policy, compile_policy)
