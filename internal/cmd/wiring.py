"""How `ballastd` assembles the operator: the manager's cache, the controller lanes and the admission handlers.

The one place (with the dev harness) that imports `controllers/` and `webhook/`; it does so inside the functions,
so `ballastd --help` stays fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the modules themselves load inside the functions below
    from ballast.controllers.consolidation import AdvisorSettings
    from ballast.internal.collection import RefreshPolicy
    from ballast.internal.history import HistoryStore
    from ballast.internal.killswitch import KillSwitchState
    from ballast.internal.operator import OperatorOptions
    from ballast.internal.scheduling.availability import SchedulingAvailability
    from ballast.runtime import Manager, WebhookServer
    from ballast.runtime.client import APIServerClient

CONTROLLERS = (
    "workloadwatcher-pod",
    "workloadwatcher-profile",
    "metricscollector",
    "resourceadjuster",
    "oomwatcher",
    "policystatus-cluster",
    "policystatus-namespaced",
    "configstatus-ballastconfig",
    "configstatus-metricssource",
    "killswitch",
    "schedulingpolicy",
    "balancer",
    "consolidation",
)
"""Controller names `--controllers` accepts (they label metrics and logs): the Go operator's, and the two
`configstatus-*` lanes it has no counterpart of (docs/design.md, difference 26), `oomwatcher` (OOM kills raise
memory limits, difference 62), and `schedulingpolicy` (the
scheduling webhook's matchConditions), `balancer` (Balancers) and `consolidation` (the ConsolidationReport)."""
DISABLED_BY_DEFAULT = ("consolidation",)
"""Controllers `*` leaves out (kube-controller-manager's disabled-by-default ones): name them to run them. The
consolidation advisor lists every node and pod each interval and needs a price list to say anything useful, so it
is opt-in."""


@dataclass(frozen=True)
class Dependencies:
    """What the lanes and the admission handlers share; `ballastd` builds it once."""

    store: HistoryStore
    kill_switch: KillSwitchState
    options: OperatorOptions
    refresh: RefreshPolicy | None = None  # when the collector recomputes statistics (None: its default rule)
    balancer_reprocess_period: float = 15.0  # seconds between two runs of a Balancer (`--balancer-reprocess-period`)
    consolidation: AdvisorSettings | None = None  # the `--consolidation-*` flags (None: the advisor's defaults)
    scheduling: SchedulingAvailability | None = None  # kupid's CRDs served or not (`watch_scheduling_crds`)


def new_manager(
    client: APIServerClient,
    *,
    namespace: str,
    scheduling: bool = True,
    leave_alone: Sequence[str] = (),
    **options: Any,
) -> Manager:
    """A Manager with the operator's cache: enrolled pods only (as projections, indexed by profile-ref; none in the
    operator's `namespace` or in `leave_alone`, docs/design.md, difference 60) and the
    kill-switch ConfigMap only; with `scheduling`, both scheduling-policy kinds (empty and synced while their CRD
    is not installed: `absent_as_empty`, so `ballastd` starts without kupid's CRDs) and the Namespaces (name and
    labels, for cluster policies' namespace selectors), started with the cache so that the first admission does
    not wait for them. `options` go to `Manager` (addresses, leader elector, shutdown timeout)."""
    from ballast.internal.enrollment import (  # noqa: PLC0415
        KILL_SWITCH_CONFIGMAP,
        MODE_LABEL,
        PROFILE_REF_INDEX,
        PodProjection,
        profile_ref_index,
    )
    from ballast.internal.scheduling.availability import POLICY_KINDS  # noqa: PLC0415
    from ballast.runtime import CacheScope, Manager, Projection  # noqa: PLC0415

    manager = Manager(
        client=client,
        cache_by_kind={
            "v1/Pod": CacheScope(
                label_selector=MODE_LABEL,
                field_selector=",".join(f"metadata.namespace!={name}" for name in sorted({namespace, *leave_alone})),
                projection=PodProjection,
            ),
            "v1/ConfigMap": CacheScope(namespace=namespace, field_selector=f"metadata.name={KILL_SWITCH_CONFIGMAP}"),
            "v1/Namespace": CacheScope(projection=Projection),
            **{kind: CacheScope(absent_as_empty=True) for kind in POLICY_KINDS.values()},
        },
        **options,
    )
    manager.cache.index_field("v1/Pod", PROFILE_REF_INDEX, profile_ref_index)
    if scheduling:
        for kind in ("v1/Namespace", *POLICY_KINDS.values()):
            manager.cache.get_informer(kind)
    return manager


CRD_KIND = "apiextensions.k8s.io/v1/CustomResourceDefinition"


class _PresenceHandler:
    """One CRD's informer events → its kind's presence (a CRD being deleted is absent already)."""

    def __init__(self, availability: SchedulingAvailability, kind: str) -> None:
        self.availability = availability
        self.kind = kind

    def on_add(self, obj: Any, is_initial_list: bool) -> None:
        self.availability.crd_changed(self.kind, present=obj.metadata.deletion_timestamp is None)

    def on_update(self, old: Any, new: Any) -> None:
        self.on_add(new, False)

    def on_delete(self, obj: Any) -> None:
        self.availability.crd_changed(self.kind, present=False)


class _CRDWatch:
    """Feeds `SchedulingAvailability` from one informer per kupid CRD (watched by name, metadata only): present
    unless gone or being deleted. Runs on every replica (the webhook does), once the cache has synced."""

    def __init__(self, availability: SchedulingAvailability, informers: dict[str, Any]) -> None:
        self.availability = availability
        self.informers = informers

    def need_leader_election(self) -> bool:
        return False

    def start(self, stop: Any) -> None:

        for kind, informer in self.informers.items():
            informer.add_event_handler(_PresenceHandler(self.availability, kind))
            if not informer.store.keys():
                self.availability.crd_changed(kind, present=False)
        stop.wait()


def watch_scheduling_crds(manager: Manager, *, grace: float | None = None) -> SchedulingAvailability:
    """Whether kupid's CRDs are served (`ballast.internal.scheduling.availability`), kept current by a watch on
    each CRD by name; `grace`: seconds a CRD that went away is still treated as being reinstalled."""
    from ballast.internal.scheduling.availability import (  # noqa: PLC0415
        CRD_NAMES,
        POLICY_KINDS,
        SchedulingAvailability,
    )
    from ballast.runtime import CacheScope, Projection  # noqa: PLC0415

    informers = {kind: manager.cache.get_informer(POLICY_KINDS[kind]) for kind in CRD_NAMES}
    availability = (
        SchedulingAvailability(informers) if grace is None else SchedulingAvailability(informers, grace=grace)
    )
    crds = {
        kind: manager.cache.get_informer(
            CRD_KIND, CacheScope(field_selector=f"metadata.name={name}", projection=Projection)
        )
        for kind, name in CRD_NAMES.items()
    }
    manager.add(_CRDWatch(availability, crds))
    return availability


def add_core_lanes(manager: Manager, controllers: set[str], deps: Dependencies) -> None:
    """The kill switch (always: every replica's webhook needs it), enrollment, profiles, policy and configuration
    status, and the scheduling webhook's matchConditions (unless `--scheduling-webhooks=false`)."""
    from ballast.controllers import (  # noqa: PLC0415
        configstatus,
        enrollment,
        historysweep,
        killswitch,
        migration,
        policystatus,
        profile,
        schedulingpolicy,
    )
    from ballast.internal.manifests.scheduling_webhooks import MUTATE_WEBHOOK, configuration_name  # noqa: PLC0415

    options = deps.options
    killswitch.setup(manager, state=deps.kill_switch, options=options)
    if "workloadwatcher-pod" in controllers:
        enrollment.setup(manager, kill_switch=deps.kill_switch, options=options)
        migration.setup(manager)
    if "workloadwatcher-profile" in controllers:
        profile.setup(manager, store=deps.store, options=options)
        historysweep.setup(manager, store=deps.store, options=options)  # bounds the history profile.py keeps
    if {"policystatus-cluster", "policystatus-namespaced"} & controllers:
        policystatus.setup(manager, options=options)
    if {config.name for config in configstatus.KINDS} & controllers:
        configstatus.setup(manager, options=options, names=controllers)
    if options.scheduling_webhooks and schedulingpolicy.NAME in controllers:
        schedulingpolicy.setup(
            manager,
            configuration=configuration_name(options.webhook_configuration_name),
            webhook=MUTATE_WEBHOOK,
            availability=deps.scheduling,
        )


def add_optional_lanes(manager: Manager, controllers: set[str], deps: Dependencies) -> None:
    """The collection, resize and OOM lanes, the Balancer controller and the consolidation advisor."""
    from ballast.controllers import balancer, collector, consolidation, oom, resize  # noqa: PLC0415
    from ballast.internal.collection import CollectionMemory  # noqa: PLC0415

    memory = CollectionMemory()  # the OOM watcher's samples count towards the collector's refreshes
    if "metricscollector" in controllers:
        collector.setup(
            manager,
            store=deps.store,
            kill_switch=deps.kill_switch,
            options=deps.options,
            refresh=deps.refresh,
            memory=memory,
        )
    if "resourceadjuster" in controllers:
        resize.setup(manager, kill_switch=deps.kill_switch, options=deps.options)
    if oom.NAME in controllers:
        oom.setup(manager, options=deps.options, store=deps.store, collection_memory=memory)
    if "balancer" in controllers:
        balancer.setup(manager, reprocess_period=deps.balancer_reprocess_period)
    if consolidation.NAME in controllers:
        consolidation.setup(manager, settings=deps.consolidation or consolidation.AdvisorSettings())


def register_webhooks(server: WebhookServer, manager: Manager, deps: Dependencies) -> None:
    """The admission handlers on the webhook server: pods (mutate, validate), policies, BallastConfigs and
    MetricsSources (validate); and, unless `--scheduling-webhooks=false`, scheduling policies (mutate and validate)."""
    from ballast.webhook import configuration, pods, policies, scheduling, schedulingpolicies  # noqa: PLC0415

    pods.register(
        server,
        reader=manager.client,
        owner_reader=manager.api_reader,  # owners live: a new ReplicaSet may not be cached yet at its first pod
        kill_switch=deps.kill_switch,
        options=deps.options,
    )
    policies.register(server)
    configuration.register(server)
    if deps.options.scheduling_webhooks:
        scheduling.register(
            server,
            reader=manager.client,
            recorder=manager.get_event_recorder("scheduling-webhook"),
            availability=deps.scheduling,
            left_alone=deps.options.left_alone,
            cache=manager.cache,
        )
        schedulingpolicies.register(server)
