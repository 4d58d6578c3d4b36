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
   A count above 150,000 is still written, with a Warning event `LargeReplicaCount` (docs/design.md,
   difference 59).

The status (`ballast.internal.balancer.status`: replicas, selector, targets[], five conditions) is written by
server-side apply (field manager `ballast-balancer`) only when it changed; a failed write is a Warning event
`StatusNotUpdated`. Each Balancer is run again every `reprocess_period` seconds (upstream's 15 s).

A target that an HPA or another Balancer also scales (`ballast.internal.balancer.conflicts`) is not written and
`TargetConflict=True` names the other owner, with a Warning event `TargetConflict` when that changes.

The placement, the status and the conflicts are pure code in `ballast.internal.balancer`; the pod informers are
the framework's `ScopedInformerPool`; this module reads, calls them, and writes.
"""

from __future__ import annotations

from typing import Any

from ballast.api.balancer.v1alpha1 import (
    APPLYING_BALANCER_POLICY,
    POD_LABELS_CHECKING,
    POD_LISTING,
    REPLICA_COUNT_SETTING,
    SCALE_SUBRESOURCE_POLLING,
    Balancer,
)
from ballast.internal.balancer import PodSummary
from ballast.internal.balancer.balance import balance
from ballast.internal.balancer.conflicts import conflicts, hpa_target, targets_of
from ballast.internal.balancer.metrics import forget_balancer, record_balancer
from ballast.internal.balancer.pods import BalancerPod, pod_states
from ballast.internal.balancer.run import BalancerError, BalancerRun
from ballast.internal.balancer.status import balancer_status, metric_figures, new_conflict, status_differs
from ballast.runtime import (
    APPLY,
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
from ballast.runtime import labels as label_selectors
from ballast.runtime.informerpool import ScopedInformerPool
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
LARGE_REPLICA_COUNT = "LargeReplicaCount"
LARGE_REPLICAS = 150_000
"""Above this many replicas a write to a target is a Warning event: Kubernetes' scalability limit is 150,000 pods
per cluster, so such a count is almost surely a mistake; it is still written, as upstream would."""


def _pod_changed(old: Any, new: Any) -> bool:
    """Pod updates that matter to a summary: the phase or the labels."""
    return bool(old.status.phase != new.status.phase or objects.labels(old) != objects.labels(new))


def pod_informers(manager: Manager) -> ScopedInformerPool:
    """The Balancers' pod informers: one per (namespace, selector), shared, requeueing the Balancers using it."""
    return ScopedInformerPool(manager.cache, POD, projection=BalancerPod, relevant_update=_pod_changed)


class BalancerReconciler:
    """The reconciler of the Balancer controller; see the module docstring."""

    def __init__(self, manager: Manager, *, reprocess_period: float = DEFAULT_REPROCESS_PERIOD) -> None:
        self.client = manager.client
        self.api = manager.api_reader
        self.clock = manager.clock
        self.recorder = manager.get_event_recorder(EVENT_COMPONENT)
        self.pods = pod_informers(manager)
        self.reprocess_period = reprocess_period
        self.sync_timeout = manager.cache.sync_timeout

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            balancer: Balancer = self.client.get(Balancer, request.name, request.namespace)
        except NotFoundError:
            self.pods.release_all(request)
            forget_balancer(request.namespace, request.name)
            return None
        run = BalancerRun.of(balancer)
        try:
            self._find_conflicts(run)
            self._poll_scales(run)
            self._list_pods(request, run)
            self._check_labels(run)
            self._apply_policy(run)
            self._set_replicas(run)
        except BalancerError as error:
            run.error = error
            ctx.logger.info("unable to balance", extra={"phase": error.phase, "error": error.error})
            self.recorder.event(balancer, "Warning", UNABLE_TO_BALANCE, str(error), kind=BALANCER_KIND)
        record_balancer(request.namespace, request.name, *metric_figures(run))
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

    def _find_conflicts(self, run: BalancerRun) -> None:
        """Mark targets also scaled by an HPA, by another Balancer, or twice by this one."""
        balancer = run.balancer
        namespace, name = balancer.metadata.namespace or "", balancer.metadata.name
        hpas = sorted(((objects.name(h), h) for h in self.client.list(HPA, namespace)), key=lambda found: found[0])
        others = sorted((b for b in self.client.list(Balancer, namespace) if b.metadata.name != name),
                        key=lambda b: b.metadata.name or "")  # fmt: skip
        found = conflicts(balancer, hpas, others)
        for target in run.targets:
            target.conflict = found.get(target.name)

    def _poll_scales(self, run: BalancerRun) -> None:
        """Phase 1: each target's scale subresource."""
        namespace = run.balancer.metadata.namespace or ""
        scales = self.api.subresource("scale")
        for target in run.targets:
            ref = target.target.scale_target_ref
            try:
                gvk = GroupVersionKind.from_api_version(ref.api_version or "", ref.kind)
            except ValueError as exc:
                raise BalancerError(
                    SCALE_SUBRESOURCE_POLLING, f"invalid API version in scale target reference: {exc}"
                ) from None
            try:
                self.api.mapper.mapping(gvk)
            except NoKindMatchError as exc:
                raise BalancerError(
                    SCALE_SUBRESOURCE_POLLING, f"unable to determine resource for scale target reference: {exc}"
                ) from None
            try:
                target.scale = scales.get(gvk, name=ref.name, namespace=namespace)
            except APIStatusError as exc:
                raise BalancerError(
                    SCALE_SUBRESOURCE_POLLING,
                    f"failed to query scale subresource for {target.describe(namespace)}: {exc.message or exc}",
                ) from None
            target.gvk = gvk

    def _list_pods(self, request: Request, run: BalancerRun) -> None:
        """Phase 2: each target's pods by its scale's selector, from the pooled informers."""
        selectors: dict[str, str] = {}
        for target in run.targets:
            text = str(((target.scale or {}).get("status") or {}).get("selector") or "")
            try:
                label_selectors.parse(text)
            except label_selectors.SelectorError as exc:
                self.pods.use(request, request.namespace, selectors.values())
                raise BalancerError(POD_LISTING, f"invalid selector of target {target.name}: {exc}") from None
            selectors[target.name] = text
        informers = self.pods.use(request, request.namespace, selectors.values())
        for target in run.targets:
            informer = informers[selectors[target.name]]
            if not informer.wait_for_sync(self.sync_timeout):
                raise BalancerError(
                    POD_LISTING, f"pods of target {target.name} not listed: informer {informer.name} did not sync"
                )
            wanted = label_selectors.parse(selectors[target.name])
            target.pods = sorted((pod for pod in informer.store.values() if wanted.matches(pod.metadata.labels)),
                                 key=lambda pod: pod.metadata.name)  # fmt: skip

    def _check_labels(self, run: BalancerRun) -> None:
        """Phase 3: spec.selector converts and matches every target pod."""
        try:
            selector = label_selectors.from_label_selector(run.balancer.spec.selector.model_dump(by_alias=True))
        except label_selectors.SelectorError:
            raise BalancerError(POD_LABELS_CHECKING, "incorrect selector") from None
        for target in run.targets:
            if any(not selector.matches(pod.metadata.labels) for pod in target.pods or ()):
                raise BalancerError(POD_LABELS_CHECKING, f"incorrect labeling for pods in target {target.name}")

    def _apply_policy(self, run: BalancerRun) -> None:
        """Phase 4: the summaries (kept when the policy is refused), then the placement."""
        pods = {t.name: pod_states(t.pods or ()) for t in run.targets}
        balanced = balance(run.balancer.spec, pods, self.clock.now())
        run.observed = balanced.observed
        for target in run.targets:
            target.summary = balanced.summaries.get(target.name, PodSummary()) if balanced.summaries else None
        if balanced.refused is not None or balanced.placement is None:
            raise BalancerError(APPLYING_BALANCER_POLICY, balanced.refused or "no placement")
        for target in run.targets:
            target.desired = balanced.placement.placement[target.name]
        run.placement = balanced.placement

    def _set_replicas(self, run: BalancerRun) -> None:
        """Phase 5: each target's scale.spec.replicas where it differs and the target is ours alone."""
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
            if target.desired > LARGE_REPLICAS:
                self.recorder.event(
                    run.balancer, "Warning", LARGE_REPLICA_COUNT,
                    f"set {target.describe(namespace)} to {target.desired} replicas, more than the {LARGE_REPLICAS:,} "
                    "pods of Kubernetes' largest tested cluster", kind=BALANCER_KIND,
                )  # fmt: skip

    def _write_status(self, ctx: Context, run: BalancerRun) -> None:
        """Server-side apply of the status when it says something new; an event when a conflict is new."""
        balancer = run.balancer
        status = balancer_status(run, self.clock.now())
        if (conflict := new_conflict(balancer.status, status)) is not None:
            self.recorder.event(balancer, "Warning", TARGET_CONFLICT_EVENT, conflict, kind=BALANCER_KIND)
        if not status_differs(balancer.status, status):
            return
        body = {
            "apiVersion": BALANCER_KIND.api_version, "kind": BALANCER_KIND.kind,
            "metadata": {"name": balancer.metadata.name, "namespace": balancer.metadata.namespace},
            "status": status.to_wire(),
        }  # fmt: skip
        ctx.logger.debug("writing status", extra={"balancing": (status.conditions or [])[0].status})
        self.api.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)


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
            changed = set(targets_of(manager.scheme.from_wire(objects.thaw(obj), Balancer)))
        except ValueError:
            return []
        return [Request(namespace, other.metadata.name or "") for other in manager.client.list(Balancer, namespace)
                if other.metadata.name != name and changed & set(targets_of(other))]  # fmt: skip

    def scaled_by_hpa(hpa: Any) -> list[Request]:
        """Balancers of the HPA's namespace with a target the HPA scales."""
        namespace, key = objects.namespace(hpa), hpa_target(hpa)
        return [Request(namespace, b.metadata.name or "") for b in manager.client.list(Balancer, namespace)
                if key is not None and key in targets_of(b)]  # fmt: skip

    return (
        Builder(manager)
        .for_(Balancer)
        .watches(Balancer, EnqueueRequestsFromMapFunc(sharing_a_target))
        .watches(HPA, EnqueueRequestsFromMapFunc(scaled_by_hpa))
        .watches_source(reconciler.pods)
        .named(NAME)
        .complete(reconciler)
    )
