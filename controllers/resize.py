"""In-place resize (`resourceadjuster`): move running `resize`-mode pods toward their profile's recommendations.

Per WorkloadProfile (docs/compatibility.md, with docs/design.md, differences 4, 5, 10, 20 and 74): once the profile has
ready containers and its policy is loaded, every cached pod of the profile in `resize` mode is checked in turn —
backoff after a block, the kubelet's verdict on the previous resize, the cooldown — then each cpu/memory field
whose recommendation drifts beyond its threshold moves one capped step toward it (snapping when close). The
step is sent as a **strategic-merge** patch of `pods/<name>/resize` naming only the changed containers and
fields, built from a live re-read of the pod.

Where we differ from the Go operator, deliberately:
- Readiness is per container (difference 5): while `meetsThreshold` is false, containers that are ready are resized
  on their own (the rule admission uses); `not_ready` means no container is ready.
- Guaranteed pods move request and limit together and stay Guaranteed; BestEffort pods, and Burstable changes
  that would flip the class, are `qos_pinned` (difference 10).
- A request never exceeds a limit: a limit the policy does not manage is raised keeping the container's
  limit:request ratio, and counted in `ballast_apply_limit_scaled_total` (difference 4).
- The kubelet's outcome is followed (difference 20): `PodResizeInProgress` → skip (`in_progress`), no resize on
  top; `PodResizePending`/`Deferred` → wait out the interval since the last resize (`deferred`), then retry;
  `PodResizePending`/`Infeasible` → blocked annotations and a `ResizeBlocked` event, as a rejected patch gets;
  `PodResizeInProgress`/`Error` (the kubelet failed, e.g. a memory limit below usage) → the same, once, and not
  taken for a resize in progress: after the interval the planner may replace the failing spec (difference 74).
- On API servers older than in-place resize GA (1.35) nothing is patched: the profile gets the condition
  `InPlaceResize=False` (reason `Unsupported`), written by server-side apply as field manager `ballast-resize`.
- A memory limit below the profile's OOM floor (controllers/oom.py) is raised to it in one step, inside the
  cooldown and past `maxChangePerCycle`, with the annotation `oom-raised-for` (difference 64).
- A capped step that rounds to the current value is `no_drift` instead of the same patch every interval.
- The cooldown (`last-resize`) is written before the step, so a leader dying between the two cannot have its
  successor repeat the step inside the interval (difference 47).
- Dry-run (`options.dry_run.resize`, on whenever measure or apply dry-run is) writes nothing: no patch, no
  annotation, no event, no condition; it logs and counts `skipped{dry_run}`.

Skip reasons are the Go operator's (`kill_switch`, `not_ready`, `no_policy` with policy and namespace ""; `blocked`,
`cooldown`, `no_drift`, `not_resizable`, `qos_pinned`, `dry_run`) plus `in_progress` and `deferred`.

Every decision is pure code in `ballast.internal.resize` (`ResizeSettings`, `decide`, `plan_resize`, the kubelet's
outcome, the `InPlaceResize` condition); this module reads the cache and the live pod, calls it, and writes the
patch, the annotations, the events, the condition and the metrics.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ballast.api.ballast.v1 import (
    ClusterResourcePolicy,
    PolicyRef,
    ResourcePolicy,
    WorkloadProfile,
    WorkloadProfileStatus,
)
from ballast.api.meta import find_status_condition
from ballast.internal.enrollment import LAST_RESIZE, PROFILE_REF_INDEX, PodProjection, wants_resize
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.oom import OOM_RAISED_FOR, Floor, active_floors, raised_for
from ballast.internal.operator import OperatorOptions
from ballast.internal.policy import PolicyMemo
from ballast.internal.quantity import to_units
from ballast.internal.resize import (
    DRY_RUN,
    IN_PLACE_RESIZE,
    KILL_SWITCH,
    KUBELET_ERROR,
    MARK_BLOCKED,
    NO_POLICY,
    NOT_READY,
    OOM_RAISE,
    RESIZE,
    SKIP,
    Decision,
    Recommendations,
    ResizeSettings,
    blocked_patch,
    condition_differs,
    condition_patch,
    decide,
    format_time,
    parse_server_version,
    recommendations_from,
    resized_patch,
    still_ours,
    supports_in_place,
    wanted_condition,
)
from ballast.internal.telemetry import (
    APPLY_LIMIT_SCALED,
    RESIZE_APPLIED,
    RESIZE_FAILED,
    RESIZE_SKIPPED,
    profile_attributes,
)
from ballast.runtime import (
    APPLY,
    STRATEGIC,
    APIStatusError,
    Builder,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    GroupVersionKind,
    Manager,
    NotFoundError,
    Request,
    Result,
    objects,
)
from ballast.runtime.client import APIServerClient
from ballast.runtime.log import Logger
from ballast.runtime.predicate import Funcs
from ballast.runtime.source import Channel

NAME = "resourceadjuster"
FIELD_MANAGER = "ballast-resize"
EVENT_COMPONENT = "ballast"
POD = "v1/Pod"
POD_KIND = GroupVersionKind("", "v1", "Pod")

PROFILE_REQUEUE = 15 * 60.0
"""Requeue of the profile-level skips (kill switch, not ready, no policy, unsupported server): constant 15 m."""

RESIZED = "Resized"
RESIZE_BLOCKED_EVENT = "ResizeBlocked"
RESIZED_MESSAGE = "in-place resize applied by Ballast"

VersionReader = Callable[[], str]
"""Returns the API server's version string (`/version` gitVersion, e.g. `v1.37.2`)."""


def read_server_version(client: APIServerClient) -> str:
    """The API server's `/version` gitVersion (or `v<major>.<minor>` when gitVersion is missing)."""
    info = orjson.loads(client.transport.request("GET", "/version").data)
    git_version = str(info.get("gitVersion") or "")
    if parse_server_version(git_version) is not None:
        return git_version
    return f"v{info.get('major', '')}.{info.get('minor', '')}"


def _pod_ref(pod: Mapping[str, Any]) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": objects.name(pod), "namespace": objects.namespace(pod)}}  # fmt: skip


def _meets_threshold(obj: object) -> bool:
    status = obj.get("status") if isinstance(obj, Mapping) else None
    return bool((status or {}).get("meetsThreshold"))


def _oom_kills(obj: object) -> object:
    status = obj.get("status") if isinstance(obj, Mapping) else None
    return (status or {}).get("oomKills")


def profile_predicate() -> Funcs:
    """Updates pass when the generation changed, `status.meetsThreshold` flipped or `status.oomKills` changed (an
    OOM floor is raised at once, difference 64); create/delete/generic pass."""
    return Funcs(
        update_func=lambda e: (
            objects.generation(e.object_old) != objects.generation(e.object_new)
            or _meets_threshold(e.object_old) != _meets_threshold(e.object_new)
            or _oom_kills(e.object_old) != _oom_kills(e.object_new)
        )
    )


@dataclass(frozen=True)
class _Run:
    """One profile's reconcile: what every pod of it shares."""

    profile: str
    attributes: Mapping[str, str]
    policy: str
    settings: ResizeSettings
    recommendations: Recommendations
    now: datetime.datetime
    oom_floors: Mapping[str, Floor]

    def labels(self, namespace: str, **extra: str) -> dict[str, str]:
        return {**self.attributes, "policy": self.policy, "namespace": namespace, **extra}


def _pod_logger(ctx: Context, run: _Run, pod: Mapping[str, Any]) -> Logger:
    values = {"pod": objects.name(pod), "namespace": objects.namespace(pod), "profile": run.profile,
              "policy": run.policy}  # fmt: skip
    return ctx.logger.with_values(**values)


class ResourceAdjuster:
    """The reconciler of the resize lane; see the module docstring."""

    def __init__(
        self,
        manager: Manager,
        *,
        kill_switch: KillSwitchState,
        options: OperatorOptions,
        server_version: VersionReader | None = None,
    ) -> None:
        self.client = manager.client
        self.cache = manager.cache
        self.api_reader = manager.api_reader
        self.recorder = manager.get_event_recorder(EVENT_COMPONENT)
        self.kill_switch = kill_switch
        self.dry_run = options.dry_run.resize
        self.clock = options.clock
        self._read_version: VersionReader = server_version or (lambda: read_server_version(manager.api_reader))
        self._version: tuple[str, bool] | None = None
        self._version_lock = threading.Lock()
        self._settings = PolicyMemo[ResizeSettings]()
        """Each policy's resize settings, once per version of the object."""

    # ----------------------------------------------------------------------------------------- profile

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            profile: WorkloadProfile = self.client.get(WorkloadProfile, request.name)
        except NotFoundError:
            return None
        status = profile.status or WorkloadProfileStatus()
        attributes = profile_attributes(request.name, status.tuple_labels)
        if self.kill_switch.active:
            return self._profile_skip(ctx, attributes, KILL_SWITCH, kill_switch_reason=self.kill_switch.reason)
        recommendations = recommendations_from(status)
        if not recommendations:
            return self._profile_skip(ctx, attributes, NOT_READY)
        ref = status.policy_ref
        settings = self._policy_settings(ref) if ref is not None else None
        if ref is None or settings is None:
            return self._profile_skip(ctx, attributes, NO_POLICY)
        pods = self._resize_pods(request.name)
        if not self._in_place_available(ctx, profile, bool(pods)):
            return Result(requeue_after=PROFILE_REQUEUE)
        now = self.clock.now()
        run = _Run(request.name, attributes, ref.name, settings, recommendations, now, active_floors(status, now))
        failure: Exception | None = None
        for pod in pods:
            try:
                self._reconcile_pod(ctx, run, pod)
            except Exception as exc:  # one pod's failure must not starve the others; retried with backoff
                ctx.logger.error("resize of pod failed", exc_info=exc, extra={"pod": objects.object_key(pod)})
                failure = failure or exc
        if failure is not None:
            raise failure
        return Result(requeue_after=settings.interval)

    def _profile_skip(self, ctx: Context, attributes: Mapping[str, str], reason: str, **log: Any) -> Result:
        RESIZE_SKIPPED.inc({**attributes, "reason": reason, "policy": "", "namespace": ""})
        ctx.logger.debug("skipping resize of profile", extra={"reason": reason, **log})
        return Result(requeue_after=PROFILE_REQUEUE)

    def _policy_settings(self, ref: PolicyRef) -> ResizeSettings | None:
        """The resize settings of the policy the profile was resolved under, from the cache; None when it is gone.
        Read once per version of the policy: defaulting a spec costs more than planning a pod."""
        policy: ClusterResourcePolicy | ResourcePolicy
        try:
            if ref.kind == "ClusterResourcePolicy":
                policy = self.client.get(ClusterResourcePolicy, ref.name)
            elif ref.kind == "ResourcePolicy":
                policy = self.client.get(ResourcePolicy, ref.name, ref.namespace or "")
            else:
                raise ValueError(f"unknown policy kind {ref.kind!r} in policyRef")
        except NotFoundError:
            return None
        return self._settings.get(policy, lambda read: ResizeSettings.from_spec(read.spec))

    def _resize_pods(self, profile: str) -> list[PodProjection]:
        """Cached pods of the profile in `resize` mode, not terminating, in a stable order."""
        pods: list[PodProjection] = self.cache.list(POD, index=(PROFILE_REF_INDEX, profile)).items
        kept = [p for p in pods if wants_resize(p.metadata.labels) and not p.metadata.deletion_timestamp]
        return sorted(kept, key=objects.object_key)

    # ------------------------------------------------------------------------------ server support

    def server_version(self) -> tuple[str, bool]:
        """(version, in-place resize available), read once; a failed read raises and is tried again later."""
        with self._version_lock:
            if self._version is None:
                text = self._read_version()
                self._version = (text, supports_in_place(text))
            return self._version

    def _in_place_available(self, ctx: Context, profile: WorkloadProfile, has_pods: bool) -> bool:
        """Whether this server resizes in place; keeps the profile's `InPlaceResize` condition in line with it
        (present only while the server is too old and the profile has pods in resize mode)."""
        version, supported = self.server_version()
        current = find_status_condition(profile.status.conditions if profile.status else None, IN_PLACE_RESIZE)
        wanted = wanted_condition(version, supported, has_pods, current, self.clock.now())
        if not condition_differs(current, wanted):
            return supported
        if self.dry_run:
            ctx.logger.info("dry-run: would update the InPlaceResize condition", extra={"dry_run": True})
            return supported
        ctx.logger.info("updating the InPlaceResize condition",
                        extra={"server_version": version, "unsupported": wanted is not None})  # fmt: skip
        body = condition_patch(profile.metadata.name or "", wanted)
        self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)
        return supported

    # ---------------------------------------------------------------------------------------------- pods

    def _reconcile_pod(self, ctx: Context, run: _Run, cached: PodProjection) -> None:
        """Decide on the cached pod; a decision that writes is made again on a live read, and that one acts."""
        pod: Mapping[str, Any] = objects.thaw(cached)
        floors = {name: floor.limit for name, floor in run.oom_floors.items()}
        decision = decide(pod, run.recommendations, run.settings, run.now, floors)
        if decision.writes and not self.dry_run:
            try:
                pod = self.api_reader.get(POD, cached.metadata.name, cached.metadata.namespace)
            except NotFoundError:
                return
            if not still_ours(pod, run.profile):
                return
            decision = decide(pod, run.recommendations, run.settings, run.now, floors)
        logger = _pod_logger(ctx, run, pod)
        if decision.action == SKIP:
            RESIZE_SKIPPED.inc(run.labels(objects.namespace(pod), reason=decision.reason))
            logger.debug(decision.message, extra={"reason": decision.reason})
        elif self.dry_run:
            RESIZE_SKIPPED.inc(run.labels(objects.namespace(pod), reason=DRY_RUN))
            what = "dry-run: would resize pod" if decision.action == RESIZE else "dry-run: would mark resize blocked"
            logger.info(what, extra={"dry_run": True, "resources": decision.plan.patch()["spec"],
                                     "blocked_reason": decision.message})  # fmt: skip
        elif decision.action == MARK_BLOCKED:
            verdict = "failed on the node" if decision.reason == KUBELET_ERROR else "infeasible"
            self._blocked(logger, run, pod, decision.message, f"in-place resize {verdict}: {decision.message}")
        else:
            self._resize(logger, run, pod, decision)

    def _resize(
        self, logger: logging.LoggerAdapter[logging.Logger], run: _Run, pod: Mapping[str, Any], decision: Decision
    ) -> None:
        patch = decision.plan.patch()
        # The cooldown is written before the step: a crash between the two then costs the next leader one
        # interval's wait, never a second step inside the interval (docs/design.md, difference 47).
        previous = objects.annotations(pod).get(LAST_RESIZE)
        intent = resized_patch(run.now)
        if decision.reason == OOM_RAISE:  # which limits the floor raised, and after kills where (difference 64)
            written = {c.name: to_units(c.limits["memory"], "memory") for c in decision.plan.changes}
            intent["metadata"]["annotations"][OOM_RAISED_FOR] = raised_for(run.oom_floors, written)
        try:
            self.client.patch(_pod_ref(pod), intent)
            self.client.subresource("resize").patch(_pod_ref(pod), patch, patch_type=STRATEGIC)
        except NotFoundError:
            return
        except APIStatusError as exc:
            message = exc.message or str(exc)
            logger.error("in-place resize failed", extra={"error": message, "resources": patch["spec"]})
            self._blocked(
                logger, run, pod, message, f"in-place resize failed: {message}", restore={LAST_RESIZE: previous}
            )
            return
        namespace = objects.namespace(pod)
        RESIZE_APPLIED.inc(run.labels(namespace))
        for resource in decision.plan.limits_scaled:
            APPLY_LIMIT_SCALED.inc(run.labels(namespace, resource=resource))
        next_resize = format_time(run.now + datetime.timedelta(seconds=run.settings.interval))
        logger.info("in-place resize applied", extra={"resources": patch["spec"], "qos_current": decision.qos,
                                                       "next_resize": next_resize,
                                                       "oom_raise": decision.reason == OOM_RAISE})  # fmt: skip
        self.recorder.event(pod, "Normal", RESIZED, RESIZED_MESSAGE, kind=POD_KIND)

    def _blocked(
        self,
        logger: logging.LoggerAdapter[logging.Logger],
        run: _Run,
        pod: Mapping[str, Any],
        reason: str,
        event_message: str,
        *,
        restore: Mapping[str, str | None] | None = None,
    ) -> None:
        """A rejected patch or an Infeasible verdict: count it, warn on the pod, back off for the interval.

        `restore` puts back annotations the intent replaced before a rejected patch (None removes one)."""
        RESIZE_FAILED.inc(run.labels(objects.namespace(pod)))
        next_attempt = format_time(run.now + datetime.timedelta(seconds=run.settings.interval))
        logger.info("in-place resize blocked", extra={"blocked_reason": reason, "next_attempt": next_attempt})
        self.recorder.event(pod, "Warning", RESIZE_BLOCKED_EVENT, event_message, kind=POD_KIND)
        patch = blocked_patch(reason, run.now)
        patch["metadata"]["annotations"].update(restore or {})
        self.client.patch(_pod_ref(pod), patch)


def setup(
    manager: Manager,
    *,
    kill_switch: KillSwitchState,
    options: OperatorOptions,
    server_version: VersionReader | None = None,
) -> Controller:
    """Register the resize controller on `manager`.

    The wiring configures the pod cache (enrolled pods as `PodProjection`, the profile-ref index) and registers
    our kinds in the scheme. `server_version` replaces the `/version` read (tests of old API servers).
    """
    reconciler = ResourceAdjuster(manager, kill_switch=kill_switch, options=options, server_version=server_version)

    def every_profile(_: object) -> list[Request]:
        return [Request("", objects.name(profile)) for profile in manager.client.list(WorkloadProfile)]

    return (
        Builder(manager)
        .for_(WorkloadProfile, predicates=[profile_predicate()])
        # Resume at once when the kill switch turns off, not at the 15-minute requeue of a skipped profile.
        .watches_source(Channel(kill_switch.resumptions(), EnqueueRequestsFromMapFunc(every_profile)))
        .named(NAME)
        .complete(reconciler)
    )
