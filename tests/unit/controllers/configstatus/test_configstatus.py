"""The configuration status lanes (`configstatus-ballastconfig`, `configstatus-metricssource`) on the in-memory API
server: the `Valid` condition from the spec's problems, a Warning event and a log line once per change, nothing
written again while the condition is current."""

from __future__ import annotations

import datetime
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ballast.api.ballast.v1 import BallastConfig, MetricsSource
from ballast.api.scheme import add_to_scheme
from ballast.controllers import configstatus
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.operator import OperatorOptions
from ballast.runtime import FakeAPI, FakeClock, Scheme
from tests.unit.internal.runtime.support import eventually, running
from tests.unit.support import register_our_kinds

START = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
API_VERSION = "ballast.tightlinesoftware.com/v1"
BAD_POLL = 'spec.config.pollInterval: invalid duration "banana": must be a Go duration such as "60s", "15m" or "1h30m"'
BAD_KEY = 'spec.identityLabels[0]: invalid label key "not a label!!"'


@dataclass
class World:
    api: FakeAPI
    clock: FakeClock

    def create(self, kind: str, name: str, spec: dict[str, Any]) -> None:
        self.api.client().create({"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}, "spec": spec})

    def patch(self, kind: str, name: str, spec: dict[str, Any]) -> None:
        self.api.client().patch({"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}}, {"spec": spec})

    def valid(self, kind: type[BallastConfig] | type[MetricsSource], name: str) -> Any:
        obj = self.api.client(scheme=add_to_scheme(Scheme())).get(kind, name)
        return next((c for c in (obj.status.conditions if obj.status else None) or [] if c.type == "Valid"), None)

    def events(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.api.objects("v1/Event") if e["involvedObject"]["name"] == name]


@pytest.fixture
def world() -> Iterator[World]:
    clock = FakeClock(START)
    api = FakeAPI(clock=clock)
    register_our_kinds(api)
    manager = new_manager(api.client(scheme=add_to_scheme(Scheme())), namespace="ballast-system", clock=clock)
    controllers = configstatus.setup(manager, options=OperatorOptions(clock=clock))
    assert sorted(c.name for c in controllers) == ["configstatus-ballastconfig", "configstatus-metricssource"]
    with running(manager):
        yield World(api, clock)
    api.close()


def test_a_valid_source_and_config_get_valid_true(world: World) -> None:
    world.create("MetricsSource", "metrics", {"type": "kubernetesMetrics", "config": {"pollInterval": "5s"}})
    world.create("BallastConfig", "ballast", {"identityLabels": ["app.kubernetes.io/name"]})
    source = eventually(lambda: world.valid(MetricsSource, "metrics"), "the source's Valid condition")
    config = eventually(lambda: world.valid(BallastConfig, "ballast"), "the config's Valid condition")
    assert (source.status, source.reason, source.message) == ("True", "Valid", "the type and pollInterval are valid")
    assert (config.status, config.reason) == ("True", "Valid")
    assert source.observed_generation == 1
    assert world.events("metrics") == world.events("ballast") == []


def test_an_invalid_source_gets_valid_false_an_event_and_a_log_line(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    world.create("MetricsSource", "metrics", {"type": "bogus", "config": {"pollInterval": "banana"}})
    condition = eventually(lambda: world.valid(MetricsSource, "metrics"), "the source's Valid condition")
    assert (condition.status, condition.reason) == ("False", "InvalidSource")
    assert condition.message == (
        'spec.type: unknown type "bogus": must be one of kubernetesMetrics, kubeletSummary; ' + BAD_POLL
    )
    (event,) = eventually(lambda: world.events("metrics"), "the InvalidSource event")
    assert (event["type"], event["reason"], event["metadata"]["namespace"]) == ("Warning", "InvalidSource", "default")
    assert event["involvedObject"]["kind"] == "MetricsSource"
    assert event["message"] == (
        f'MetricsSource "metrics" is invalid: {condition.message}. '
        "Not polled: the profiles it feeds are not Ready until it is fixed."
    )
    # Logged by the reconciler's thread, which may still be on its way there when the event is read.
    eventually(
        lambda: any('MetricsSource "metrics" is invalid' in r.getMessage() for r in caplog.records), "the log line"
    )


def test_fixing_a_config_flips_the_condition_and_moves_its_transition_time(world: World) -> None:
    world.create("BallastConfig", "ballast", {"identityLabels": ["not a label!!", "app", "app"], "orphanTTL": "x"})
    invalid = eventually(lambda: world.valid(BallastConfig, "ballast"), "the config's Valid condition")
    assert (invalid.status, invalid.reason) == ("False", "InvalidConfig")
    assert invalid.message.startswith(BAD_KEY)
    assert 'spec.identityLabels[2]: label key "app" appears more than once' in invalid.message
    assert 'spec.orphanTTL: invalid duration "x"' in invalid.message
    (event,) = eventually(lambda: world.events("ballast"), "the InvalidConfig event")
    assert event["reason"] == "InvalidConfig"
    assert event["message"].endswith(". Not used: nothing is enrolled or re-keyed and no orphaned profile is deleted "
                                     "until it is fixed.")  # fmt: skip

    world.clock.advance(60)
    world.patch("BallastConfig", "ballast", {"identityLabels": ["app"], "orphanTTL": "1h"})
    fixed = eventually(
        lambda: (c := world.valid(BallastConfig, "ballast")) and c.status == "True" and c, "the condition to flip"
    )
    assert fixed.observed_generation == 2
    assert fixed.last_transition_time == START + datetime.timedelta(seconds=60)
    assert len(world.events("ballast")) == 1  # no event for a valid spec


def test_a_config_not_named_ballast_is_never_read_and_says_so(world: World) -> None:
    world.create("BallastConfig", "ballast-prod", {"identityLabels": ["app.kubernetes.io/name"]})
    condition = eventually(lambda: world.valid(BallastConfig, "ballast-prod"), "the config's Valid condition")
    assert (condition.status, condition.reason) == ("False", "InvalidConfig")
    assert condition.message == 'metadata.name: only the BallastConfig named "ballast" is read; "ballast-prod" never is'


def test_a_poll_interval_below_a_second_is_invalid(world: World) -> None:
    world.create("MetricsSource", "metrics", {"type": "kubernetesMetrics", "config": {"pollInterval": "1ns"}})
    condition = eventually(lambda: world.valid(MetricsSource, "metrics"), "the source's Valid condition")
    assert (condition.status, condition.reason) == ("False", "InvalidSource")
    assert condition.message == (
        'spec.config.pollInterval: invalid duration "1ns": must be at least 1s (the collector polls a source at '
        "most once a second)"
    )
