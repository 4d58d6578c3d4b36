"""The kill-switch lane on the in-memory API: the ConfigMap's existence or `spec.suspended` turns the shared
state on, on a manager without leadership too, and its removal turns it off; transitions are counted."""

from __future__ import annotations

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.controllers import killswitch
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.enrollment import KILL_SWITCH_CONFIGMAP
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.killswitch.state import CONFIGMAP_REASON, SUSPENDED_REASON
from ballast.internal.operator import OperatorOptions
from ballast.internal.telemetry import KILL_SWITCH_TRANSITIONS
from ballast.runtime import FakeAPI, Manager, Scheme
from ballast.runtime.client import APIServerClient
from tests.unit.internal.runtime.support import eventually, running

NAMESPACE = "ballast-system"
SWITCH = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": KILL_SWITCH_CONFIGMAP, "namespace": NAMESPACE}}


class NeverElected:
    """A leader elector that never wins: only runnables that need no leadership run."""

    def run(self, stop: object, started: object, stopped: object) -> None:
        stop.wait()  # type: ignore[attr-defined]


@pytest.fixture
def client(api: FakeAPI) -> APIServerClient:
    return api.client(scheme=add_to_scheme(Scheme()))


def _lane(client: APIServerClient, state: KillSwitchState) -> Manager:
    manager = new_manager(client, namespace=NAMESPACE, leader_elector=NeverElected())
    killswitch.setup(manager, state=state, options=OperatorOptions(operator_namespace=NAMESPACE))
    return manager


def _transitions(transition: str) -> float:
    total = 0.0
    for metric in KILL_SWITCH_TRANSITIONS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total") and sample.labels.get("transition") == transition:
                total += sample.value
    return total


def test_the_configmap_existing_activates_the_switch_on_a_replica_that_does_not_lead(client: APIServerClient) -> None:
    state = KillSwitchState()
    activated, deactivated = _transitions("activated"), _transitions("deactivated")
    with running(_lane(client, state)):
        assert not state.active
        client.create(SWITCH)
        eventually(lambda: state.active, "the switch on")
        assert state.reason == CONFIGMAP_REASON
        client.delete(SWITCH)
        eventually(lambda: not state.active, "the switch off")
    assert state.reason == ""
    assert (_transitions("activated") - activated, _transitions("deactivated") - deactivated) == (1, 1)


def test_a_configmap_of_another_name_or_namespace_is_ignored(client: APIServerClient) -> None:
    state = KillSwitchState()
    with running(_lane(client, state)):
        client.create({**SWITCH, "metadata": {"name": "something-else", "namespace": NAMESPACE}})
        client.create({**SWITCH, "metadata": {"name": KILL_SWITCH_CONFIGMAP, "namespace": "default"}})
        client.create({"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "BallastConfig",
                       "metadata": {"name": "ballast"}, "spec": {"identityLabels": ["app"]}})  # fmt: skip
        eventually(lambda: client.get("v1/ConfigMap", "something-else", NAMESPACE), "the objects stored")
    assert not state.active


def test_suspended_ballast_config_activates_and_both_reasons_are_named(client: APIServerClient) -> None:
    state = KillSwitchState()
    spec = {"identityLabels": ["app"], "suspended": True}
    config = client.create({"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "BallastConfig",
                            "metadata": {"name": "ballast"}, "spec": spec})  # fmt: skip
    with running(_lane(client, state)):
        eventually(lambda: state.active, "the switch on")
        assert state.reason == SUSPENDED_REASON
        client.create(SWITCH)
        eventually(lambda: state.reason == f"{CONFIGMAP_REASON} and {SUSPENDED_REASON}", "both reasons")
        client.delete(SWITCH)
        client.patch(config, {"spec": {"suspended": False}})
        eventually(lambda: not state.active, "the switch off")
