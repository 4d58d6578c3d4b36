"""A stored MetricsSource the collector cannot use — `pollInterval: banana`, `-5s`, `type: bogus` — is not polled,
and every profile it feeds says so in its `Ready` condition, whichever source's cycle writes the status; a stored
invalid BallastConfig gives no retention window (docs/design.md, difference 26)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from ballast.controllers.collector import MetricsCollector
from ballast.internal.collection.profile_ready import INVALID_SOURCE_REASON
from ballast.internal.metricsources import SOURCE_TYPES, FetchResult, UsageSample
from ballast.runtime import NotFoundError
from tests.unit.controllers.collector.support import API_VERSION, World, measured_by_two_sources

BANANA = 'spec.config.pollInterval: invalid duration "banana": must be a Go duration such as "60s", "15m" or "1h30m"'


def storage_sample(world: World) -> None:
    world.kubelet.answers.append(FetchResult([UsageSample("shop", "api-1", "app", "ephemeral-storage", 4096, 0)]))


def edit(world: World, kind: str, name: str, spec: dict[str, Any]) -> None:
    """Write a spec as one stored before validation existed may be (the fake API checks nothing), and wait until
    the cache holds it."""
    written = world.client.patch({"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}}, {"spec": spec})
    version = written["metadata"]["resourceVersion"]

    def cached() -> bool:
        try:
            return bool(
                world.manager.client.get(f"{API_VERSION}/{kind}", name)["metadata"]["resourceVersion"] == version
            )
        except NotFoundError:
            return False

    world.synced(cached, f"the edited {kind} cached")


def edit_source(world: World, name: str, spec: dict[str, Any]) -> None:
    edit(world, "MetricsSource", name, spec)


def pod_metrics_lists(world: World) -> int:
    return sum(1 for method, path in world.api.requests if method == "GET" and path.endswith("v1beta1/pods"))


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"config": {"pollInterval": "banana"}}, BANANA),
        ({"config": {"pollInterval": "-5s"}},
         'spec.config.pollInterval: invalid duration "-5s": must be longer than 0, such as "60s"'),
        ({"type": "bogus"}, 'spec.type: unknown type "bogus": must be one of kubernetesMetrics, kubeletSummary'),
    ],
    ids=["banana", "negative", "bogus-type"],
)  # fmt: skip
def test_an_invalid_source_is_not_polled_and_its_profiles_say_why_they_are_not_ready(
    world: World, spec: dict[str, Any], problem: str
) -> None:
    profile = measured_by_two_sources(world)
    storage_sample(world)
    world.cycle("kubelet")
    world.cycle("metrics")
    assert world.ready(profile)["status"] == "True"
    lists, writes = pod_metrics_lists(world), len(world.store.cycles)

    edit_source(world, "metrics", spec)
    world.clock.advance(120)
    result = world.cycle("metrics")

    assert result is not None
    assert result.requeue_after == (60.0 if "pollInterval" in spec.get("config", {}) else 120.0)
    assert pod_metrics_lists(world) == lists  # not polled
    assert len(world.store.cycles) == writes  # nothing written
    ready = world.ready(profile)
    assert (ready["status"], ready["reason"]) == ("False", INVALID_SOURCE_REASON)
    assert (
        ready["message"]
        == f'No samples in the latest collection cycle for: cpu; MetricsSource "metrics" is invalid: {problem}'
    )
    assert world.usage(profile, "app", "cpu")["samples"] == 1  # the history collected so far is still shown

    storage_sample(world)
    world.clock.advance(30)
    world.cycle("kubelet")  # another source's cycle judges cpu by its invalid owner too
    assert world.ready(profile)["reason"] == INVALID_SOURCE_REASON


def test_a_fixed_source_is_polled_again_and_its_profiles_become_ready(world: World) -> None:
    profile = measured_by_two_sources(world)
    edit_source(world, "metrics", {"config": {"pollInterval": "banana"}})
    storage_sample(world)
    world.cycle("kubelet")
    world.cycle("metrics")
    assert world.ready(profile)["reason"] == INVALID_SOURCE_REASON
    assert pod_metrics_lists(world) == 0

    edit_source(world, "metrics", {"config": {"pollInterval": "5s"}})
    result = world.cycle("metrics")

    assert result is not None
    assert result.requeue_after == pytest.approx(5.0)
    assert pod_metrics_lists(world) == 1
    assert world.ready(profile)["status"] == "True"


def test_a_fresh_leader_judges_an_invalid_source_it_never_polled(world: World) -> None:
    profile = measured_by_two_sources(world)
    edit_source(world, "metrics", {"type": "bogus"})
    plugins = {**SOURCE_TYPES, "kubeletSummary": lambda _: world.kubelet}
    world.collector = MetricsCollector(world.manager, world.store, world.kill_switch, world.options, plugins=plugins)
    storage_sample(world)

    world.cycle("kubelet")  # the first cycle of this process: "metrics" was never polled here

    ready = world.ready(profile)
    assert (ready["status"], ready["reason"]) == ("False", INVALID_SOURCE_REASON)
    assert ready["message"].startswith('No samples in the latest collection cycle for: cpu; MetricsSource "metrics"')


def test_an_invalid_ballast_config_applies_no_retention_window(world: World) -> None:
    measured_by_two_sources(world)
    world.cycle("metrics")
    assert world.store.cycles[-1].retention == datetime.timedelta(hours=168)

    edit(world, "BallastConfig", "ballast", {"identityLabels": ["not a label!!"]})
    world.clock.advance(120)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "210m"}})
    world.cycle("metrics")

    assert world.store.cycles[-1].retention is None
