"""Which profiles a MetricsSource's cycle measures, and through which pods — from what the cache holds.

    keys = policy_keys(profiles)                            # the policies to read from the cache
    fed = fed_profiles(source, profiles, policies)          # policies: key → LoadedPolicy (None: not found)
    pods, nodes = measured_pods(fed.profiles, pods_of)      # pods_of: profile name → its cached pods

A profile is measured only when it has a policy (`status.policyRef`), is not being deleted (its history is being
purged), has a valid history identity and selector labels, and its policy takes at least one resource from this
source. Profiles without a policy are never measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ballast.api.ballast.v1 import ClusterResourcePolicy, MetricsSource, ResourcePolicy, WorkloadProfile
from ballast.internal.enrollment import PodProjection
from ballast.internal.history.series import check_measurement_hash

from .attribution import MeasuredPod, MeasuredProfile, PodKey, measured_pod
from .cycle import FedProfile
from .policy_resources import PolicyView

PolicyKey = tuple[str, str, str]
"""(kind, namespace, name) of a profile's `status.policyRef` (namespace "" for a ClusterResourcePolicy)."""


@dataclass(frozen=True, slots=True)
class LoadedPolicy:
    """A policy as collection reads it: its view and the stamp (kind, namespace, name, uid, generation) its
    computations are made under."""

    view: PolicyView
    stamp: tuple[object, ...]

    @classmethod
    def of(cls, policy: ClusterResourcePolicy | ResourcePolicy) -> LoadedPolicy:
        meta = policy.metadata
        stamp = (policy.KIND, meta.namespace or "", meta.name or "", meta.uid, meta.generation)
        return cls(PolicyView.from_spec(policy.spec), stamp)


@dataclass(slots=True)
class FedProfiles:
    """The profiles a cycle measures, and those skipped for want of a history identity (logged by the caller)."""

    profiles: list[FedProfile] = field(default_factory=list)
    without_identity: list[str] = field(default_factory=list)


def policy_key(profile: WorkloadProfile) -> PolicyKey | None:
    """The key of the profile's policy, or None when the profile is never measured (no policy, being deleted)."""
    status = profile.status
    if status is None or status.policy_ref is None or profile.metadata.deletion_timestamp:
        return None
    ref = status.policy_ref
    return ref.kind, ref.namespace or "", ref.name


def policy_keys(profiles: Iterable[WorkloadProfile]) -> set[PolicyKey]:
    """The policies a cycle over `profiles` needs to read."""
    return {key for profile in profiles if (key := policy_key(profile)) is not None}


def fed_profiles(
    source: MetricsSource, profiles: Iterable[WorkloadProfile], policies: Mapping[PolicyKey, LoadedPolicy | None]
) -> FedProfiles:
    """The profiles `source` feeds, in the order given (see the module docstring for who is left out)."""
    name = source.metadata.name or ""
    fed = FedProfiles()
    for profile in profiles:
        key = policy_key(profile)
        loaded = policies.get(key) if key is not None else None
        resources = loaded.view.fed_by(name) if loaded is not None else frozenset()
        if loaded is None or not resources or profile.status is None:
            continue
        profile_name = profile.metadata.name or ""
        measurement_hash = profile.status.measurement_hash or ""
        try:
            check_measurement_hash(measurement_hash)
        except ValueError:
            fed.without_identity.append(profile_name)
            continue
        if profile.status.selector_labels is None:
            continue
        policy_stamp = (measurement_hash, *loaded.stamp)
        stamp = (*policy_stamp, source.metadata.uid, source.metadata.generation)
        measured = MeasuredProfile(profile_name, measurement_hash, resources)
        fed.profiles.append(FedProfile(profile, loaded.view, measured, stamp, policy_stamp))
    return fed


@dataclass(frozen=True, slots=True)
class _Measured:
    pod: PodProjection
    """Held, so that the identity compared is never a reused one."""
    profile: MeasuredProfile
    selector: Mapping[str, str]
    measured: MeasuredPod | None


class MeasuredPodMemo:
    """`measured_pod` once per version of a cached pod and of what its profile measures: the cache replaces a pod
    on every change and never edits one in place, so an unchanged pod is the same object from cycle to cycle.
    Keeps the pods of the last `measured_pods` call only; use one memo per MetricsSource (each source feeds a
    profile other resources, so what it measures differs). Not shared between threads."""

    __slots__ = ("_last", "_seen")

    def __init__(self) -> None:
        self._last: dict[PodKey, _Measured] = {}
        self._seen: dict[PodKey, _Measured] = {}

    def measure(self, pod: PodProjection, profile: MeasuredProfile, selector: Mapping[str, str]) -> MeasuredPod | None:
        key = (pod.metadata.namespace, pod.metadata.name)
        last = self._last.get(key)
        if last is None or last.pod is not pod or last.profile != profile or last.selector != selector:
            last = _Measured(pod, profile, selector, measured_pod(pod, profile, selector))
        self._seen[key] = last
        return last.measured

    def end_call(self) -> None:
        """Forget the pods the call did not see (deleted, or no longer of a fed profile)."""
        self._last, self._seen = self._seen, {}


def measured_pods(
    fed: Iterable[FedProfile], pods_of: Mapping[str, Iterable[PodProjection]], memo: MeasuredPodMemo | None = None
) -> tuple[dict[PodKey, MeasuredPod], frozenset[str]]:
    """The pods attribution counts samples of (by namespace and name), and the nodes they run on (what to fetch).

    `pods_of` holds each fed profile's cached pods (those carrying its `profile-ref`); a pod whose labels no longer
    match its profile's selector labels, or that is not enrolled, is not measured. `memo`: the results of the last
    call, reused for the pods that did not change."""
    pods: dict[PodKey, MeasuredPod] = {}
    nodes: set[str] = set()
    for profile in fed:
        selector = (profile.profile.status.selector_labels if profile.profile.status else None) or {}
        for pod in pods_of.get(profile.name, ()):
            if memo is not None:
                measured = memo.measure(pod, profile.measured, selector)
            else:
                measured = measured_pod(pod, profile.measured, selector)
            if measured is None:
                continue
            pods[(pod.metadata.namespace, pod.metadata.name)] = measured
            if pod.spec.node_name:
                nodes.add(pod.spec.node_name)
    if memo is not None:
        memo.end_call()
    return pods, frozenset(nodes)
