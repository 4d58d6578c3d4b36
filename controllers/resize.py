"""In-place resize (`resourceadjuster`): move running `resize`-mode pods toward their profile's recommendations.

Per WorkloadProfile (ballast-anchor.md §7, with architecture.md §5 items 4, 5, 10 and 20): once the profile has
ready containers and its policy is loaded, every cached pod of the profile in `resize` mode is checked in turn —
backoff after a block, the kubelet's verdict on the previous resize, the cooldown — then each cpu/memory field
whose recommendation drifts beyond its threshold moves one capped step toward it (snapping when close). The
step is sent as a **strategic-merge** patch of `pods/<name>/resize` naming only the changed containers and
fields, built from a live re-read of the pod.

Where we differ from the Go operator, deliberately:
- Readiness is per container (§5 item 5): while `meetsThreshold` is false, containers that are ready are resized
  on their own (the rule admission uses); `not_ready` means no container is ready.
- Guaranteed pods move request and limit together and stay Guaranteed; BestEffort pods, and Burstable changes
  that would flip the class, are `qos_pinned` (§5 item 10).
- A request never exceeds a limit: a limit the policy does not manage is raised keeping the container's
  limit:request ratio, and counted in `ballast_apply_limit_scaled_total` (§5 item 4).
- The kubelet's outcome is followed (§5 item 20): `PodResizeInProgress` → skip (`in_progress`), no resize on
  top; `PodResizePending`/`Deferred` → wait out the interval since the last resize (`deferred`), then retry;
  `PodResizePending`/`Infeasible` → blocked annotations and a `ResizeBlocked` event, as a rejected patch gets.
- On API servers older than in-place resize GA (1.35) nothing is patched: the profile gets the condition
  `InPlaceResize=False` (reason `Unsupported`), written by server-side apply as field manager `ballast-resize`.
- A capped step that rounds to the current value is `no_drift` instead of the same patch every interval.
- Dry-run (`options.dry_run.resize`, on whenever measure or apply dry-run is) writes nothing: no patch, no
  annotation, no event, no condition; it logs and counts `skipped{dry_run}`.

Skip reasons are the anchor's (`kill_switch`, `not_ready`, `no_policy` with policy and namespace ""; `blocked`,
`cooldown`, `no_drift`, `not_resizable`, `qos_pinned`, `dry_run`) plus `in_progress` and `deferred`.
"""

from __future__ import annotations

import datetime
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import orjson

from ballast.api.ballast.v1 import (
    Behaviors,
    ClusterResourcePolicy,
    PolicyRef,
    ResizeBehavior,
    ResourcePolicy,
    ResourcePolicySpec,
    Thresholds,
    WorkloadProfile,
    WorkloadProfileStatus,
)
from ballast.api.meta import Condition, find_status_condition
from ballast.internal.enrollment import (
    LAST_RESIZE,
    PROFILE_REF,
    PROFILE_REF_INDEX,
    RESIZE_BLOCKED,
    RESIZE_BLOCKED_AT,
    is_restartable_init,
    wants_resize,
)
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.internal.quantity import QuantityError, to_units
from ballast.internal.resize import (
    BEST_EFFORT,
    GUARANTEED,
    cap_change,
    coupled_move,
    exceeds_drift,
    pod_qos,
    resizable_in_place,
    resolve_max_change,
    resolve_threshold,
)
from ballast.internal.runtime import (
    APPLY,
    STRATEGIC,
    APIStatusError,
    Builder,
    Client,
    Context,
    Controller,
    GroupVersionKind,
    Manager,
    NotFoundError,
    Request,
    Result,
    objects,
)
from ballast.internal.runtime.log import Logger
from ballast.internal.runtime.predicate import Funcs
from ballast.internal.stats import fit_limit, parse_duration
from ballast.internal.stats.ready import ready_recommendations
from ballast.internal.telemetry import (
    APPLY_LIMIT_SCALED,
    RESIZE_APPLIED,
    RESIZE_FAILED,
    RESIZE_SKIPPED,
    profile_attributes,
)

NAME = "resourceadjuster"
FIELD_MANAGER = "ballast-resize"
EVENT_COMPONENT = "ballast"
POD = "v1/Pod"
POD_KIND = GroupVersionKind("", "v1", "Pod")

PROFILE_REQUEUE = 15 * 60.0
"""Requeue of the profile-level skips (kill switch, not ready, no policy, unsupported server): constant 15 m."""
DEFAULT_INTERVAL = 15 * 60.0
BLOCKED_MESSAGE_BYTES = 256

# Skip reasons of `ballast_resize_skipped_total`.
KILL_SWITCH = "kill_switch"
NOT_READY = "not_ready"
NO_POLICY = "no_policy"
BLOCKED = "blocked"
COOLDOWN = "cooldown"
NO_DRIFT = "no_drift"
NOT_RESIZABLE = "not_resizable"
QOS_PINNED = "qos_pinned"
DRY_RUN = "dry_run"
IN_PROGRESS = "in_progress"
"""The kubelet reports `PodResizeInProgress`: a resize is being actuated; none is stacked on top."""
DEFERRED = "deferred"
"""The kubelet reports `PodResizePending`/`Deferred` within the interval since the last resize."""

# The kubelet's verdict on a resize, as pod conditions (KEP-1287).
POD_RESIZE_PENDING = "PodResizePending"
POD_RESIZE_IN_PROGRESS = "PodResizeInProgress"
REASON_INFEASIBLE = "Infeasible"
REASON_DEFERRED = "Deferred"

IN_PLACE_RESIZE = "InPlaceResize"
"""Profile condition type written by this lane (False/Unsupported on API servers before 1.35)."""
UNSUPPORTED = "Unsupported"
IN_PLACE_RESIZE_GA = (1, 35)

RESIZED = "Resized"
RESIZE_BLOCKED_EVENT = "ResizeBlocked"
RESIZED_MESSAGE = "in-place resize applied by Ballast"

VersionReader = Callable[[], str]
"""Returns the API server's version string (`/version` gitVersion, e.g. `v1.37.2`)."""


# ------------------------------------------------------------------------------------------- small helpers


def _format_time(value: datetime.datetime) -> str:
    return value.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(text: str | None) -> datetime.datetime | None:
    """An RFC 3339 timestamp, or None when absent or unparseable (such an annotation is ignored)."""
    if not text:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _within(stamp: str | None, now: datetime.datetime, seconds: float) -> bool:
    """Whether the annotation time `stamp` parses and lies less than `seconds` before `now`."""
    parsed = _parse_time(stamp)
    return parsed is not None and (now - parsed).total_seconds() < seconds


def truncate_utf8(text: str, limit: int = BLOCKED_MESSAGE_BYTES) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, never inside a character."""
    return text.encode()[:limit].decode("utf-8", "ignore")


def _units(value: Any, resource: str) -> int | None:
    """A quantity in int units, or None when absent or not a quantity."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        return to_units(value if isinstance(value, str | int) else str(value), resource)
    except (QuantityError, TypeError, ValueError):
        return None


def _pod_ref(pod: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": objects.name(pod), "namespace": objects.namespace(pod)}}  # fmt: skip


# ---------------------------------------------------------------------------------------------- versions


def parse_server_version(text: str) -> tuple[int, int] | None:
    """(major, minor) from a version string such as `v1.34.2-eks-1` or `1.28+`; None when it has none."""
    match = re.match(r"^v?(\d+)\.(\d+)", text.strip())
    if match is None or int(match[1]) == 0:  # v0.0.0-master+… is an unstamped build: unknown, not old
        return None
    return int(match[1]), int(match[2])


def read_server_version(client: Client) -> str:
    """The API server's `/version` gitVersion (or `v<major>.<minor>` when gitVersion is missing)."""
    info = orjson.loads(client.transport.request("GET", "/version").data)
    git_version = str(info.get("gitVersion") or "")
    if parse_server_version(git_version) is not None:
        return git_version
    return f"v{info.get('major', '')}.{info.get('minor', '')}"


# ------------------------------------------------------------------------------------------------ policy


@dataclass(frozen=True)
class ResizeSettings:
    """The policy's resize behaviour, defaults applied: interval, step cap and drift thresholds."""

    interval: float = DEFAULT_INTERVAL
    max_change: Decimal = Decimal(50)
    resource_thresholds: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)
    resize_default: str | None = None
    default: str | None = None

    @classmethod
    def from_spec(cls, spec: ResourcePolicySpec) -> ResizeSettings:
        """Read a policy spec (its resolve-time defaults are applied here)."""
        behaviors = spec.with_defaults().behaviors or Behaviors()
        thresholds, resize = behaviors.thresholds or Thresholds(), behaviors.resize or ResizeBehavior()
        per_resource = (thresholds.resize.resource_thresholds if thresholds.resize else None) or {}
        return cls(
            interval=parse_interval(resize.interval),
            max_change=resolve_max_change(resize.max_change_per_cycle),
            resource_thresholds={k: {"request": v.request, "limit": v.limit} for k, v in per_resource.items()},
            resize_default=thresholds.resize.default if thresholds.resize else None,
            default=thresholds.default,
        )

    def threshold(self, resource: str, field_name: str) -> Decimal:
        return resolve_threshold(
            resource, field_name, resource_thresholds=self.resource_thresholds,
            resize_default=self.resize_default, default=self.default,
        )  # fmt: skip


def parse_interval(text: str | None) -> float:
    """`resize.interval` in seconds; 15 m when empty, invalid or ≤ 0."""
    try:
        nanoseconds = parse_duration(text or "")
    except (TypeError, ValueError):
        return DEFAULT_INTERVAL
    return nanoseconds / 1e9 if nanoseconds > 0 else DEFAULT_INTERVAL


# ---------------------------------------------------------------------------------------------- planning

Recommendations = Mapping[str, Mapping[str, tuple[str | None, str | None]]]
"""container name → resource → (recommended request, recommended limit)."""


@dataclass(frozen=True)
class ContainerChange:
    """The new values of one container: only the fields that change."""

    group: str
    """`containers` or `initContainers` (restartable-init sidecars)."""
    name: str
    requests: Mapping[str, str]
    limits: Mapping[str, str]


@dataclass(frozen=True)
class Plan:
    """What one resize would do to a pod."""

    changes: tuple[ContainerChange, ...] = ()
    not_resizable: frozenset[str] = frozenset()
    """Resources beyond their threshold that cannot be resized in place (left out of the patch)."""
    limits_scaled: tuple[str, ...] = ()
    """The resource of each limit raised to keep request ≤ limit (architecture.md §5 item 4)."""

    def patch(self) -> dict[str, Any]:
        """The strategic-merge patch of `pods/<name>/resize`: changed containers by name, changed fields only."""
        spec: dict[str, list[dict[str, Any]]] = {}
        for change in self.changes:
            resources: dict[str, dict[str, str]] = {}
            if change.requests:
                resources["requests"] = dict(change.requests)
            if change.limits:
                resources["limits"] = dict(change.limits)
            spec.setdefault(change.group, []).append({"name": change.name, "resources": resources})
        return {"spec": spec}

    def apply_to(self, pod: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of `pod` with the changes merged in (to compute the QoS class after the resize)."""
        after: dict[str, Any] = objects.thaw(pod)
        by_key = {(c.group, c.name): c for c in self.changes}
        for group in ("containers", "initContainers"):
            for container in (after.get("spec") or {}).get(group) or ():
                change = by_key.get((group, container.get("name")))
                if change is None:
                    continue
                resources = container.setdefault("resources", {})
                resources.setdefault("requests", {}).update(change.requests)
                resources.setdefault("limits", {}).update(change.limits)
        return after


@dataclass(frozen=True)
class _Values:
    request: str | None
    limit: str | None


def _resizable_containers(pod: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Regular containers, then restartable-init sidecars, each with the list it belongs to."""
    spec = pod.get("spec") or {}
    for container in spec.get("containers") or ():
        yield "containers", container
    for container in spec.get("initContainers") or ():
        if is_restartable_init(container):
            yield "initContainers", container


def _drifts(resource: str, field_name: str, current: str | None, recommended: str | None, s: ResizeSettings) -> bool:
    target = _units(recommended, resource)
    if target is None:
        return False
    return exceeds_drift(_units(current, resource) or 0, target, s.threshold(resource, field_name))


def _step(
    resource: str, field_name: str, current: str | None, recommended: str | None, s: ResizeSettings
) -> str | None:
    """This cycle's value of one field, or None when it stays (no drift, or a step that rounds to the current)."""
    if not _drifts(resource, field_name, current, recommended, s):
        return None
    assert recommended is not None
    current_units = _units(current, resource) or 0
    target = cap_change(current_units, recommended, s.max_change, s.threshold(resource, field_name), resource=resource)
    return None if to_units(target, resource) == current_units else target


def _within_limit(resource: str, current: _Values, new: _Values) -> tuple[_Values, bool]:
    """Keep request ≤ limit: a limit below the new request is fitted (ratio kept); returns (values, scaled)."""
    request, limit = new.request or current.request, new.limit or current.limit
    request_units, limit_units = _units(request, resource), _units(limit, resource)
    if request is None or request_units is None or limit_units is None or request_units <= limit_units:
        return new, False
    fitted = fit_limit(request, current.request, current.limit, resource)
    fitted_limit = fitted.limit if fitted.limit is not None else request
    if _units(fitted_limit, resource) == _units(current.limit, resource):
        return _Values(new.request, None), False  # the step below the request is dropped; the limit stays
    return _Values(new.request, fitted_limit), True


def _plan_values(
    resource: str, current: _Values, recommended: _Values, s: ResizeSettings, coupled: bool
) -> tuple[_Values, bool]:
    """New (request, limit) of one cpu/memory resource (None = unchanged) and whether a limit was scaled."""
    if coupled:
        base = current.limit or current.request
        if base is None:
            return _Values(None, None), False
        request_units = _units(recommended.request, resource)
        limit_units = _units(recommended.limit, resource)
        from_limit = limit_units is not None and (request_units is None or limit_units >= request_units)
        threshold = s.threshold(resource, "limit" if from_limit else "request")
        value = coupled_move(
            base, recommended.request if request_units is not None else None,
            recommended.limit if limit_units is not None else None, s.max_change, threshold, resource=resource,
        )  # fmt: skip
        if value is None or to_units(value, resource) == _units(base, resource):
            return _Values(None, None), False
        return _Values(value, value), False
    stepped = _Values(
        _step(resource, "request", current.request, recommended.request, s),
        _step(resource, "limit", current.limit, recommended.limit, s),
    )
    return _within_limit(resource, current, stepped)


def _changed(value: str | None, current: str | None, resource: str) -> bool:
    return value is not None and _units(value, resource) != _units(current, resource)


def plan_resize(pod: Mapping[str, Any], recommendations: Recommendations, settings: ResizeSettings) -> Plan:
    """The next resize of `pod` (a dict as the API returns it) toward `recommendations` under `settings`.

    Only cpu and memory are changed; other drifting resources are reported in `not_resizable`. Guaranteed pods
    move request and limit together (both to the same value).
    """
    coupled = pod_qos(pod) == GUARANTEED
    changes: list[ContainerChange] = []
    not_resizable: set[str] = set()
    scaled: list[str] = []
    for group, container in _resizable_containers(pod):
        wanted = recommendations.get(str(container.get("name")))
        if not wanted:
            continue
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        new_requests: dict[str, str] = {}
        new_limits: dict[str, str] = {}
        for resource, (rec_request, rec_limit) in sorted(wanted.items()):
            current = _Values(requests.get(resource), limits.get(resource))
            if not resizable_in_place(resource):
                if any(_drifts(resource, f, c, r, settings) for f, c, r in
                       (("request", current.request, rec_request), ("limit", current.limit, rec_limit))):  # fmt: skip
                    not_resizable.add(resource)
                continue
            new, limit_scaled = _plan_values(resource, current, _Values(rec_request, rec_limit), settings, coupled)
            scaled.extend([resource] if limit_scaled else [])
            if _changed(new.request, current.request, resource):
                new_requests[resource] = str(new.request)
            if _changed(new.limit, current.limit, resource):
                new_limits[resource] = str(new.limit)
        if new_requests or new_limits:
            changes.append(ContainerChange(group, str(container.get("name")), new_requests, new_limits))
    return Plan(tuple(changes), frozenset(not_resizable), tuple(scaled))


# ------------------------------------------------------------------------------------------------ pod view


def _condition(pod: Mapping[str, Any], condition_type: str) -> Mapping[str, Any] | None:
    """The pod condition of `condition_type` with status True, or None."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == condition_type and condition.get("status") == "True":
            return dict(condition)
    return None


def _pending(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """`PodResizePending`, unless the kubelet judged an older spec (observedGeneration < generation)."""
    condition = _condition(pod, POD_RESIZE_PENDING)
    if condition is None:
        return None
    observed = int(condition.get("observedGeneration") or 0)
    return None if observed and observed < objects.generation(pod) else condition


@dataclass(frozen=True)
class Decision:
    """What to do with one pod: skip (with a reason), mark it blocked (Infeasible), or resize."""

    action: str
    reason: str = ""
    message: str = ""
    plan: Plan = Plan()
    qos: str = ""

    @property
    def writes(self) -> bool:
        return self.action in (MARK_BLOCKED, RESIZE)


SKIP = "skip"
MARK_BLOCKED = "mark_blocked"
RESIZE = "resize"


def _gate(pod: Mapping[str, Any], settings: ResizeSettings, now: datetime.datetime) -> Decision | None:
    """Backoff, the kubelet's outcome, cooldown: a decision when one of them settles the pod, else None."""
    annotations = objects.annotations(pod)
    if _within(annotations.get(RESIZE_BLOCKED_AT), now, settings.interval):
        return Decision(SKIP, BLOCKED, "resize recently failed, backing off")
    if _condition(pod, POD_RESIZE_IN_PROGRESS) is not None:
        return Decision(SKIP, IN_PROGRESS, "the kubelet is actuating a resize; not stacking another")
    pending = _pending(pod)
    reason = pending.get("reason") if pending is not None else None
    if pending is not None and reason == REASON_INFEASIBLE and RESIZE_BLOCKED not in annotations:
        return Decision(MARK_BLOCKED, message=str(pending.get("message") or REASON_INFEASIBLE))
    if not _within(annotations.get(LAST_RESIZE), now, settings.interval):
        return None
    if reason == REASON_DEFERRED:
        return Decision(SKIP, DEFERRED, "the kubelet deferred the last resize; retrying after the interval")
    return Decision(SKIP, COOLDOWN, "resize cooldown active, skipping")


def decide(
    pod: Mapping[str, Any], recommendations: Recommendations, settings: ResizeSettings, now: datetime.datetime
) -> Decision:
    """The anchor's per-pod order (§7 6a–6e) with the kubelet's outcome (§5 item 20) read before the cooldown:
    an Infeasible verdict on the last resize is reported at once, not an interval later."""
    gated = _gate(pod, settings, now)
    if gated is not None:
        return gated
    plan = plan_resize(pod, recommendations, settings)
    if not plan.changes:
        reason = NOT_RESIZABLE if plan.not_resizable else NO_DRIFT
        return Decision(SKIP, reason, "nothing to resize in place", plan)
    before, after = pod_qos(pod), pod_qos(plan.apply_to(pod))
    if before == BEST_EFFORT or before != after:
        return Decision(SKIP, QOS_PINNED, f"resize would change the QoS class {before} → {after}", plan, before)
    return Decision(RESIZE, plan=plan, qos=before)


# ------------------------------------------------------------------------------------------------ profile


@dataclass(frozen=True)
class _Run:
    """One profile's reconcile: what every pod of it shares."""

    profile: str
    attributes: Mapping[str, str]
    policy: str
    settings: ResizeSettings
    recommendations: Recommendations
    now: datetime.datetime

    def labels(self, namespace: str, **extra: str) -> dict[str, str]:
        return {**self.attributes, "policy": self.policy, "namespace": namespace, **extra}


def _condition_differs(current: Condition | None, wanted: Mapping[str, Any] | None) -> bool:
    if current is None or wanted is None:
        return (current is None) != (wanted is None)
    return (current.status, current.reason, current.message) != (wanted["status"], wanted["reason"], wanted["message"])


def _meets_threshold(obj: Any) -> bool:
    status = obj.get("status") if isinstance(obj, Mapping) else None
    return bool((status or {}).get("meetsThreshold"))


def profile_predicate() -> Funcs:
    """Updates pass when the generation changed or `status.meetsThreshold` flipped; create/delete/generic pass."""
    return Funcs(
        update_func=lambda e: (
            objects.generation(e.object_old) != objects.generation(e.object_new)
            or _meets_threshold(e.object_old) != _meets_threshold(e.object_new)
        )
    )


def _still_ours(pod: Mapping[str, Any], profile: str) -> bool:
    """The live pod is still in resize mode, of this profile, and not terminating."""
    return (
        wants_resize(objects.labels(pod))
        and objects.annotations(pod).get(PROFILE_REF) == profile
        and not objects.deletion_timestamp(pod)
    )


def _pod_logger(ctx: Context, run: _Run, pod: Mapping[str, Any]) -> logging.LoggerAdapter[logging.Logger]:
    values = {"pod": objects.name(pod), "namespace": objects.namespace(pod), "profile": run.profile,
              "policy": run.policy}  # fmt: skip
    return ctx.logger.with_values(**values) if isinstance(ctx.logger, Logger) else ctx.logger


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
        recommendations = {
            name: {resource: (rec.request, rec.limit) for resource, rec in by_resource.items()}
            for name, by_resource in ready_recommendations(status).items()
        }
        if not recommendations:
            return self._profile_skip(ctx, attributes, NOT_READY)
        ref = status.policy_ref
        spec = self._policy_spec(ref) if ref is not None else None
        if ref is None or spec is None:
            return self._profile_skip(ctx, attributes, NO_POLICY)
        pods = self._resize_pods(request.name)
        if not self._in_place_available(ctx, profile, bool(pods)):
            return Result(requeue_after=PROFILE_REQUEUE)
        settings = ResizeSettings.from_spec(spec)
        run = _Run(request.name, attributes, ref.name, settings, recommendations, self.clock.now())
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

    def _policy_spec(self, ref: PolicyRef) -> ResourcePolicySpec | None:
        """The spec of the policy the profile was resolved under, from the cache; None when it is gone."""
        try:
            if ref.kind == "ClusterResourcePolicy":
                cluster_policy: ClusterResourcePolicy = self.client.get(ClusterResourcePolicy, ref.name)
                return cluster_policy.spec
            if ref.kind == "ResourcePolicy":
                policy: ResourcePolicy = self.client.get(ResourcePolicy, ref.name, ref.namespace or "")
                return policy.spec
        except NotFoundError:
            return None
        raise ValueError(f"unknown policy kind {ref.kind!r} in policyRef")

    def _resize_pods(self, profile: str) -> list[Any]:
        """Cached pods of the profile in `resize` mode, not terminating, in a stable order."""
        pods = self.cache.list(POD, index=(PROFILE_REF_INDEX, profile))
        kept = [p for p in pods if wants_resize(objects.labels(p)) and not objects.deletion_timestamp(p)]
        return sorted(kept, key=objects.object_key)

    # ------------------------------------------------------------------------------ server support

    def server_version(self) -> tuple[str, bool]:
        """(version, in-place resize available), read once; a failed read raises and is tried again later."""
        with self._version_lock:
            if self._version is None:
                text = self._read_version()
                parsed = parse_server_version(text)
                self._version = (text, parsed is None or parsed >= IN_PLACE_RESIZE_GA)
            return self._version

    def _in_place_available(self, ctx: Context, profile: WorkloadProfile, has_pods: bool) -> bool:
        """Whether this server resizes in place; keeps the profile's `InPlaceResize` condition in line with it
        (present only while the server is too old and the profile has pods in resize mode)."""
        version, supported = self.server_version()
        current = find_status_condition(profile.status.conditions if profile.status else None, IN_PLACE_RESIZE)
        wanted = None if supported or not has_pods else self._unsupported(version, current)
        if not _condition_differs(current, wanted):
            return supported
        if self.dry_run:
            ctx.logger.info("dry-run: would update the InPlaceResize condition", extra={"dry_run": True})
            return supported
        ctx.logger.info("updating the InPlaceResize condition",
                        extra={"server_version": version, "unsupported": wanted is not None})  # fmt: skip
        body = {"apiVersion": WorkloadProfile.API_VERSION, "kind": "WorkloadProfile",
                "metadata": {"name": profile.metadata.name},
                "status": {"conditions": [wanted]} if wanted else {}}  # fmt: skip
        self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)
        return supported

    def _unsupported(self, version: str, current: Condition | None) -> dict[str, Any]:
        """`InPlaceResize=False` naming the server version; an unchanged status keeps its transition time."""
        since = current.last_transition_time if current is not None and current.status == "False" else None
        major, minor = IN_PLACE_RESIZE_GA
        message = (f"in-place pod resize needs Kubernetes {major}.{minor} or later; the API server is {version}: "
                   "pods in resize mode are not resized")  # fmt: skip
        return {"type": IN_PLACE_RESIZE, "status": "False", "reason": UNSUPPORTED, "message": message,
                "lastTransitionTime": _format_time(since or self.clock.now())}  # fmt: skip

    # ---------------------------------------------------------------------------------------------- pods

    def _reconcile_pod(self, ctx: Context, run: _Run, cached: Any) -> None:
        """Decide on the cached pod; a decision that writes is made again on a live read, and that one acts."""
        pod: Mapping[str, Any] = objects.thaw(cached)
        decision = decide(pod, run.recommendations, run.settings, run.now)
        if decision.writes and not self.dry_run:
            try:
                pod = self.api_reader.get(POD, objects.name(cached), objects.namespace(cached))
            except NotFoundError:
                return
            if not _still_ours(pod, run.profile):
                return
            decision = decide(pod, run.recommendations, run.settings, run.now)
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
            self._blocked(logger, run, pod, decision.message, f"in-place resize infeasible: {decision.message}")
        else:
            self._resize(logger, run, pod, decision)

    def _resize(
        self, logger: logging.LoggerAdapter[logging.Logger], run: _Run, pod: Mapping[str, Any], decision: Decision
    ) -> None:
        patch = decision.plan.patch()
        try:
            self.client.subresource("resize").patch(_pod_ref(pod), patch, patch_type=STRATEGIC)
        except NotFoundError:
            return
        except APIStatusError as exc:
            message = exc.message or str(exc)
            logger.error("in-place resize failed", extra={"error": message, "resources": patch["spec"]})
            self._blocked(logger, run, pod, message, f"in-place resize failed: {message}")
            return
        namespace = objects.namespace(pod)
        RESIZE_APPLIED.inc(run.labels(namespace))
        for resource in decision.plan.limits_scaled:
            APPLY_LIMIT_SCALED.inc(run.labels(namespace, resource=resource))
        next_resize = _format_time(run.now + datetime.timedelta(seconds=run.settings.interval))
        logger.info("in-place resize applied", extra={"resources": patch["spec"], "qos_current": decision.qos,
                                                       "next_resize": next_resize})  # fmt: skip
        self.recorder.event(pod, "Normal", RESIZED, RESIZED_MESSAGE, kind=POD_KIND)
        annotations = {LAST_RESIZE: _format_time(run.now), RESIZE_BLOCKED: None, RESIZE_BLOCKED_AT: None}
        self.client.patch(_pod_ref(pod), {"metadata": {"annotations": annotations}})

    def _blocked(
        self,
        logger: logging.LoggerAdapter[logging.Logger],
        run: _Run,
        pod: Mapping[str, Any],
        reason: str,
        event_message: str,
    ) -> None:
        """A rejected patch or an Infeasible verdict: count it, warn on the pod, back off for the interval."""
        RESIZE_FAILED.inc(run.labels(objects.namespace(pod)))
        next_attempt = _format_time(run.now + datetime.timedelta(seconds=run.settings.interval))
        logger.info("in-place resize blocked", extra={"blocked_reason": reason, "next_attempt": next_attempt})
        self.recorder.event(pod, "Warning", RESIZE_BLOCKED_EVENT, event_message, kind=POD_KIND)
        annotations = {RESIZE_BLOCKED: truncate_utf8(reason), RESIZE_BLOCKED_AT: _format_time(run.now)}
        self.client.patch(_pod_ref(pod), {"metadata": {"annotations": annotations}})


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
    return Builder(manager).for_(WorkloadProfile, predicates=[profile_predicate()]).named(NAME).complete(reconciler)
