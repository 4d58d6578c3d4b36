"""Turning the kill switch off resumes every lane it paused at once (docs/design.md, difference 23): the pods,
profiles and sources skipped while it was on are re-queued on deactivation, not at their next periodic requeue
(15 minutes for a skipped resize, the poll interval for a source; never, for a pod created meanwhile)."""

from __future__ import annotations

import queue
from collections.abc import Iterator

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.controllers import enrollment, resize
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.enrollment import PROFILE_REF
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.killswitch.state import CONFIGMAP_REASON
from ballast.internal.operator import OperatorOptions
from ballast.runtime import FakeAPI, Scheme, objects
from ballast.runtime.client import APIServerClient
from tests.unit.internal.policy.builders import crp
from tests.unit.internal.runtime.support import eventually, running, sample
from tests.unit.support import register_our_kinds
from tests.unit.webhook.support import ballast_config, pod


@pytest.fixture
def client() -> Iterator[APIServerClient]:
    api = FakeAPI()
    register_our_kinds(api)
    client = api.client(scheme=add_to_scheme(Scheme()))
    client.create(ballast_config())
    client.create(crp("default"))
    yield client
    api.close()


def test_each_subscriber_hears_every_deactivation_with_the_reason_it_had() -> None:
    state = KillSwitchState()
    first, second = state.resumptions(), state.resumptions()
    state.update(configmap=True, suspended=False)
    state.update(configmap=True, suspended=False)  # no flip: nothing
    state.update(configmap=False, suspended=False)
    assert (first.get_nowait(), second.get_nowait()) == (CONFIGMAP_REASON, CONFIGMAP_REASON)
    with pytest.raises(queue.Empty):
        first.get_nowait()


def test_a_pod_created_while_the_switch_was_on_is_enrolled_when_it_turns_off(client: APIServerClient) -> None:
    state = KillSwitchState()
    state.update(configmap=True, suspended=False)
    manager = new_manager(client, namespace="ballast-system")
    enrollment.setup(manager, kill_switch=state, options=OperatorOptions())
    body = pod("apply")
    with running(manager):
        client.create(body)
        total = "controller_runtime_reconcile_total"
        eventually(lambda: sample(total, controller=enrollment.NAME, result="requeue_after") >= 1, "the skip")
        assert PROFILE_REF not in objects.annotations(client.get("v1/Pod", "web-0", "shop"))
        state.update(configmap=False, suspended=False)  # no object changes: only the resumption can enqueue it
        eventually(lambda: objects.annotations(client.get("v1/Pod", "web-0", "shop")).get(PROFILE_REF), "enrolled")


def test_profiles_skipped_by_the_switch_are_resized_again_at_once(client: APIServerClient) -> None:
    state = KillSwitchState()
    state.update(configmap=True, suspended=False)
    manager = new_manager(client, namespace="ballast-system")
    resize.setup(manager, kill_switch=state, options=OperatorOptions(), server_version=lambda: "v1.35.0")
    client.create({"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile",
                   "metadata": {"name": "billing--api--default-a9696153"}})  # fmt: skip
    total = "controller_runtime_reconcile_total"
    with running(manager):
        eventually(lambda: sample(total, controller=resize.NAME, result="requeue_after") >= 1, "the skip")
        before = sample(total, controller=resize.NAME, result="requeue_after")
        state.update(configmap=False, suspended=False)
        eventually(lambda: sample(total, controller=resize.NAME, result="requeue_after") > before, "a new reconcile")
