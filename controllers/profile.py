"""Profile lifecycle (`workloadwatcher-profile`): active-workload counts, Orphaned, orphanTTL, history purge.

Level-triggered per profile: `activeWorkloads` is the number of enrolled, non-terminating cached pods whose
`profile-ref` names the profile (the profile-ref index). Pod events enqueue the profile of the old and of the
new pod state — a pod deleted, or dropped from the scoped watch because its mode label went, arrives as a
delete carrying its last state — so counts follow without pod finalizers (docs/design.md, difference 7).

At zero the profile gets `Orphaned=True`; after the BallastConfig's `orphanTTL` it is deleted, and its cleanup
finalizer purges its history from the store. A profile deleted because its CRD is going (the CRD has a
deletionTimestamp, or is gone) or because `ballastd uninstall` marked the BallastConfig loses the finalizer
without the purge: its history waits for the profile to come back, and the history sweep
(`ballast.internal.history.orphans`) purges it after `orphanTTL` without one (docs/design.md, difference 53).
The kill switch does not stop this lane (docs/compatibility.md).
While the BallastConfig is invalid (docs/design.md, difference 26) no orphaned profile is deleted.
"""

from __future__ import annotations

import datetime
from typing import Any

from ballast.api.ballast.v1 import BallastConfig, WorkloadProfile
from ballast.api.ballast.v1.workloadprofile import ORPHANED
from ballast.internal.enrollment import (
    BALLAST_CONFIG_NAME,
    PROFILE_CLEANUP_FINALIZER,
    PROFILE_REF,
    PROFILE_REF_INDEX,
    UNINSTALLING_ANNOTATION,
    WORKLOAD_PROFILE_CRD,
    PodProjection,
    Population,
    population,
)
from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.history import HistoryStore
from ballast.internal.naming import tuple_hash
from ballast.internal.operator import OperatorOptions
from ballast.internal.stats import parse_duration
from ballast.internal.telemetry import WORKLOAD_PROFILES_PURGED, profile_attributes
from ballast.runtime import (
    APPLY,
    Builder,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    Manager,
    NotFoundError,
    Request,
    Result,
    objects,
)
from ballast.runtime.conditions import condition, find_status_condition, kept_transition_time
from ballast.runtime.restmapper import NoKindMatchError

NAME = "workloadwatcher-profile"
FIELD_MANAGER = "ballast-workloadwatcher-profile"
POD = "v1/Pod"
CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"
NO_ACTIVE_WORKLOADS = "NoActiveWorkloads"
UNINSTALL_MARK_TTL = datetime.timedelta(hours=1)
"""How long `ballastd uninstall`'s mark keeps deleted profiles' history (its hook runs well within it)."""


class ProfileReconciler:
    def __init__(self, manager: Manager, store: HistoryStore, options: OperatorOptions) -> None:
        self.client = manager.client
        self.api_reader = manager.api_reader
        self.cache = manager.cache
        self.store = store
        self.clock = options.clock

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            profile: WorkloadProfile = self.client.get(WorkloadProfile, request.name)
        except NotFoundError:
            return None
        if profile.metadata.deletion_timestamp:
            self._finalize(ctx, profile)
            return None
        if PROFILE_CLEANUP_FINALIZER not in (profile.metadata.finalizers or []):
            self._patch_finalizers(profile, [*(profile.metadata.finalizers or []), PROFILE_CLEANUP_FINALIZER])
        pods: list[PodProjection] = self.cache.list(POD, index=(PROFILE_REF_INDEX, request.name)).items
        orphaned_since = self._write_population(profile, population(pods))
        if orphaned_since is None:
            return None
        return self._expire(ctx, profile, orphaned_since)

    def _write_population(self, profile: WorkloadProfile, pods: Population) -> datetime.datetime | None:
        """Apply activeWorkloads, contributingNamespaces and the Orphaned condition; returns when it became
        orphaned (None if not)."""
        status = profile.status
        current = find_status_condition(status.conditions, ORPHANED) if status else None
        now = self.clock.now()
        conditions: list[dict[str, Any]] = []
        since: datetime.datetime | None = None
        count = pods.active
        namespaces = pods.contributing_namespaces()
        if count == 0:
            since = kept_transition_time(current, "True") or now
            message = "No active workloads for this profile"
            conditions.append(condition(ORPHANED, "True", NO_ACTIVE_WORKLOADS, message, previous=current, now=now))
        unchanged = (
            status is not None
            and status.active_workloads == count
            and (status.contributing_namespaces.to_wire() if status.contributing_namespaces else None) == namespaces
            and ((current is not None and current.status == "True") == (count == 0))
        )
        if not unchanged:
            body = {"apiVersion": WorkloadProfile.API_VERSION, "kind": "WorkloadProfile",
                    "metadata": {"name": profile.metadata.name},
                    "status": {"activeWorkloads": count, "contributingNamespaces": namespaces,
                               "conditions": conditions}}  # fmt: skip
            self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)
        return since

    def _expire(self, ctx: Context, profile: WorkloadProfile, since: datetime.datetime) -> Result | None:
        try:
            config: BallastConfig = self.client.get(BallastConfig, BALLAST_CONFIG_NAME)
        except NotFoundError:
            return None
        problems = validate_ballast_config(config.spec)
        if problems:  # not used (difference 26); the BallastConfig watch brings the profile back once it is fixed
            ctx.logger.info("BallastConfig is invalid; orphaned profile kept", extra={"profile": profile.metadata.name,
                            "problems": problems})  # fmt: skip
            return None
        ttl = parse_duration(config.spec.orphan_ttl) / 1e9
        age = (self.clock.now() - since).total_seconds()
        if age < ttl:
            return Result(requeue_after=ttl - age)
        ctx.logger.info("deleting orphaned profile after its TTL", extra={"profile": profile.metadata.name})
        self.client.delete(profile, ignore_not_found=True)
        return None

    def _finalize(self, ctx: Context, profile: WorkloadProfile) -> None:
        if PROFILE_CLEANUP_FINALIZER not in (profile.metadata.finalizers or []):
            return
        kept_because = self._history_kept_because()
        if kept_because is None:
            self._purge(ctx, profile)
        else:
            ctx.logger.info("profile deleted, history kept", extra={"profile": profile.metadata.name,
                            "reason": kept_because})  # fmt: skip
        kept = [f for f in (profile.metadata.finalizers or []) if f != PROFILE_CLEANUP_FINALIZER]
        self._patch_finalizers(profile, kept)

    def _history_kept_because(self) -> str | None:
        """Why a deleted profile keeps its history, or None when it was deleted on its own (a history reset)."""
        try:
            config: BallastConfig = self.client.get(BallastConfig, BALLAST_CONFIG_NAME)
        except (NotFoundError, NoKindMatchError):
            pass
        else:
            if self._uninstalling((config.metadata.annotations or {}).get(UNINSTALLING_ANNOTATION)):
                return "the install is being removed (ballastd uninstall)"
        # Read live: the CRD's deletionTimestamp is set before the API server deletes its objects.
        try:
            crd = self.api_reader.get(CRD, WORKLOAD_PROFILE_CRD)
        except (NotFoundError, NoKindMatchError):
            return "the WorkloadProfile CRD is gone"
        if crd["metadata"].get("deletionTimestamp"):
            return "the WorkloadProfile CRD is being deleted"
        return None

    def _uninstalling(self, marked_at: str | None) -> bool:
        """Whether `ballastd uninstall` marked the install within `UNINSTALL_MARK_TTL`: a mark left on a
        BallastConfig that outlived its install must not keep every later deletion from resetting history."""
        try:
            moment = datetime.datetime.fromisoformat(marked_at) if marked_at else None
        except ValueError:
            return False
        if moment is None or moment.tzinfo is None:
            return False
        return self.clock.now() - moment < UNINSTALL_MARK_TTL

    def _purge(self, ctx: Context, profile: WorkloadProfile) -> None:
        status = profile.status
        digest = status.measurement_hash if status and status.measurement_hash else None
        if digest is None and status and status.tuple_labels:
            digest = tuple_hash(status.tuple_labels)  # profiles written before measurement hashes existed
        if digest:
            removed = self.store.purge(digest)
            ctx.logger.info("purged profile history", extra={"profile": profile.metadata.name, "series": removed})
        WORKLOAD_PROFILES_PURGED.inc(profile_attributes(profile.metadata.name, status.tuple_labels if status else None))

    def _patch_finalizers(self, profile: WorkloadProfile, finalizers: list[str]) -> None:
        # Guarded by resourceVersion: a conflict is raised and retried with backoff from a fresh read.
        patch = {"metadata": {"finalizers": finalizers, "resourceVersion": profile.metadata.resource_version}}
        self.client.patch(_profile_ref(str(profile.metadata.name)), patch)


def _profile_ref(name: str) -> dict[str, object]:
    return {"apiVersion": WorkloadProfile.API_VERSION, "kind": "WorkloadProfile", "metadata": {"name": name}}


def _profile_of_pod(pod: PodProjection) -> list[Request]:
    ref = pod.metadata.annotations.get(PROFILE_REF)
    return [Request("", ref)] if ref else []


def setup(manager: Manager, *, store: HistoryStore, options: OperatorOptions) -> Controller:
    """Register the profile lifecycle controller on `manager`."""

    def all_profiles(_: object) -> list[Request]:
        return [Request("", objects.name(p)) for p in manager.cache.list(WorkloadProfile)]

    return (
        Builder(manager)
        .for_(WorkloadProfile)
        .watches(POD, EnqueueRequestsFromMapFunc(_profile_of_pod))
        .watches(BallastConfig, EnqueueRequestsFromMapFunc(all_profiles))
        .named(NAME)
        .complete(ProfileReconciler(manager, store, options))
    )
