"""The status half of a cycle in order: plan, read a chunk, recompute, assemble — and the memory kept in step."""

from __future__ import annotations

import datetime

import pytest

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.api.ballast.v1.policyspec import ResourcePolicySpec
from ballast.internal.collection import (
    CollectionCycle,
    CollectionMemory,
    FedProfile,
    MeasuredProfile,
    PolicyView,
    RefreshPolicy,
    StatusRun,
    StatusWrite,
)
from ballast.internal.history import Series, SeriesKey

HASH = "0123456789abcdef"
NOW = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
NOW_MS = int(NOW.timestamp() * 1000)
POLICY = PolicyView.from_spec(
    ResourcePolicySpec.model_validate({
        "metrics": [{"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "max"}],
        "readiness": {"minDataPoints": 3, "minTimeSpan": "10m"},
    })
)  # fmt: skip
KEY = SeriesKey(HASH, "app", "cpu")


def cycle() -> CollectionCycle:
    profile = WorkloadProfile.model_validate({"metadata": {"name": "api--default", "uid": "u1"}})
    fed = FedProfile(profile, POLICY, MeasuredProfile("api--default", HASH, frozenset({"cpu"})), ("v1",))
    made = CollectionCycle("metrics", NOW, [fed])
    made.attribution.observed = {"api--default": {("app", "cpu"): 3}}
    return made


def run_once(memory: CollectionMemory) -> tuple[StatusRun, list[StatusWrite], list[SeriesKey]]:
    """One cycle's status half; returns the run, its writes and the series it read."""
    run = StatusRun([cycle()], memory, RefreshPolicy(stagger=False), {"metrics"})
    writes: list[StatusWrite] = []
    read: list[SeriesKey] = []
    for reads in run.reads():
        read += reads.without_times + reads.with_times
        writes += run.statuses(reads, {KEY: Series(KEY, (5, 6, 7), NOW_MS - 700_000)})
    return run, writes, read


def test_a_cycle_yields_each_profiles_apply_body_and_remembers_what_was_applied() -> None:
    memory = CollectionMemory()
    run, writes, read = run_once(memory)

    assert read == [KEY]
    [write] = writes
    assert write.changed
    status = write.body["status"]
    assert (status["meetsThreshold"], status["state"]) == (True, "Sufficient")
    assert status["containers"][0]["recommendations"] == {"cpu": {"request": "7m"}}
    [ready] = status["conditions"]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "True", "SamplesCollected")
    assert run.summary(writes) == {
        "series_recomputed": {"new": 1},
        "series_reused": 0,
        "statuses_written": 1,
        "statuses_unchanged": 0,
    }
    assert run.applied(write) is True  # meetsThreshold just became true
    remembered = memory.profile("api--default", "u1")
    assert remembered is not None
    assert remembered.body == write.body


def test_a_status_not_applied_is_not_remembered_and_an_unchanged_one_is_not_written_again() -> None:
    memory = CollectionMemory()
    run, [write], _ = run_once(memory)
    assert memory.profile("api--default", "u1") is None  # the caller has not applied it yet

    run.applied(write)
    again, [same], read = run_once(memory)
    assert read == []  # no sample written since: the last computation stands
    assert not same.changed
    assert again.summary([same])["series_reused"] == 1
    assert again.applied(same) is False  # the threshold was already met


TWO_SOURCES = PolicyView.from_spec(
    ResourcePolicySpec.model_validate({
        "metrics": [
            {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "max"},
            {"resource": "ephemeral-storage", "field": "request", "source": "kubelet", "aggregation": "max"},
        ],
        "readiness": {"minDataPoints": 3, "minTimeSpan": "10m"},
    })
)  # fmt: skip
STORAGE_KEY = SeriesKey(HASH, "app", "ephemeral-storage")


def source_cycle(source: str, resource: str, generation: int) -> CollectionCycle:
    profile = WorkloadProfile.model_validate({"metadata": {"name": "api--default", "uid": "u1"}})
    measured = MeasuredProfile("api--default", HASH, frozenset({resource}))
    fed = FedProfile(profile, TWO_SOURCES, measured, (HASH, "policy-1", source, generation), (HASH, "policy-1"))
    made = CollectionCycle(source, NOW, [fed])
    made.attribution.observed = {"api--default": {("app", resource): 3}}
    return made


def run_together(memory: CollectionMemory, *, kubelet_generation: int = 1) -> tuple[StatusRun, list[StatusWrite]]:
    cycles = [source_cycle("metrics", "cpu", 1), source_cycle("kubelet", "ephemeral-storage", kubelet_generation)]
    run = StatusRun(cycles, memory, RefreshPolicy(stagger=False), {"metrics", "kubelet"})
    series = {
        KEY: Series(KEY, (5, 6, 7), NOW_MS - 700_000),
        STORAGE_KEY: Series(STORAGE_KEY, (4096,) * 3, NOW_MS - 700_000),
    }
    writes = [write for reads in run.reads() for write in run.statuses(reads, series)]
    for write in writes:
        run.applied(write)
    return run, writes


def test_sources_collected_together_give_each_profile_one_status_with_both_and_keep_their_own_stamps() -> None:
    memory = CollectionMemory()
    run, [write] = run_together(memory)

    [container] = write.body["status"]["containers"]
    assert [u["resource"] for u in container["usageStats"]] == ["cpu", "ephemeral-storage"]
    [ready] = write.body["status"]["conditions"]
    assert (ready["status"], ready["reason"]) == ("True", "SamplesCollected")
    assert run.summary([write])["series_recomputed"] == {"new": 2}
    # Each series' computation is stamped with its own source: the next cycle recomputes neither (a stamp mixed
    # up would read as a policy change)...
    again, _ = run_together(memory)
    assert again.summary([])["series_recomputed"] == {}
    assert again.summary([])["series_reused"] == 2
    # ...and a change of one source's spec recomputes its series only.
    changed, _ = run_together(memory, kubelet_generation=2)
    assert changed.summary([])["series_recomputed"] == {"policy": 1}
    assert [plan.reasons for plan in changed.plans] == [{("app", "ephemeral-storage"): "policy"}]


def test_a_status_run_takes_the_cycles_of_one_time() -> None:
    later = source_cycle("kubelet", "ephemeral-storage", 1)
    later.now = NOW + datetime.timedelta(seconds=1)
    with pytest.raises(ValueError, match="cycles of one time"):
        StatusRun([source_cycle("metrics", "cpu", 1), later], CollectionMemory(), RefreshPolicy(), {"metrics"})
