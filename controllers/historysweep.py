"""History sweep (`workloadwatcher-historysweep`): purge history that has had no profile for `orphanTTL`.

A profile deleted with its CRD or during `ballastd uninstall` keeps its history (controllers/profile.py); this
lane bounds what is kept (docs/design.md, difference 53). Reconciles the BallastConfig, then again every
`SWEEP_PERIOD` (or `orphanTTL`, when shorter): every measurement hash in the store that no cached profile
carries is remembered with the time it was first seen so (in the store), and purged once that is `orphanTTL`
ago (the BallastConfig's, the TTL of orphaned profiles). Leader-only, like every lane.

Nothing is swept while the profile cache cannot be trusted to list every profile: without a BallastConfig or
with an invalid one (difference 26), and while the WorkloadProfile CRD is not served or is being deleted.
"""

from __future__ import annotations

from ballast.api.ballast.v1 import BallastConfig, WorkloadProfile
from ballast.internal.enrollment import BALLAST_CONFIG_NAME, WORKLOAD_PROFILE_CRD
from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.history import HistoryStore
from ballast.internal.history.orphans import sweep
from ballast.internal.naming import tuple_hash
from ballast.internal.operator import OperatorOptions
from ballast.internal.stats import parse_duration
from ballast.runtime import Builder, Context, Controller, Manager, NotFoundError, Request, Result, objects
from ballast.runtime.predicate import new_predicate_funcs
from ballast.runtime.restmapper import NoKindMatchError

NAME = "workloadwatcher-historysweep"
CRD = "apiextensions.k8s.io/v1/CustomResourceDefinition"
SWEEP_PERIOD = 3600.0
"""Seconds between sweeps: a history is purged at most this long after its `orphanTTL`."""


def owned_hashes(profiles: list[WorkloadProfile]) -> set[str]:
    """The measurement hash of every profile (by its tuple for profiles written before hashes existed)."""
    hashes: set[str] = set()
    for profile in profiles:
        status = profile.status
        if status and status.measurement_hash:
            hashes.add(status.measurement_hash)
        elif status and status.tuple_labels:
            hashes.add(tuple_hash(status.tuple_labels))
    return hashes


class HistorySweepReconciler:
    def __init__(self, manager: Manager, store: HistoryStore, options: OperatorOptions) -> None:
        self.client = manager.client
        self.api_reader = manager.api_reader
        self.cache = manager.cache
        self.store = store
        self.clock = options.clock

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            config: BallastConfig = self.client.get(BallastConfig, request.name)
        except NotFoundError:
            return None
        if validate_ballast_config(config.spec):
            return None  # the config lane says why; its watch brings us back once it is fixed
        if not self._profiles_served(ctx):
            return Result(requeue_after=SWEEP_PERIOD)
        ttl = parse_duration(config.spec.orphan_ttl) / 1e9
        now_ms = int(self.clock.now().timestamp() * 1000)
        owned = owned_hashes(self.cache.list(WorkloadProfile).items)
        for digest in sweep(self.store, owned=owned, now_ms=now_ms, ttl_ms=int(ttl * 1000)):
            ctx.logger.info("purged history without a profile for orphanTTL", extra={"measurementHash": digest,
                            "orphanTTL": config.spec.orphan_ttl})  # fmt: skip
        return Result(requeue_after=min(SWEEP_PERIOD, max(ttl, 1.0)))

    def _profiles_served(self, ctx: Context) -> bool:
        try:
            crd = self.api_reader.get(CRD, WORKLOAD_PROFILE_CRD)
        except (NotFoundError, NoKindMatchError):
            ctx.logger.info("WorkloadProfile CRD not served; history sweep waits")
            return False
        if crd["metadata"].get("deletionTimestamp"):
            ctx.logger.info("WorkloadProfile CRD is being deleted; history sweep waits")
            return False
        return True


def setup(manager: Manager, *, store: HistoryStore, options: OperatorOptions) -> Controller:
    """Register the history sweep on `manager`."""
    only_ballast = new_predicate_funcs(lambda obj: objects.name(obj) == BALLAST_CONFIG_NAME)
    return (
        Builder(manager)
        .for_(BallastConfig, predicates=[only_ballast])
        .named(NAME)
        .complete(HistorySweepReconciler(manager, store, options))
    )
