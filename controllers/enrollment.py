"""Enrollment (`workloadwatcher-pod`): enrolled pods → WorkloadProfiles, and the refs stamped on pods.

For each enrolled pod (the cache holds only pods with the mode label, as `PodProjection`s): resolve its policy,
compute its identity (tuple labels, profile name, measurement hash), make sure the WorkloadProfile exists with
that identity in its status, and stamp `profile-ref`/`policy-ref` on the pod. A pod whose identity or policy
changes simply gets a new profile-ref — the old profile is recounted by the profile lane, which counts pods
per profile from the profile-ref index (no pod finalizers: docs/design.md, difference 7). A profile is created
with its cleanup finalizer already in place. `ballast_pods_processed_total{event="created"}` counts a pod once,
when its profile-ref is stamped or changed — decided on a live read of the pod, since the cache can lag this
lane's own last stamp.

A pod that left the scoped watch (its mode label was removed) or carries an invalid mode still exists: its
stale refs are removed. The Go operator's pod finalizer is removed wherever it is found (difference 17).

An invalid BallastConfig (difference 26: an identity key that is not a label key, a repeated key, a duration
that does not parse) is not used: no pod is enrolled or re-keyed until it is fixed, and every pod is enrolled
again once it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy, ResourcePolicy, WorkloadProfile
from ballast.api.meta import ObjectMeta
from ballast.internal.enrollment import (
    BALLAST_CONFIG_NAME,
    LEGACY_POD_FINALIZER,
    POLICY_REF,
    PROFILE_CLEANUP_FINALIZER,
    PROFILE_REF,
    PROFILE_REF_INDEX,
    PodProjection,
    is_enrolled,
)
from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.enrollment.legacy import remove_legacy_finalizer
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.naming import measurement_hash, selector_labels
from ballast.internal.operator import OperatorOptions
from ballast.internal.policy import OwnerReader, Resolver, pod_identity, policy_key_for
from ballast.internal.telemetry import PODS_PROCESSED, WORKLOAD_PROFILES_CREATED, profile_attributes
from ballast.runtime import (
    APPLY,
    AlreadyExistsError,
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
from ballast.runtime.handler import MapFunc
from ballast.runtime.predicate import Funcs
from ballast.runtime.source import Channel

NAME = "workloadwatcher-pod"
FIELD_MANAGER = "ballast-workloadwatcher-pod"
KILL_SWITCH_REQUEUE = 60.0
PROFILE_BUSY_REQUEUE = 1.0
POD = "v1/Pod"


def _pod_ref(namespace: str, name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}}


class EnrollmentReconciler:
    """Reconciles one pod: identity → profile → refs."""

    def __init__(self, manager: Manager, kill_switch: KillSwitchState, options: OperatorOptions) -> None:
        self.client = manager.client
        self.live = manager.api_reader
        self.kill_switch = kill_switch
        self.options = options
        # The same resolution and naming as admission (webhook/pods.py): a pod must feed the profile it is sized by.
        self.resolver = Resolver(manager.client, owners=OwnerReader(manager.api_reader))

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            pod: PodProjection = self.client.get(POD, request.name, request.namespace)
        except NotFoundError:
            self._clean_unenrolled(ctx, request)
            return None
        if LEGACY_POD_FINALIZER in pod.metadata.finalizers:
            self._remove_legacy_finalizer(ctx, request)
        if pod.metadata.deletion_timestamp:
            return None  # the profile lane recounts once the pod is gone
        if not is_enrolled(pod.metadata.labels):
            self._clean_unenrolled(ctx, request)
            return None
        if self.kill_switch.active:
            ctx.logger.info("kill switch active, skipping pod", extra={"kill_switch": True})
            return Result(requeue_after=KILL_SWITCH_REQUEUE)
        config = self._config(ctx)
        if config is None:
            return None
        return self._enroll(ctx, pod, config)

    def _config(self, ctx: Context) -> BallastConfig | None:
        """BallastConfig `ballast`, when there is one and it is valid."""
        try:
            config: BallastConfig = self.client.get(BallastConfig, BALLAST_CONFIG_NAME)
        except NotFoundError:
            ctx.logger.info("no BallastConfig %r; nothing to enroll into", BALLAST_CONFIG_NAME)
            return None
        problems = validate_ballast_config(config.spec)
        if problems:  # not used (difference 26): a bad identity key would re-key every pod into one profile
            ctx.logger.info("BallastConfig %r is invalid; nothing enrolled or re-keyed", BALLAST_CONFIG_NAME,
                            extra={"problems": problems})  # fmt: skip
            return None
        return config

    # ------------------------------------------------------------------------------------------ enroll

    def _enroll(self, ctx: Context, pod: PodProjection, config: BallastConfig) -> Result | None:
        namespace = pod.metadata.namespace
        resolution = self.resolver.resolve(pod, namespace)
        identity = list(config.spec.identity_labels)
        labels = pod.metadata.labels
        profile = pod_identity(labels, identity, resolution)
        name, tuple_ = profile.profile, profile.tuple_labels
        status: dict[str, object] = {
            "tupleLabels": tuple_,
            "selectorLabels": selector_labels(labels, identity),
            "measurementHash": measurement_hash(tuple_, policy_key_for(resolution)),
        }
        if resolution is not None:
            status["policyRef"] = resolution.policy_ref().to_wire()
        wait = self._ensure_profile(ctx, name, tuple_, status)
        if wait is not None:
            return wait
        previous = self._stamp(pod, name, resolution.ref if resolution else None)
        if previous is None:
            return None  # already stamped, or gone
        attributes = profile_attributes(name, tuple_)
        if previous != name:
            if previous:
                PODS_PROCESSED.inc(
                    {**profile_attributes(previous, None), "event": "unenrolled", "namespace": namespace}
                )
            PODS_PROCESSED.inc({**attributes, "event": "created", "namespace": namespace})
            ctx.logger.info("pod enrolled", extra={"profile": name, "policy": resolution.ref if resolution else ""})
        return None

    def _ensure_profile(
        self, ctx: Context, name: str, tuple_: Mapping[str, str], status: dict[str, object]
    ) -> Result | None:
        try:
            profile: WorkloadProfile = self.client.get(WorkloadProfile, name)
        except NotFoundError:
            try:
                # With its finalizer: the profile lane need not add it to a profile enrollment is writing to.
                self.client.create(
                    WorkloadProfile(metadata=ObjectMeta(name=name, finalizers=[PROFILE_CLEANUP_FINALIZER]))
                )
            except AlreadyExistsError:
                return Result(requeue_after=PROFILE_BUSY_REQUEUE)
            WORKLOAD_PROFILES_CREATED.inc(profile_attributes(name, tuple_))
            ctx.logger.info("created WorkloadProfile", extra={"profile": name})
            self._apply_status(name, status)
            return None
        if profile.metadata.deletion_timestamp:
            return Result(requeue_after=PROFILE_BUSY_REQUEUE)
        current = profile.status.to_wire() if profile.status else {}
        if any(current.get(key) != value for key, value in status.items()) or (
            "policyRef" not in status and current.get("policyRef")
        ):
            self._apply_status(name, status)
        return None

    def _apply_status(self, name: str, status: dict[str, object]) -> None:
        body = {"apiVersion": WorkloadProfile.API_VERSION, "kind": "WorkloadProfile", "metadata": {"name": name},
                "status": status}  # fmt: skip
        self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)

    def _stamp(self, pod: PodProjection, profile: str, policy: str | None) -> str | None:
        """Stamp the refs; returns the profile-ref the stamp replaced ("" for none), None when nothing was stamped.

        The cached pod can lag this lane's own last stamp (another event of the pod arrived first): before
        stamping, the pod is read live, so each change of a pod's refs is made — and counted — once.
        """
        annotations: Mapping[str, Any] = pod.metadata.annotations
        if annotations.get(PROFILE_REF) == profile and annotations.get(POLICY_REF) == policy:
            return None
        try:
            annotations = objects.annotations(self.live.get(POD, pod.metadata.name, pod.metadata.namespace))
        except NotFoundError:
            return None
        if annotations.get(PROFILE_REF) == profile and annotations.get(POLICY_REF) == policy:
            return None
        patch = {"metadata": {"annotations": {PROFILE_REF: profile, POLICY_REF: policy}}}
        try:
            self.client.patch(_pod_ref(pod.metadata.namespace, pod.metadata.name), patch)
        except NotFoundError:  # deleted since the live read: nothing to stamp, no error (nor a retry)
            return None
        return str(annotations.get(PROFILE_REF) or "")

    # ---------------------------------------------------------------------------------------- unenroll

    def _clean_unenrolled(self, ctx: Context, request: Request) -> None:
        """A pod no longer enrolled (label removed or invalid) keeps no refs of ours."""
        try:
            pod = self.live.get(POD, request.name, request.namespace)
        except NotFoundError:
            return
        if is_enrolled(objects.labels(pod)):
            return  # enrolled after all (the cache lags): the next event brings it back
        annotations = objects.annotations(pod)
        if PROFILE_REF not in annotations and POLICY_REF not in annotations:
            return
        try:
            self.client.patch(
                _pod_ref(request.namespace, request.name),
                {"metadata": {"annotations": {PROFILE_REF: None, POLICY_REF: None}}},
            )
        except NotFoundError:  # deleted since the live read: it keeps no refs
            return
        PODS_PROCESSED.inc({**profile_attributes(annotations.get(PROFILE_REF), None), "event": "unenrolled",
                            "namespace": request.namespace})  # fmt: skip
        ctx.logger.info("pod unenrolled", extra={"profile": annotations.get(PROFILE_REF)})

    def _remove_legacy_finalizer(self, ctx: Context, request: Request) -> None:
        remove_legacy_finalizer(self.live, request.namespace, request.name)
        ctx.logger.info("removed the Go operator's pod finalizer")


# ------------------------------------------------------------------------------------------- watches


def _all_enrolled_pods(manager: Manager) -> MapFunc:
    def requests(_: object) -> list[Request]:
        return [Request(objects.namespace(p), objects.name(p)) for p in manager.cache.list(POD)]

    return requests


def _pods_of_profile(manager: Manager) -> MapFunc:
    def requests(profile: object) -> list[Request]:
        pods = manager.cache.list(POD, index=(PROFILE_REF_INDEX, objects.name(profile)))
        return [Request(objects.namespace(p), objects.name(p)) for p in pods]

    return requests


def _selection_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """A policy edit migrates pods only when its selection or precedence changed (other edits are live)."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    return bool(
        old_spec.get("priority") != new_spec.get("priority") or old_spec.get("selector") != new_spec.get("selector")
    )


def _identity_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Pods are enrolled again when the identity labels change, and when the config becomes usable or unusable
    (a fixed `orphanTTL` resumes the enrollment an invalid config held back)."""
    if (old.get("spec") or {}).get("identityLabels") != (new.get("spec") or {}).get("identityLabels"):
        return True
    return _usable(old) != _usable(new)


def _usable(config: Mapping[str, Any]) -> bool:
    return not validate_ballast_config(objects.thaw(config.get("spec") or {}))


def setup(manager: Manager, *, kill_switch: KillSwitchState, options: OperatorOptions) -> Controller:
    """Register the enrollment controller on `manager` (the pod cache and profile-ref index come from the wiring)."""
    every_pod = EnqueueRequestsFromMapFunc(_all_enrolled_pods(manager))
    only_ballast = Funcs(
        create_func=lambda e: objects.name(e.object) == BALLAST_CONFIG_NAME,
        update_func=lambda e: (
            objects.name(e.object_new) == BALLAST_CONFIG_NAME and _identity_changed(e.object_old, e.object_new)
        ),
        delete_func=lambda e: False,
        generic_func=lambda e: False,
    )
    policy_changes = Funcs(update_func=lambda e: _selection_changed(e.object_old, e.object_new))
    profile_deleted = Funcs(create_func=lambda e: False, update_func=lambda e: False)
    return (
        Builder(manager)
        .for_(POD)
        .watches(WorkloadProfile, EnqueueRequestsFromMapFunc(_pods_of_profile(manager)), predicates=[profile_deleted])
        .watches(BallastConfig, every_pod, predicates=[only_ballast])
        .watches(ClusterResourcePolicy, every_pod, predicates=[policy_changes])
        .watches(ResourcePolicy, every_pod, predicates=[policy_changes])
        .watches_source(Channel(kill_switch.resumptions(), every_pod))  # pods skipped while the switch was on
        .named(NAME)
        .complete(EnrollmentReconciler(manager, kill_switch, options))
    )
