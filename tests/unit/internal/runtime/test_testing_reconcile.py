"""`testing.reconcile` and `testing.reconcile_context`: a reconciler called directly, as Go's tests call
`Reconcile(ctx, req)`, with the Context a controller would build."""

from __future__ import annotations

import datetime
import logging

import pytest

from ballast.runtime import Context, FakeAPI, FakeClock, NotFoundError, Request, Result
from ballast.runtime.testing import reconcile, reconcile_context


class Stamper:
    """Annotates a ConfigMap with ctx.clock's time; asks to come back in a minute."""

    def __init__(self, api: FakeAPI) -> None:
        self.client = api.client()
        self.seen: list[Context] = []

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        self.seen.append(ctx)
        configmap = self.client.get("v1/ConfigMap", request.name, request.namespace)
        configmap["metadata"].setdefault("annotations", {})["stamped"] = ctx.clock.now().isoformat()
        self.client.update(configmap)
        ctx.logger.info("stamped")
        return Result(requeue_after=60) if request.name == "again" else None


@pytest.fixture
def stamper(api: FakeAPI) -> Stamper:
    client = api.client()
    for name in ("once", "again"):
        client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "shop"}})
    return Stamper(api)


def test_reconcile_calls_the_reconciler_with_the_given_clock(stamper: Stamper) -> None:
    clock = FakeClock(datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC))
    assert reconcile(stamper, Request("shop", "once"), clock=clock) == Result()
    assert reconcile(stamper, Request("shop", "again"), clock=clock) == Result(requeue_after=60)
    stamped = stamper.client.get("v1/ConfigMap", "once", "shop")["metadata"]["annotations"]["stamped"]
    assert stamped == "2026-01-02T03:04:05+00:00"
    first, second = stamper.seen
    assert first.clock is clock
    assert first.request == Request("shop", "once")
    assert first.reconcile_id != second.reconcile_id


def test_the_context_logs_the_request_as_a_controller_does(stamper: Stamper, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        reconcile(stamper, Request("shop", "once"), controller="stamper")
    [record] = [r for r in caplog.records if r.getMessage() == "stamped"]
    values = record.kv  # type: ignore[attr-defined]
    assert (values.get("controller"), values.get("namespace"), values.get("name")) == ("stamper", "shop", "once")
    assert values.get("reconcileID") == stamper.seen[0].reconcile_id


def test_a_timeout_sets_the_deadline_on_the_clock() -> None:
    clock = FakeClock()
    ctx = reconcile_context(Request("", "node-1"), clock=clock, timeout=30)
    assert ctx.remaining() == 30
    clock.advance(31)
    assert ctx.expired()


def test_what_the_reconciler_raises_propagates(api: FakeAPI) -> None:
    with pytest.raises(NotFoundError):
        reconcile(Stamper(api), Request("shop", "missing"))
