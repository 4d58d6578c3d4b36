"""Controllers built with the Builder on the in-memory API server, on a fake clock: results, errors, filters."""

from __future__ import annotations

import functools
import logging
import queue as stdqueue
import re
import threading
import time
import uuid
from typing import Any, cast

import pytest

from ballast.runtime import (
    APIStatusError,
    Builder,
    Client,
    ConflictError,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    FakeAPI,
    FakeClock,
    Manager,
    NotFoundError,
    Request,
    Result,
    TerminalError,
    rest,
)
from ballast.runtime.apierrors import DeadlineExceededError, ForbiddenError
from ballast.runtime.builder import BuilderError
from ballast.runtime.controller import KIND_GONE_LOG_INTERVAL
from ballast.runtime.predicate import generation_changed, label_selector
from ballast.runtime.priorityqueue import PriorityQueue
from ballast.runtime.ratelimiter import ItemExponentialFailureRateLimiter
from ballast.runtime.rest import UnreachableError
from ballast.runtime.restmapper import NoKindMatchError
from ballast.runtime.source import Channel
from tests.unit.internal.runtime.support import Calls, configmap, eventually, running, sample


@pytest.fixture
def manager(api: FakeAPI, clock: FakeClock) -> Manager:
    return Manager(client=api.client(), clock=clock, graceful_shutdown_timeout=5)


@pytest.fixture
def name() -> str:
    """A controller name of its own: controller metrics are process-wide."""
    return f"unit-{uuid.uuid4().hex[:8]}"


def _ready(controller: Controller) -> int:
    """Requests ready to hand out (a delayed one is not ready until the clock reaches it)."""
    assert isinstance(controller.queue, PriorityQueue)
    return len(controller.queue)


def _results(name: str, result: str) -> float:
    return sample("controller_runtime_reconcile_total", controller=name, result=result)


def _deployment(name: str, namespace: str = "shop") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 1}}  # fmt: skip


def _owned(name: str, owner: dict[str, Any], *, controller: bool = True) -> dict[str, Any]:
    obj = configmap(name, owner["metadata"]["namespace"])
    obj["metadata"]["ownerReferences"] = [{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "controller": controller,
    }]  # fmt: skip
    return obj


# ------------------------------------------------------------------------------------- reconciling


def test_a_builder_made_controller_reconciles_listed_and_new_objects(
    manager: Manager, client: Client, name: str
) -> None:
    client.create(configmap("before", "shop", mode="x"))
    seen: list[tuple[Request, str, Any]] = []
    contexts: list[Context] = []

    def reconcile(ctx: Context, request: Request) -> Result | None:
        obj = manager.client.get("v1/ConfigMap", request.name, request.namespace)  # read through the cache
        seen.append((request, ctx.controller, obj.get("data")))
        contexts.append(ctx)
        return None

    controller = Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    assert isinstance(controller, Controller)
    assert name in manager.controller_names
    with running(manager):
        eventually(lambda: len(seen) == 1, "the listed object")
        client.create(configmap("after", "shop", mode="y"))
        eventually(lambda: len(seen) == 2, "the new object")
        eventually(lambda: _results(name, "success") == 2, "both results counted")
    assert seen == [(Request("shop", "before"), name, {"mode": "x"}), (Request("shop", "after"), name, {"mode": "y"})]
    assert contexts[0].reconcile_id != contexts[1].reconcile_id
    assert contexts[0].deadline is None
    assert contexts[0].remaining() is None
    assert not contexts[0].expired()


def test_the_default_name_is_the_lower_cased_kind(manager: Manager) -> None:
    assert Builder(manager).for_("apps/v1/Deployment").complete(lambda ctx, request: None).name == "deployment"
    with pytest.raises(BuilderError, match="a controller named 'deployment' already exists"):
        Builder(manager).for_("apps/v1/Deployment").complete(lambda ctx, request: None)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda b: b, "a controller needs for_"),
        (lambda b: b.owns("v1/ConfigMap"), r"owns\(\) requires for_\(\)"),
        (lambda b: b.watches("v1/ConfigMap", EnqueueRequestsFromMapFunc(lambda o: [])), "name the controller"),
        (lambda b: b.for_("v1/Pod").for_("v1/Pod"), r"for_\(\) may be called only once"),
    ],
)
def test_builder_misuse_is_refused(manager: Manager, build: Any, message: str) -> None:
    with pytest.raises(BuilderError, match=message):
        build(Builder(manager)).complete(lambda ctx, request: None)


def test_requeue_after_waits_on_the_clock(manager: Manager, client: Client, clock: FakeClock, name: str) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        return Result(requeue_after=30) if calls.record(request) == 1 else None

    controller = Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    request = Request("shop", "tick")
    with running(manager):
        client.create(configmap("tick", "shop"))
        eventually(lambda: _results(name, "requeue_after") == 1, "the requeue_after result")
        clock.advance(29.9)
        assert _ready(controller) == 0  # still waiting
        assert calls.count(request) == 1
        clock.advance(0.1)
        eventually(lambda: calls.count(request) == 2, "the reconcile 30 s later")
        eventually(lambda: _results(name, "success") == 1, "the success")
        clock.advance(3600)
        assert _ready(controller) == 0  # no third: the second returned no requeue
    assert calls.count(request) == 2


def test_errors_back_off_and_success_forgets(api: FakeAPI, client: Client, name: str) -> None:
    clock = FakeClock(freeze_backoff=True)  # the backoff itself is under test
    manager = Manager(client=api.client(), clock=clock, graceful_shutdown_timeout=5)
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        if calls.record(request) <= 2:
            raise RuntimeError("transient")
        return None

    limiter: ItemExponentialFailureRateLimiter[Request] = ItemExponentialFailureRateLimiter(1.0, 100.0)
    controller = (
        Builder(manager).for_("v1/ConfigMap").named(name).with_options(rate_limiter=limiter).complete(reconcile)
    )
    request = Request("shop", "flaky")
    with running(manager):
        client.create(configmap("flaky", "shop"))
        eventually(lambda: _results(name, "error") == 1, "the first failure")
        assert controller.queue.num_requeues(request) == 1
        clock.advance(0.99)
        assert _ready(controller) == 0
        clock.advance(0.01)  # first retry after 1 s
        eventually(lambda: _results(name, "error") == 2, "the second failure")
        clock.advance(1.99)
        assert _ready(controller) == 0  # second retry after 2 s
        assert calls.count(request) == 2
        clock.advance(0.01)
        eventually(lambda: _results(name, "success") == 1, "the success")
        assert controller.queue.num_requeues(request) == 0  # forgotten
    assert sample("controller_runtime_reconcile_errors_total", controller=name) == 2
    assert sample("controller_runtime_reconcile_panics_total", controller=name) == 0


def test_under_a_fake_clock_errors_retry_in_real_time_and_schedules_wait_for_the_clock(
    manager: Manager, client: Client, clock: FakeClock, name: str
) -> None:
    """The testing kit's choice: FakeClock() drives what the reconciler schedules, not its error backoff."""
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        count = calls.record(request)
        if count <= 2:
            raise RuntimeError("transient")
        return Result(requeue_after=60) if count == 3 else None

    controller = Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    request = Request("shop", "flaky")
    with running(manager):
        client.create(configmap("flaky", "shop"))
        eventually(lambda: _results(name, "requeue_after") == 1, "two retries without advancing the clock")
        assert (calls.count(request), _results(name, "error")) == (3, 2)
        assert _ready(controller) == 0  # the schedule waits for the clock
        clock.advance(60)
        eventually(lambda: _results(name, "success") == 1, "the scheduled reconcile")
    assert calls.count(request) == 4


def test_freeze_backoff_puts_the_retries_on_the_fake_clock(api: FakeAPI, client: Client, name: str) -> None:
    frozen = FakeClock(freeze_backoff=True)
    manager = Manager(client=api.client(), clock=frozen, graceful_shutdown_timeout=5)
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        if calls.record(request) == 1:
            raise RuntimeError("transient")
        return None

    Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    request = Request("shop", "frozen")
    with running(manager):
        client.create(configmap("frozen", "shop"))
        eventually(lambda: _results(name, "error") == 1, "the failure")
        time.sleep(0.2)  # 40 times the first backoff, in real time: still no retry
        assert calls.count(request) == 1
        frozen.advance(1)
        eventually(lambda: _results(name, "success") == 1, "the retry once the clock moved")


def test_a_conflict_is_retried_and_logged_as_info_without_a_traceback(
    manager: Manager, client: Client, clock: FakeClock, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        if calls.record(request) == 1:
            raise ConflictError(409, "Conflict", "the object has been modified; please apply your changes")
        return None

    Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    with caplog.at_level(logging.INFO), running(manager):
        client.create(configmap("raced", "shop"))
        eventually(lambda: _results(name, "error") == 1, "the conflict")
        clock.advance(1)  # the default back-off is 5 ms
        eventually(lambda: _results(name, "success") == 1, "the retry")
    ours = [r for r in caplog.records if "conflict" in r.getMessage() or "reconciler error" in r.getMessage()]
    assert [(r.levelno, r.getMessage().split(":")[0], r.exc_info) for r in ours] == [
        (logging.INFO, "conflict, retrying", None)
    ]
    assert sample("controller_runtime_reconcile_errors_total", controller=name) == 1  # still counted


def _errors_counted(name: str, count: int) -> bool:
    return _results(name, "error") == count


def test_an_api_failure_is_logged_in_one_line_and_the_reconcilers_own_bug_with_its_traceback(
    api: FakeAPI, client: Client, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Retries wait for the clock: in real time (5, 10, 20 ms) a loaded machine's poll could miss a count.
    clock = FakeClock(freeze_backoff=True)
    manager = Manager(client=api.client(), clock=clock, graceful_shutdown_timeout=5)
    failures: list[Exception] = [
        UnreachableError("https://127.0.0.1:6443", "no answer", deadline=1.0, method="GET", path="/api/v1/pods"),
        APIStatusError(500, "InternalError", "etcd leader changed"),
        APIStatusError(422, "Invalid", "spec.replicas: Invalid value: -1"),
        KeyError("spec"),
    ]

    def reconcile(ctx: Context, request: Request) -> Result | None:
        if failures:
            raise failures.pop(0)
        return None

    Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    with caplog.at_level(logging.INFO), running(manager):
        client.create(configmap("slow", "shop"))
        for errors in (1, 2, 3, 4):
            eventually(functools.partial(_errors_counted, name, errors), f"failure {errors}")
            clock.advance(1)
        eventually(lambda: _results(name, "success") == 1, "the retry after the four failures")
    logged = [(type(cast(tuple[object, ...], r.args)[0]).__name__, r.exc_info is not None)
              for r in caplog.records if r.getMessage().startswith("reconciler error")]  # fmt: skip
    assert logged == [
        ("UnreachableError", False),
        ("APIStatusError", False),
        ("APIStatusError", True),
        ("KeyError", True),
    ]


TERMINATING = (
    'workloadprofiles.ballast.tightlinesoftware.com "p" is forbidden: '
    "create not allowed while custom resource definition is terminating"
)


def test_a_kind_no_longer_served_is_one_quiet_warning_per_interval_not_a_traceback_per_retry(
    manager: Manager, client: Client, clock: FakeClock, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """What a deleted CRD does to every reconcile writing its kind: retried with backoff (in real time here),
    logged once per interval of the controller's clock."""
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        count = calls.record(request)
        if count <= 8:
            if count % 3 == 1:
                raise NoKindMatchError("no kind WorkloadProfile in ballast.tightlinesoftware.com/v1")
            if count % 3 == 2:  # a create while the CRD is terminating
                raise ForbiddenError(403, "Forbidden", TERMINATING)
            raise NotFoundError(404, "NotFound", "404 page not found")  # the path of a kind no longer served
        return None

    Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    with caplog.at_level(logging.INFO), running(manager):
        client.create(configmap("orphan", "shop"))
        eventually(lambda: _results(name, "error") >= 2, "two failures")
        clock.advance(KIND_GONE_LOG_INTERVAL)  # the failures from now on are in the next interval
        eventually(lambda: _results(name, "success") == 1, "the retry once the kind is back")
    ours = [r for r in caplog.records if r.name.endswith(name) and r.levelno >= logging.WARNING]
    assert [(r.levelno, r.exc_info) for r in ours] == [(logging.WARNING, None), (logging.WARNING, None)]
    assert "kind not served (CRD deleted?)" in ours[0].getMessage()
    left_out = re.search(r"\((\d+) such errors not logged in the last 30s\)", ours[1].getMessage())
    assert left_out is not None
    assert int(left_out[1]) >= 1
    assert sample("controller_runtime_reconcile_errors_total", controller=name) == 8  # every one still counted


def test_terminal_errors_are_not_retried(manager: Manager, client: Client, clock: FakeClock, name: str) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        calls.record(request)
        raise TerminalError("the spec can never work")

    controller = Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    with running(manager):
        client.create(configmap("broken", "shop"))
        eventually(lambda: sample("controller_runtime_terminal_reconcile_errors_total", controller=name) == 1, "it")
        clock.advance(10_000)
        assert _ready(controller) == 0
        assert controller.queue.num_requeues(Request("shop", "broken")) == 0
    assert calls.count(Request("shop", "broken")) == 1
    assert _results(name, "error") == 1
    assert sample("controller_runtime_reconcile_errors_total", controller=name) == 1


def test_programming_errors_count_as_panics_and_keep_the_worker(
    manager: Manager, client: Client, clock: FakeClock, name: str
) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        settings: dict[str, float] = {}
        if calls.record(request) == 1:
            return Result(requeue_after=settings["interval"])  # a KeyError: a bug, Python's panic
        return None

    Builder(manager).for_("v1/ConfigMap").named(name).complete(reconcile)
    with running(manager):
        client.create(configmap("buggy", "shop"))
        eventually(lambda: sample("controller_runtime_reconcile_panics_total", controller=name) == 1, "the panic")
        clock.advance(1)  # the default back-off is 5 ms
        eventually(lambda: _results(name, "success") == 1, "the retry on the same worker")


def test_a_reconcile_timeout_sets_a_cooperative_deadline(
    manager: Manager, client: Client, clock: FakeClock, name: str
) -> None:
    observed: list[tuple[float | None, float | None]] = []

    def reconcile(ctx: Context, request: Request) -> Result | None:
        observed.append((ctx.remaining(), rest.remaining_time()))
        clock.advance(11)  # the work took longer than the timeout ...
        raise DeadlineExceededError("a client call found no time left")  # ... and a client call said so

    Builder(manager).for_("v1/ConfigMap").named(name).with_options(reconcile_timeout=10).complete(reconcile)
    with running(manager):
        client.create(configmap("slow", "shop"))
        # >= 1: the retries (real-time backoff under this FakeClock) time out too
        eventually(lambda: sample("controller_runtime_reconcile_timeouts_total", controller=name) >= 1, "it")
    remaining, transport_remaining = observed[0]
    assert remaining == 10
    assert transport_remaining is not None
    assert 0 < transport_remaining <= 10  # every API call inside shares the deadline


# ----------------------------------------------------------------------------------------- filters


def test_predicates_and_event_filters_choose_what_is_reconciled(manager: Manager, client: Client, name: str) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        calls.record(request)
        return None

    (
        Builder(manager)
        .for_("v1/ConfigMap", predicates=[label_selector("app=web")])
        .with_event_filter(label_selector({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}))
        .named(name)
        .complete(reconcile)
    )
    with running(manager):
        client.create(configmap("no-app", "shop", labels={"tier": "front"}))
        client.create(configmap("no-tier", "shop", labels={"app": "web"}))
        client.create(configmap("both", "shop", labels={"app": "web", "tier": "front"}))
        eventually(lambda: calls.count(Request("shop", "both")) == 1, "the matching object")
        client.create(configmap("both-2", "shop", labels={"app": "web", "tier": "back"}))
        eventually(lambda: calls.count(Request("shop", "both-2")) == 1, "a later matching object")
    assert calls.seen() == [Request("shop", "both"), Request("shop", "both-2")]  # one worker, in order


def test_generation_changed_ignores_status_and_metadata_writes(manager: Manager, client: Client, name: str) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        calls.record(request)
        return None

    Builder(manager).for_("apps/v1/Deployment", predicates=[generation_changed()]).named(name).complete(reconcile)
    request = Request("shop", "web")
    with running(manager):
        created = client.create(_deployment("web"))
        eventually(lambda: calls.count(request) == 1, "the create")
        with_status = client.status().update({**created, "status": {"replicas": 1}})
        labelled = client.patch(with_status, {"metadata": {"labels": {"a": "b"}}})
        client.patch(labelled, {"spec": {"replicas": 3}})
        eventually(lambda: calls.count(request) == 2, "the spec change")
        eventually(lambda: _results(name, "success") == 2, "its result")
    assert calls.count(request) == 2


def test_owned_objects_enqueue_their_controller_owner(manager: Manager, client: Client, name: str) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        calls.record(request)
        return None

    Builder(manager).for_("apps/v1/Deployment").owns("v1/ConfigMap").named(name).complete(reconcile)
    web, api_ = Request("shop", "web"), Request("shop", "api")
    with running(manager):
        web_owner = client.create(_deployment("web"))
        api_owner = client.create(_deployment("api"))
        eventually(lambda: calls.count(web) == 1 and calls.count(api_) == 1, "the deployments themselves")
        client.create(_owned("web-config", web_owner))
        eventually(lambda: calls.count(web) == 2, "the owner of a new controlled object")
        client.create(_owned("loose", web_owner, controller=False))  # not the controller: ignored
        client.create(_owned("api-config", api_owner))
        eventually(lambda: calls.count(api_) == 2, "the next owner")
        eventually(lambda: _results(name, "success") == 4, "every result")
    assert calls.count(web) == 2


def test_watches_with_a_map_func_and_a_channel_source(manager: Manager, client: Client, name: str) -> None:
    calls = Calls()
    events: stdqueue.Queue[Any] = stdqueue.Queue()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        calls.record(request)
        return None

    def to_named_deployment(obj: Any) -> list[Request]:
        target = obj["metadata"].get("labels", {}).get("for")
        return [Request(obj["metadata"]["namespace"], target)] if target else []

    (
        Builder(manager)
        .watches("v1/ConfigMap", EnqueueRequestsFromMapFunc(to_named_deployment))
        .watches_source(Channel(events, EnqueueRequestsFromMapFunc(lambda obj: [Request("", obj)])))
        .named(name)
        .complete(reconcile)
    )
    with running(manager):
        client.create(configmap("cfg", "shop", labels={"for": "web"}))
        eventually(lambda: calls.count(Request("shop", "web")) == 1, "the mapped request")
        events.put("tick")
        eventually(lambda: calls.count(Request("", "tick")) == 1, "the channel's request")


def test_controllers_that_need_no_leader_run_on_every_replica(manager: Manager, name: str) -> None:
    controller = (
        Builder(manager)
        .for_("v1/Pod")
        .named(name)
        .with_options(need_leader_election=False)
        .build(lambda ctx, request: None)
    )
    assert not controller.need_leader_election()
    assert sample("controller_runtime_max_concurrent_reconciles", controller=name) == 1


def test_max_concurrent_reconciles_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_concurrent_reconciles must be ≥ 1"):
        Controller("bad", lambda: None, max_concurrent_reconciles=0)  # type: ignore[arg-type]


def test_a_controller_starts_once(manager: Manager, name: str) -> None:
    controller = Builder(manager).for_("v1/Pod").named(name).build(lambda ctx, request: None)
    stop = threading.Event()
    stop.set()
    manager.cache.start()
    controller.start(stop)  # sources sync, workers start, stop is already set: it returns
    with pytest.raises(RuntimeError, match="already started"):
        controller.start(stop)
    manager.cache.stop()
