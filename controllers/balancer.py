"""Balancer (`balancer`, leader only): one replica count spread over several scalable targets by priority or
proportion, with fallback for pods that do not start (the kubernetes/autoscaler Balancer's controller).

Every run goes through upstream's five phases, in order; the first failure ends the run and is reported as
`"<phase>: <error>"` in the `Balancing` condition (status False, reason the phase) and in a Warning event
`UnableToBalance` from component `balancer-controller`:

1. `ScaleSubresourcePolling` — each target's `scale` subresource, read through the REST mapper from its
   `scaleTargetRef` (any kind with a scale subresource: Deployments, StatefulSets, ReplicaSets, custom resources).
2. `PodListing` — each target's pods by its `scale.status.selector` in the Balancer's namespace, from a pod
   informer scoped to that namespace and selector (a small projection; one per distinct selector, shared by the
   Balancers that use it, whose pod events requeue them). There is no cluster-wide pod informer: memory follows
   the Balancers' pods, not the cluster's.
3. `PodLabelsChecking` — `spec.selector` must convert (`incorrect selector`) and match every target pod
   (`incorrect labeling for pods in target <name>`).
4. `ApplyingBalancerPolicy` — `ballast.internal.balancer.place` over the pod summaries.
5. `ReplicaCountSetting` — each target's `scale.spec.replicas` set where it differs; the first failure stops.

Status is written by server-side apply (field manager `ballast-balancer`) only when it changed: `replicas`
(pods observed, Σ Running + Pending, when phases 1–3 passed), `selector` (`spec.selector` in query-parameter form,
for an HPA scaling the Balancer), `targets[]` (desired, placed, running, notStarted per target) and the
conditions `Balancing` (`Completed`, "Balancer running OK"), `ReplicasMissing` / `ReplicasOverflow` (what
upstream computes and drops), `TargetConflict` and `Valid`. A failed status write is a Warning event
`StatusNotUpdated`. Each Balancer is run again every `reprocess_period` seconds (upstream's 15 s).

Conflicts: a target that an HPA also scales (its `scaleTargetRef` names the target's object) or that another
Balancer (or this one, twice) also claims is not written — two controllers writing one `replicas` field fight —
and `TargetConflict=True` names the other owner, with a Warning event `TargetConflict` when that changes.

The placement is pure code in `ballast.internal.balancer`; this module reads, calls it, and writes.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from ballast.api.balancer.v1alpha1 import (
    APPLYING_BALANCER_POLICY,
    BALANCING,
    COMPLETED,
    POD_LABELS_CHECKING,
    POD_LISTING,
    PROPORTIONAL,
    REPLICA_COUNT_SETTING,
    REPLICAS_MISSING,
    REPLICAS_OVERFLOW,
    SCALE_SUBRESOURCE_POLLING,
    TARGET_CONFLICT,
    UNKNOWN_PROPORTION_TARGETS,
    VALID,
    Balancer,
    BalancerTarget,
)
from ballast.internal.balancer import (
    Placement,
    PlacementInputError,
    PodState,
    PodSummary,
    place,
    request_from_spec,
    summarize_targets,
)
from ballast.internal.balancer.metrics import forget_balancer, record_balancer
from ballast.runtime import (
    APPLY,
    APIStatusError,
    Builder,
    CacheScope,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    GroupVersionKind,
    Manager,
    NotFoundError,
    Projection,
    Request,
    Result,
    objects,
)
from ballast.runtime import labels as label_selectors
from ballast.runtime.conditions import FALSE, TRUE, condition, find_status_condition
from ballast.runtime.handler import RequestQueue
from ballast.runtime.informer import Registration, SharedIndexInformer
from ballast.runtime.restmapper import NoKindMatchError

NAME = "balancer"
FIELD_MANAGER = "ballast-balancer"
EVENT_COMPONENT = "balancer-controller"
DEFAULT_REPROCESS_PERIOD = 15.0
"""Seconds between two runs of one Balancer (upstream's `--reprocess-period-sec`)."""
POD = "v1/Pod"
HPA = "autoscaling/v2/HorizontalPodAutoscaler"
BALANCER_KIND = GroupVersionKind("balancer.x-k8s.io", "v1alpha1", "Balancer")

UNABLE_TO_BALANCE = "UnableToBalance"
STATUS_NOT_UPDATED = "StatusNotUpdated"
TARGET_CONFLICT_EVENT = "TargetConflict"
RUNNING_OK = "Balancer running OK"
NO_CONFLICT = "NoConflict"
CONFLICT = "Conflict"
NO_PROBLEM = "NoProblem"
VALID_REASON = "Valid"


class _PodStatus(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    phase: str = ""


class BalancerPod(Projection, frozen=True):
    """What the Balancer reads of a pod: metadata (labels, creationTimestamp) and the phase."""

    status: _PodStatus = _PodStatus()


class BalancerError(Exception):
    """A failed phase: printed `"<phase>: <error>"`, its phase the `Balancing` reason."""

    def __init__(self, phase: str, error: str) -> None:
        super().__init__(f"{phase}: {error}")
        self.phase = phase
        self.error = error


# ----------------------------------------------------------------------------------------------- pod informers


@dataclass(frozen=True, slots=True)
class _PodKey:
    namespace: str
    selector: str  # canonical (CacheScope's form); "" selects every pod of the namespace


@dataclass
class _Watched:
    informer: SharedIndexInformer
    registration: Registration | None
    balancers: frozenset[Request] = frozenset()  # replaced, never changed: pod events read it without a lock


class _ChangedPod:
    """Pod events that matter to a summary: adds, deletes, and updates of the phase or the labels."""

    def __init__(self, requests: Callable[[], Iterable[Request]], queue: RequestQueue) -> None:
        self._requests = requests
        self._queue = queue

    def _enqueue(self) -> None:
        for request in self._requests():
            self._queue.add(request)

    def on_add(self, obj: Any, is_initial_list: bool) -> None:
        if not is_initial_list:
            self._enqueue()

    def on_update(self, old: Any, new: Any) -> None:
        if _phase(old) != _phase(new) or objects.labels(old) != objects.labels(new):
            self._enqueue()

    def on_delete(self, obj: Any) -> None:
        self._enqueue()


def _phase(pod: Any) -> str:
    status = getattr(pod, "status", None)
    return str(getattr(status, "phase", "") or "")


class PodInformers:
    """The label-scoped pod informers of the Balancers (a controller source): one per (namespace, selector),
    shared, created on first use and removed from the cache (stopped, its pods released) once no Balancer uses
    it; each Balancer's set of selectors is kept so that pod events requeue exactly the Balancers that use them.

    The pod-event path takes no lock (it reads a frozenset that is replaced under the lock), so an informer's
    dispatch never waits for a reconcile.
    """

    def __init__(self, manager: Manager) -> None:
        self._cache = manager.cache
        self._lock = threading.Lock()
        self._queue: RequestQueue | None = None
        self._watched: dict[_PodKey, _Watched] = {}
        self._by_balancer: dict[Request, set[_PodKey]] = {}

    # Source
    def start(self, queue: RequestQueue) -> None:
        with self._lock:
            self._queue = queue
            for key, watched in self._watched.items():
                if watched.registration is None:
                    watched.registration = self._register(key, watched.informer)

    def wait_for_sync(self, timeout: float | None) -> bool:
        return True

    def stop(self) -> None:
        with self._lock:
            registrations = [w.registration for w in self._watched.values() if w.registration is not None]
            for watched in self._watched.values():
                watched.registration = None
            self._queue = None
        for registration in registrations:
            registration.remove()

    def _register(self, key: _PodKey, informer: SharedIndexInformer) -> Registration | None:
        if self._queue is None:
            return None
        return informer.add_event_handler(_ChangedPod(lambda: self.balancers(key), self._queue))

    @staticmethod
    def scope(namespace: str, selector: str) -> CacheScope:
        return CacheScope(namespace=namespace, label_selector=selector or None, projection=BalancerPod)

    def balancers(self, key: _PodKey) -> list[Request]:
        """The Balancers using `key` (no lock: see the class docstring)."""
        watched = self._watched.get(key)
        return sorted(watched.balancers) if watched else []

    def use(self, balancer: Request, selectors: Iterable[str]) -> dict[str, SharedIndexInformer]:
        """The informers of `selectors` in the Balancer's namespace, by selector as given; the Balancer now uses
        exactly these (informers of selectors it used before and no other Balancer uses are stopped)."""
        found: dict[str, SharedIndexInformer] = {}
        keys: set[_PodKey] = set()
        with self._lock:
            for selector in selectors:
                scope = self.scope(balancer.namespace, selector)
                key = _PodKey(balancer.namespace, scope.label_selector or "")
                keys.add(key)
                watched = self._watched.get(key)
                if watched is None:
                    informer = self._cache.get_informer(POD, scope)
                    watched = self._watched[key] = _Watched(informer, None)
                    watched.registration = self._register(key, informer)
                watched.balancers = watched.balancers | {balancer}
                found[selector] = watched.informer
            self._stop_unused(self._release(balancer, keep=keys))
        return found

    def forget(self, balancer: Request) -> None:
        """The Balancer is gone: it uses no selector."""
        with self._lock:
            self._stop_unused(self._release(balancer, keep=set()))

    def _release(self, balancer: Request, keep: set[_PodKey]) -> list[_PodKey]:
        """Drop the Balancer from the keys it no longer uses; returns the keys nobody uses (dropped too)."""
        previous = self._by_balancer.pop(balancer, set())
        if keep:
            self._by_balancer[balancer] = keep
        unused = []
        for key in previous - keep:
            watched = self._watched.get(key)
            if watched is None:
                continue
            watched.balancers = watched.balancers - {balancer}
            if not watched.balancers:
                del self._watched[key]
                unused.append(key)
        return unused

    def _stop_unused(self, keys: list[_PodKey]) -> None:
        # Under the lock: a reconcile must not get an informer from the cache that is about to be stopped. The
        # pod-event path takes no lock, so joining the informer's threads here cannot deadlock.
        for key in keys:
            self._cache.remove_informer(POD, self.scope(key.namespace, key.selector))

    def selectors(self) -> dict[tuple[str, str], list[Request]]:
        """(namespace, selector) → the Balancers using it (for tests and the CLI)."""
        with self._lock:
            return {(k.namespace, k.selector): sorted(w.balancers) for k, w in self._watched.items()}


# ---------------------------------------------------------------------------------------------------- helpers


def _ref_gvk(target: BalancerTarget) -> GroupVersionKind:
    ref = target.scale_target_ref
    try:
        return GroupVersionKind.from_api_version(ref.api_version or "", ref.kind)
    except ValueError as exc:
        raise BalancerError(
            SCALE_SUBRESOURCE_POLLING, f"invalid API version in scale target reference: {exc}"
        ) from None


def _same_object(gvk: GroupVersionKind, name: str, ref: Mapping[str, Any] | None) -> bool:
    """Whether a `scaleTargetRef` (wire form) names the object `gvk`/`name` (the group compared, not the version)."""
    if not ref or ref.get("kind") != gvk.kind or ref.get("name") != name:
        return False
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    return group == gvk.group


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """A `metav1.LabelSelector` in query-parameter form, requirements sorted by key (apimachinery's String());
    raises `labels.SelectorError`."""
    parsed = label_selectors.from_label_selector(selector or {})
    return ",".join(str(r) for r in sorted(parsed.requirements, key=lambda r: (r.key, r.operator)))


def _created(pod: BalancerPod) -> datetime.datetime | None:
    stamp = pod.metadata.creation_timestamp
    if not stamp:
        return None
    try:
        return datetime.datetime.fromisoformat(stamp)
    except ValueError:
        return None


@dataclass
class _TargetRun:
    """What one run learnt of one target."""

    target: BalancerTarget
    gvk: GroupVersionKind | None = None
    scale: Mapping[str, Any] | None = None
    pods: list[BalancerPod] | None = None
    summary: PodSummary | None = None
    desired: int | None = None
    conflict: str | None = None  # the other owner, when the target is not ours alone

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def replicas(self) -> int | None:
        if self.scale is None:
            return None
        return int((self.scale.get("spec") or {}).get("replicas") or 0)

    def describe(self, namespace: str) -> str:
        ref = self.target.scale_target_ref
        return f"{ref.kind}/{namespace}/{ref.name}"


@dataclass
class _Run:
    balancer: Balancer
    targets: list[_TargetRun]
    error: BalancerError | None = None
    placement: Placement | None = None
    observed: int | None = None


# ------------------------------------------------------------------------------------------------- reconciler


class BalancerReconciler:
    """The reconciler of the Balancer controller; see the module docstring."""

    def __init__(self, manager: Manager, *, reprocess_period: float = DEFAULT_REPROCESS_PERIOD) -> None:
        self.client = manager.client
        self.api = manager.api_reader
        self.clock = manager.clock
        self.recorder = manager.get_event_recorder(EVENT_COMPONENT)
        self.pods = PodInformers(manager)
        self.reprocess_period = reprocess_period
        self.sync_timeout = manager.cache.sync_timeout

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            balancer: Balancer = self.client.get(Balancer, request.name, request.namespace)
        except NotFoundError:
            self.pods.forget(request)
            forget_balancer(request.namespace, request.name)
            return None
        run = _Run(balancer, [_TargetRun(target) for target in balancer.spec.targets])
        self._find_conflicts(run)
        try:
            self._poll_scales(run)
            self._list_pods(request, run)
            self._check_labels(run)
            self._apply_policy(run)
            self._set_replicas(run)
        except BalancerError as error:
            run.error = error
            ctx.logger.info("unable to balance", extra={"phase": error.phase, "error": error.error})
            self.recorder.event(balancer, "Warning", UNABLE_TO_BALANCE, str(error), kind=BALANCER_KIND)
        self._record_metrics(run)
        try:
            self._write_status(ctx, run)
        except NotFoundError:
            return None  # deleted meanwhile
        except APIStatusError as exc:
            ctx.logger.error("status not updated", extra={"error": exc.message or str(exc)})
            self.recorder.event(
                balancer, "Warning", STATUS_NOT_UPDATED, f"status not updated: {exc.message or exc}", kind=BALANCER_KIND
            )
        return Result(requeue_after=self.reprocess_period)

    # ------------------------------------------------------------------------------------------ conflicts

    def _find_conflicts(self, run: _Run) -> None:
        """Mark targets also scaled by an HPA, by another Balancer, or twice by this one."""
        balancer = run.balancer
        namespace = balancer.metadata.namespace or ""
        name = balancer.metadata.name or ""
        hpas: list[Any] = sorted(self.client.list(HPA, namespace), key=objects.name)
        others: list[Balancer] = sorted(
            (b for b in self.client.list(Balancer, namespace) if b.metadata.name != name),
            key=lambda b: b.metadata.name or "",
        )
        for target in run.targets:
            try:
                gvk = _ref_gvk(target.target)
            except BalancerError:
                continue  # phase 1 reports it
            ref_name = target.target.scale_target_ref.name
            owners = [f"HorizontalPodAutoscaler {objects.name(hpa)}" for hpa in hpas
                      if _same_object(gvk, ref_name, (hpa.get("spec") or {}).get("scaleTargetRef"))]  # fmt: skip
            owners += [f"Balancer {other.metadata.name} (target {t.name})" for other in others
                       for t in other.spec.targets if _claims(t, gvk, ref_name)]  # fmt: skip
            owners += [f"target {t.target.name} of this Balancer" for t in run.targets
                       if t is not target and _claims(t.target, gvk, ref_name)]  # fmt: skip
            if owners:
                target.conflict = ", ".join(owners)

    # ----------------------------------------------------------------------------------------- phase 1

    def _poll_scales(self, run: _Run) -> None:
        namespace = run.balancer.metadata.namespace or ""
        scales = self.api.subresource("scale")
        for target in run.targets:
            gvk = _ref_gvk(target.target)
            try:
                self.api.mapper.mapping(gvk)
            except NoKindMatchError as exc:
                raise BalancerError(
                    SCALE_SUBRESOURCE_POLLING, f"unable to determine resource for scale target reference: {exc}"
                ) from None
            try:
                target.scale = scales.get(gvk, name=target.target.scale_target_ref.name, namespace=namespace)
            except APIStatusError as exc:
                raise BalancerError(
                    SCALE_SUBRESOURCE_POLLING,
                    f"failed to query scale subresource for {target.describe(namespace)}: {exc.message or exc}",
                ) from None
            target.gvk = gvk

    # ----------------------------------------------------------------------------------------- phase 2

    def _list_pods(self, request: Request, run: _Run) -> None:
        selectors: dict[str, str] = {}
        for target in run.targets:
            text = str(((target.scale or {}).get("status") or {}).get("selector") or "")
            try:
                label_selectors.parse(text)
            except label_selectors.SelectorError as exc:
                self.pods.use(request, selectors.values())
                raise BalancerError(POD_LISTING, f"invalid selector of target {target.name}: {exc}") from None
            selectors[target.name] = text
        informers = self.pods.use(request, selectors.values())
        for target in run.targets:
            text = selectors[target.name]
            informer = informers[text]
            if not informer.wait_for_sync(self.sync_timeout):
                raise BalancerError(
                    POD_LISTING, f"pods of target {target.name} not listed: informer {informer.name} did not sync"
                )
            wanted = label_selectors.parse(text)
            target.pods = sorted(
                (pod for pod in informer.store.values() if wanted.matches(pod.metadata.labels)),
                key=lambda pod: pod.metadata.name,
            )

    # ----------------------------------------------------------------------------------------- phase 3

    def _check_labels(self, run: _Run) -> None:
        try:
            selector = label_selectors.from_label_selector(run.balancer.spec.selector.model_dump(by_alias=True))
        except label_selectors.SelectorError:
            raise BalancerError(POD_LABELS_CHECKING, "incorrect selector") from None
        for target in run.targets:
            if any(not selector.matches(pod.metadata.labels) for pod in target.pods or ()):
                raise BalancerError(POD_LABELS_CHECKING, f"incorrect labeling for pods in target {target.name}")

    # ----------------------------------------------------------------------------------------- phase 4

    def _apply_policy(self, run: _Run) -> None:
        """Summaries first (so `status.replicas` is known even when the policy is refused, as upstream), then the
        placement."""
        fallback = run.balancer.spec.policy.fallback
        timeout = None if fallback is None else fallback.startup_timeout_seconds
        pods = {t.name: [PodState(p.status.phase or None, _created(p)) for p in t.pods or ()] for t in run.targets}
        try:
            summaries = summarize_targets(pods, self.clock.now(), timeout)
        except PlacementInputError as exc:
            raise BalancerError(APPLYING_BALANCER_POLICY, str(exc)) from None
        for target in run.targets:
            target.summary = summaries.get(target.name, PodSummary())
        run.observed = sum(s.total for s in summaries.values())
        try:
            request = request_from_spec(run.balancer.spec)
        except PlacementInputError as exc:
            raise BalancerError(APPLYING_BALANCER_POLICY, exc.message) from None
        try:
            placement = place(request.replicas, request.targets, request.policy, summaries)
        except PlacementInputError as exc:
            raise BalancerError(APPLYING_BALANCER_POLICY, str(exc)) from None
        for target in run.targets:
            if target.name not in placement.placement:
                raise BalancerError(APPLYING_BALANCER_POLICY, f"placement for {target.name} not found")
            target.desired = placement.placement[target.name]
        run.placement = placement

    # ----------------------------------------------------------------------------------------- phase 5

    def _set_replicas(self, run: _Run) -> None:
        namespace = run.balancer.metadata.namespace or ""
        scales = self.api.subresource("scale")
        for target in run.targets:
            if target.conflict is not None or target.desired is None or target.desired == target.replicas:
                continue
            assert target.gvk is not None
            try:
                target.scale = scales.patch(
                    target.gvk, {"spec": {"replicas": target.desired}},
                    name=target.target.scale_target_ref.name, namespace=namespace,
                )  # fmt: skip
            except APIStatusError as exc:
                raise BalancerError(
                    REPLICA_COUNT_SETTING,
                    f"failed to update scale subresource for {target.describe(namespace)}: {exc.message or exc}",
                ) from None

    # ------------------------------------------------------------------------------------------- output

    def _record_metrics(self, run: _Run) -> None:
        namespace, name = run.balancer.metadata.namespace or "", run.balancer.metadata.name or ""
        targets = {
            t.name: {
                "desired": t.desired, "placed": t.replicas,
                "running": t.summary.running if t.summary else None,
                "not_started": t.summary.not_started if t.summary else None,
            }
            for t in run.targets
        }  # fmt: skip
        problems = None if run.placement is None else {
            "missing": run.placement.missing, "overflow": run.placement.overflow
        }  # fmt: skip
        record_balancer(namespace, name, targets, problems)

    def _write_status(self, ctx: Context, run: _Run) -> None:
        balancer = run.balancer
        current = balancer.status
        wire_status: dict[str, Any] = self.client.scheme.to_wire(current) if current is not None else {}
        previous = (current.conditions if current else None) or []
        conditions = _conditions(run, previous, wire_status, self.clock.now())
        status: dict[str, Any] = {"conditions": conditions, "targets": _targets_status(run, wire_status)}
        observed = run.observed if run.observed is not None else wire_status.get("replicas")
        if observed is not None:
            status["replicas"] = observed
        try:
            status["selector"] = selector_string(balancer.spec.selector.model_dump(by_alias=True))
        except label_selectors.SelectorError:
            if wire_status.get("selector") is not None:
                status["selector"] = wire_status["selector"]
        conflict = next(c for c in conditions if c["type"] == TARGET_CONFLICT)
        before = find_status_condition(previous, TARGET_CONFLICT)
        if conflict["status"] == TRUE and (before is None or before.message != conflict["message"]):
            self.recorder.event(balancer, "Warning", TARGET_CONFLICT_EVENT, conflict["message"], kind=BALANCER_KIND)
        if not _status_differs(wire_status, status):
            return
        body = {
            "apiVersion": BALANCER_KIND.api_version, "kind": BALANCER_KIND.kind,
            "metadata": {"name": balancer.metadata.name, "namespace": balancer.metadata.namespace},
            "status": status,
        }  # fmt: skip
        ctx.logger.debug("writing status", extra={"balancing": conditions[0]["status"]})
        self.api.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)


_MISSING_TEXT = "replicas added on top of spec.replicas to satisfy the targets' minReplicas"
_OVERFLOW_TEXT = "replicas that fit in no target (every target that may take them is at maxReplicas)"


def _conditions(
    run: _Run, previous: Sequence[Any], wire_status: Mapping[str, Any], now: datetime.datetime
) -> list[dict[str, Any]]:
    """The five conditions of this run; ReplicasMissing/Overflow kept as they were when nothing was placed."""
    generation = run.balancer.metadata.generation or 0

    def build(type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
        return condition(type_, status, reason, message, now=now, observed_generation=generation,
                         previous=find_status_condition(previous, type_))  # fmt: skip

    conditions: list[dict[str, Any]] = []
    if run.error is None:
        conditions.append(build(BALANCING, TRUE, COMPLETED, RUNNING_OK))
    else:
        conditions.append(build(BALANCING, FALSE, run.error.phase, str(run.error)))
    placement = run.placement
    for type_, count, what in (
        (REPLICAS_MISSING, placement.missing if placement else None, _MISSING_TEXT),
        (REPLICAS_OVERFLOW, placement.overflow if placement else None, _OVERFLOW_TEXT),
    ):
        if count is None:
            old = find_status_condition(wire_status.get("conditions") or [], type_)
            conditions.extend([dict(old)] if old else [])
        elif count:
            conditions.append(build(type_, TRUE, type_, f"{count} {what}"))
        else:
            conditions.append(build(type_, FALSE, NO_PROBLEM, f"no {what}"))
    conflicts = [t for t in run.targets if t.conflict is not None]
    if conflicts:
        message = "; ".join(f"target {t.name} is not scaled, also scaled by {t.conflict}" for t in conflicts)
        conditions.append(build(TARGET_CONFLICT, TRUE, CONFLICT, message))
    else:
        conditions.append(build(TARGET_CONFLICT, FALSE, NO_CONFLICT, "every target is scaled by this Balancer only"))
    conditions.append(build(VALID, TRUE, *_validity(run.balancer)))
    return conditions


def _targets_status(run: _Run, wire_status: Mapping[str, Any]) -> list[dict[str, Any]]:
    """status.targets[]: what this run learnt, and what the last one did where this one did not get that far."""
    previous = {t.get("name"): t for t in wire_status.get("targets") or []}
    targets = []
    for target in run.targets:
        entry: dict[str, Any] = {"name": target.name}
        known = {
            "desired": target.desired, "placed": target.replicas,
            "running": target.summary.running if target.summary else None,
            "notStarted": target.summary.not_started if target.summary else None,
        }  # fmt: skip
        old = previous.get(target.name) or {}
        for key, value in known.items():
            chosen = value if value is not None else old.get(key)
            if chosen is not None:
                entry[key] = chosen
        targets.append(entry)
    return targets


def _claims(target: BalancerTarget, gvk: GroupVersionKind, name: str) -> bool:
    ref = target.scale_target_ref
    return _same_object(gvk, name, {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name})


def _validity(balancer: Balancer) -> tuple[str, str]:
    policy = balancer.spec.policy
    names = {t.name for t in balancer.spec.targets}
    if policy.policy_name == PROPORTIONAL and policy.proportions is not None:
        unknown = sorted(set(policy.proportions.target_proportions) - names)
        if unknown:
            return UNKNOWN_PROPORTION_TARGETS, (
                f"targetProportions names no target {', '.join(repr(n) for n in unknown)}; ignored, as upstream does"
            )
    return VALID_REASON, "the spec is valid"


_CONDITION_FIELDS = ("type", "status", "reason", "message", "observedGeneration")


def _status_differs(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether `wanted` says anything `current` does not (conditions compared without their times, which
    `condition` keeps unless the status flips)."""

    def shape(status: Mapping[str, Any]) -> tuple[Any, ...]:
        conditions = sorted(
            (tuple(c.get(k) for k in _CONDITION_FIELDS) for c in status.get("conditions") or []), key=str
        )
        targets = sorted((sorted(t.items()) for t in status.get("targets") or []), key=str)
        return status.get("replicas"), status.get("selector"), conditions, targets

    return shape(current) != shape(wanted)


# ------------------------------------------------------------------------------------------------------ setup


def _targets_of(balancer: Balancer) -> list[tuple[str, str, str]]:
    """(group, kind, name) of each target's object."""
    return [(
        (t.scale_target_ref.api_version or "").rpartition("/")[0], t.scale_target_ref.kind, t.scale_target_ref.name,
    ) for t in balancer.spec.targets]  # fmt: skip


def setup(manager: Manager, *, reprocess_period: float = DEFAULT_REPROCESS_PERIOD) -> Controller:
    """Register the Balancer controller on `manager` (leader only). `reprocess_period` is the wiring's
    `--balancer-reprocess-period` in seconds. The Balancer kind must be in the manager's scheme; HPAs
    (autoscaling/v2) are read through the cache, the targets' scale subresources and status writes go to the
    API server."""
    reconciler = BalancerReconciler(manager, reprocess_period=reprocess_period)

    def sharing_a_target(obj: Any) -> list[Request]:
        """Balancers of the namespace sharing a target with this one (their TargetConflict may change)."""
        namespace, name = objects.namespace(obj), objects.name(obj)
        try:
            changed = set(_targets_of(manager.scheme.from_wire(objects.thaw(obj), Balancer)))
        except ValueError:
            return []
        return [Request(namespace, other.metadata.name or "") for other in manager.client.list(Balancer, namespace)
                if other.metadata.name != name and changed & set(_targets_of(other))]  # fmt: skip

    def scaled_by_hpa(hpa: Any) -> list[Request]:
        """Balancers of the HPA's namespace with a target the HPA scales."""
        namespace = objects.namespace(hpa)
        ref: Sequence[Any] | Mapping[str, Any] = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        if not isinstance(ref, Mapping):
            return []
        group = str(ref.get("apiVersion") or "").rpartition("/")[0]
        key = (group, ref.get("kind"), ref.get("name"))
        return [Request(namespace, b.metadata.name or "") for b in manager.client.list(Balancer, namespace)
                if key in _targets_of(b)]  # fmt: skip

    return (
        Builder(manager)
        .for_(Balancer)
        .watches(Balancer, EnqueueRequestsFromMapFunc(sharing_a_target))
        .watches(HPA, EnqueueRequestsFromMapFunc(scaled_by_hpa))
        .watches_source(reconciler.pods)
        .named(NAME)
        .complete(reconciler)
    )
