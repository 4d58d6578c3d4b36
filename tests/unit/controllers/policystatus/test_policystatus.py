"""The policy status lanes (`policystatus-cluster`, `policystatus-namespaced`) on the in-memory API server:
`status.profileDiscriminator` and the `Valid` condition from the policy's regex, selector and quantity
problems, with `lastTransitionTime` moving only when the condition's status does."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ballast.api.ballast.v1 import ClusterResourcePolicy, ResourcePolicy
from ballast.api.scheme import add_to_scheme
from ballast.controllers import policystatus
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.naming import policy_discriminator
from ballast.internal.operator import OperatorOptions
from ballast.runtime import Client, FakeAPI, FakeClock, Scheme
from tests.unit.internal.runtime.support import eventually, running
from tests.unit.support import register_our_kinds

START = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
API_VERSION = "ballast.tightlinesoftware.com/v1"
VALID_MESSAGE = "the policy's selectors, regexes and quantities are valid"
BAD_REGEX = {"namespaces": {"include": ["/(/"]}}
BAD_REGEX_PROBLEM = 'spec.selector.namespaces.include[0]: invalid regex "/(/"'
BAD_FLOOR_PROBLEM = 'spec.readiness.cvMeanFloor[memory]: invalid quantity "lots"'
Policy = ClusterResourcePolicy | ResourcePolicy


@dataclass
class World:
    client: Client
    clock: FakeClock

    def status(self, name: str, namespace: str | None = None) -> Any:
        policy: Policy = (
            self.client.get(ResourcePolicy, name, namespace)
            if namespace
            else self.client.get(ClusterResourcePolicy, name)
        )
        return policy.status

    def valid(self, name: str, namespace: str | None = None) -> Any:
        """The policy's Valid condition, or None."""
        status = self.status(name, namespace)
        return next((c for c in (status.conditions if status else None) or [] if c.type == "Valid"), None)

    def generation(self, name: str) -> int:
        policy: ClusterResourcePolicy = self.client.get(ClusterResourcePolicy, name)
        return policy.metadata.generation or 0


@pytest.fixture
def world() -> Iterator[World]:
    clock = FakeClock(START)
    api = FakeAPI(clock=clock)
    register_our_kinds(api)
    client = api.client(scheme=add_to_scheme(Scheme()), field_owner="tests")
    manager = new_manager(api.client(scheme=add_to_scheme(Scheme())), namespace="ballast-system", clock=clock)
    controllers = policystatus.setup(manager, options=OperatorOptions(clock=clock))
    assert sorted(c.name for c in controllers) == ["policystatus-cluster", "policystatus-namespaced"]
    with running(manager):
        yield World(client, clock)
    api.close()


def _crp(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "ClusterResourcePolicy", "metadata": {"name": name}, "spec": spec}


def _condition_is(world: World, name: str, status: str, reason: str, namespace: str | None = None) -> bool:
    valid = world.valid(name, namespace)
    return valid is not None and (valid.status, valid.reason) == (status, reason)


def test_a_valid_cluster_policy_gets_its_discriminator_and_valid_true(world: World) -> None:
    world.client.create(_crp("fleet", priority=5))
    eventually(lambda: _condition_is(world, "fleet", "True", "Valid"), what="fleet's Valid condition")
    status = world.status("fleet")
    assert status.profile_discriminator == "fleet-9aa5ac7c"  # the Go operator's discriminator for this policy
    assert [c.type for c in status.conditions] == ["Valid"]
    valid = world.valid("fleet")
    assert valid.message == VALID_MESSAGE
    assert valid.last_transition_time == START
    assert valid.observed_generation == 1


def test_a_spec_edit_that_keeps_the_policy_valid_still_moves_observed_generation(world: World) -> None:
    world.client.create(_crp("fleet", priority=5))
    eventually(lambda: _condition_is(world, "fleet", "True", "Valid"), what="fleet's Valid condition")
    world.clock.advance(60)
    world.client.patch(_crp("fleet"), {"spec": {"priority": 6}})
    eventually(lambda: world.valid("fleet").observed_generation == world.generation("fleet") == 2, what="gen 2")
    assert world.valid("fleet").last_transition_time == START  # still valid: the time it became so stays


def test_a_namespaced_policy_gets_the_discriminator_of_its_namespace_and_name(world: World) -> None:
    body = {"apiVersion": API_VERSION, "kind": "ResourcePolicy", "metadata": {"name": "local", "namespace": "team"},
            "spec": {"priority": 1}}  # fmt: skip
    world.client.create(body)
    eventually(lambda: _condition_is(world, "local", "True", "Valid", "team"), what="local's Valid condition")
    discriminator = world.status("local", "team").profile_discriminator
    assert discriminator == policy_discriminator("ResourcePolicy", "team", "local") == "local-87a17b0c"
    assert discriminator != policy_discriminator("ClusterResourcePolicy", "", "local")


def test_a_bad_regex_makes_the_policy_invalid_naming_the_field_and_fixing_it_flips_back(world: World) -> None:
    world.client.create(_crp("broken", selector=BAD_REGEX))
    eventually(lambda: _condition_is(world, "broken", "False", "InvalidPolicy"), what="broken to be invalid")
    valid = world.valid("broken")
    assert valid.message.startswith(BAD_REGEX_PROBLEM)
    assert valid.last_transition_time == START
    assert world.status("broken").profile_discriminator == policy_discriminator("ClusterResourcePolicy", "", "broken")

    world.clock.advance(600)
    world.client.patch(_crp("broken"), {"spec": {"selector": {"namespaces": {"include": ["/^team-/"]}}}})
    eventually(lambda: _condition_is(world, "broken", "True", "Valid"), what="the fixed policy to be valid")
    valid = world.valid("broken")
    assert valid.message == VALID_MESSAGE
    assert valid.last_transition_time == START + datetime.timedelta(seconds=600)  # the status flipped
    assert valid.observed_generation == world.generation("broken") == 2


def test_every_problem_is_listed_and_the_time_is_kept_while_the_policy_stays_invalid(world: World) -> None:
    world.client.create(_crp("messy", selector=BAD_REGEX, readiness={"cvMeanFloor": {"memory": "lots"}}))
    eventually(lambda: _condition_is(world, "messy", "False", "InvalidPolicy"), what="messy to be invalid")
    problems = world.valid("messy").message.split("; ")
    assert len(problems) == 2
    assert problems[0].startswith(BAD_REGEX_PROBLEM)
    assert problems[1].startswith(BAD_FLOOR_PROBLEM)

    # Another problem, still invalid: the message follows, lastTransitionTime stays at the flip to False.
    world.clock.advance(600)
    label_selector = {"matchExpressions": [{"key": "tier", "operator": "Near", "values": ["gold"]}]}
    spec = {"selector": {"namespaces": None, "labelSelector": label_selector}, "readiness": None}
    world.client.patch(_crp("messy"), {"spec": spec})
    expected = "spec.selector.labelSelector.matchExpressions[0]: operator 'Near' is not one of"
    eventually(lambda: world.valid("messy").message.startswith(expected), what="the message to follow the spec")
    valid = world.valid("messy")
    assert "; " not in valid.message
    assert valid.status == "False"
    assert valid.last_transition_time == START
    assert valid.observed_generation == world.generation("messy") == 2


def test_a_status_overwritten_by_someone_else_is_restored_keeping_its_time(world: World) -> None:
    world.client.create(_crp("fleet"))
    eventually(lambda: _condition_is(world, "fleet", "True", "Valid"), what="fleet's Valid condition")
    world.clock.advance(3600)
    written = world.valid("fleet").model_dump(by_alias=True, mode="json", exclude_none=True)

    world.client.status().patch(_crp("fleet"), {"status": {"profileDiscriminator": "x"}})
    eventually(lambda: world.status("fleet").profile_discriminator == "fleet-9aa5ac7c", what="the discriminator")

    tampered = {**written, "message": "edited by hand"}
    world.client.status().patch(_crp("fleet"), {"status": {"conditions": [tampered]}})
    eventually(lambda: world.valid("fleet").message == VALID_MESSAGE, what="the condition restored")
    assert world.valid("fleet").last_transition_time == START  # rewritten with the same status: the time is kept
