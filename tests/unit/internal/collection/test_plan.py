"""A profile's work in one cycle: which owned series are read and recomputed, which keep their computation,
which leave the status — and the memory that carries computations from one cycle to the next."""

from __future__ import annotations

from typing import Any

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.api.ballast.v1.policyspec import ResourcePolicySpec
from ballast.internal.collection import (
    CollectionMemory,
    FedProfile,
    MeasuredProfile,
    PolicyView,
    ProfileMemory,
    RefreshPolicy,
    ResourceStatus,
    SeriesMemo,
    chunks,
    collected_in_latest_cycles,
    plan_status,
    profile_status,
    recompute,
)
from ballast.internal.history import Series, SeriesKey

HASH = "0123456789abcdef"
NOW_MS = 1_772_366_400_000
NOW = "2026-03-01T12:00:00Z"
CPU = {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "max"}
STORAGE = {"resource": "ephemeral-storage", "field": "request", "source": "kubelet", "aggregation": "max"}
EXACT = RefreshPolicy(stagger=False)
POLICY = PolicyView.from_spec(
    ResourcePolicySpec.model_validate(
        {"metrics": [CPU, STORAGE], "readiness": {"minDataPoints": 3, "minTimeSpan": "10m"}}
    )
)
ENTRY = ResourceStatus({"resource": "cpu", "samples": 3}, True, {"request": "5m"})


def fed(stamp: tuple[object, ...] = ("v1",)) -> FedProfile:
    profile = WorkloadProfile.model_validate({"metadata": {"name": "api--default", "uid": "u1"}})
    return FedProfile(profile, POLICY, MeasuredProfile("api--default", HASH, frozenset({"cpu"})), stamp, stamp)


def memo(*, accruing: bool = False, last_sample_ms: int = NOW_MS - 60_000, stamp: object = ("v1",)) -> SeriesMemo:
    made = EXACT.memo(
        SeriesKey(HASH, "app", "cpu"), count=1_000, accruing=accruing, stamp=stamp, now_ms=NOW_MS - 60_000,
        reason="samples", first_seen_ms=NOW_MS - 86_400_000,  # both gates open: an accruing memo is due
    )  # fmt: skip
    made.last_sample_ms = last_sample_ms
    return made


def test_a_policy_view_tells_accruing_series_by_the_count_and_time_gates() -> None:
    assert POLICY.min_data_points == 3
    assert POLICY.accruing(2, NOW_MS - 3_600_000, NOW_MS)
    assert POLICY.accruing(3, NOW_MS - 599_999, NOW_MS)
    assert not POLICY.accruing(3, NOW_MS - 600_000, NOW_MS)
    defaults = PolicyView.from_spec(ResourcePolicySpec.model_validate({"metrics": [CPU]}))
    assert (defaults.min_data_points, defaults.min_time_span_ns) == (500, 24 * 3600 * 10**9)


def test_due_series_are_read_and_the_others_kept() -> None:
    state = {"app": {"cpu": ENTRY}, "sidecar": {"cpu": ENTRY}, "quiet": {"cpu": ENTRY}, "other": {"cpu": ENTRY}}
    memos = {("app", "cpu"): memo(), ("sidecar", "cpu"): memo(accruing=True), ("quiet", "cpu"): memo()}
    observed = {("app", "cpu"): 1, ("sidecar", "cpu"): 1, ("new", "cpu"): 1, ("app", "ephemeral-storage"): 1}

    plan = plan_status(fed(), state, memos, observed, frozenset({"cpu"}), NOW_MS)

    assert plan.fresh == [("new", "cpu"), ("sidecar", "cpu")]
    assert plan.quiet == [("other", "cpu")]  # known from the status only: read with times
    assert plan.reasons == {("new", "cpu"): "new", ("sidecar", "cpu"): "accruing", ("other", "cpu"): "new"}
    assert plan.reused == 2  # app (sampled, not due) and quiet (not sampled, not stale)
    assert plan.keys() == (
        [SeriesKey(HASH, "new", "cpu"), SeriesKey(HASH, "sidecar", "cpu")],
        [SeriesKey(HASH, "other", "cpu")],
    )


def test_a_quiet_series_known_stale_leaves_without_a_read_unless_the_policy_changed() -> None:
    stale = NOW_MS - 601_000
    state = {"old": {"cpu": ENTRY}, "app": {"cpu": ENTRY}}
    memos = {("old", "cpu"): memo(last_sample_ms=stale), ("app", "cpu"): memo()}

    plan = plan_status(fed(), state, memos, {("app", "cpu"): 1}, frozenset({"cpu"}), NOW_MS)

    assert (plan.fresh, plan.quiet) == ([], [])
    assert plan.state == {"app": {"cpu": ENTRY}}
    assert list(plan.memos) == [("app", "cpu")]
    changed = plan_status(fed(("v2",)), {"old": {"cpu": ENTRY}}, {("old", "cpu"): memo(last_sample_ms=stale)}, {},
                          frozenset({"cpu"}), NOW_MS)  # fmt: skip
    assert changed.quiet == [("old", "cpu")]


def test_recomputing_updates_the_entry_and_its_memo() -> None:
    key = SeriesKey(HASH, "app", "cpu")
    plan = plan_status(fed(), {}, {}, {("app", "cpu"): 3}, frozenset({"cpu"}), NOW_MS)
    series = {key: Series(key, (5, 6, 7), NOW_MS - 700_000)}

    recompute(plan, series, EXACT, NOW_MS, NOW)

    entry = plan.state["app"]["cpu"]
    assert (entry.ready, dict(entry.recommendation), entry.usage["samples"]) == (True, {"request": "7m"}, 3)
    made = plan.memos[("app", "cpu")]
    assert (made.count, made.accruing, made.stamp, made.computed_ms, made.refresh_after) == (3, False, ("v1",),
                                                                                            NOW_MS, 1)  # fmt: skip


def test_an_accruing_series_keeps_its_running_statistics_and_a_ready_one_lets_them_go() -> None:
    key = SeriesKey(HASH, "app", "cpu")
    plan = plan_status(fed(), {}, {}, {("app", "cpu"): 2}, frozenset({"cpu"}), NOW_MS)
    recompute(plan, {key: Series(key, (5, 9), NOW_MS - 700_000)}, EXACT, NOW_MS, NOW)
    accruing = plan.memos[("app", "cpu")]
    assert accruing.accruing  # 2 samples, below minDataPoints 3
    assert accruing.running is not None
    accruing.saw_samples(2, NOW_MS + 60_000)  # the cycle's write: the count gate may open

    later = plan_status(fed(), plan.state, plan.memos, {("app", "cpu"): 2}, frozenset({"cpu"}), NOW_MS + 60_000)
    recompute(later, {key: Series(key, (5, 9, 3, 12), NOW_MS - 700_000)}, EXACT, NOW_MS + 60_000, NOW)

    entry, ready = later.state["app"]["cpu"], later.memos[("app", "cpu")]
    assert (entry.usage["samples"], dict(entry.recommendation)) == (4, {"request": "12m"})
    assert not ready.accruing
    assert ready.running is None


def test_keep_sorted_holds_a_ready_series_sorted_values_and_its_next_refresh_gives_the_fresh_statistics() -> None:
    key = SeriesKey(HASH, "app", "cpu")
    keeping = RefreshPolicy(stagger=False, keep_sorted=True)
    plan = plan_status(fed(), {}, {}, {("app", "cpu"): 4}, frozenset({"cpu"}), NOW_MS)
    recompute(plan, {key: Series(key, (5, 9, 3, 12), NOW_MS - 700_000)}, keeping, NOW_MS, NOW)
    ready = plan.memos[("app", "cpu")]
    assert not ready.accruing
    assert ready.running is not None

    ready.saw_samples(2, NOW_MS + 60_000)  # 2 new samples: past `min_new_fraction` of 4, so recomputed
    later = plan_status(fed(), plan.state, plan.memos, {("app", "cpu"): 2}, frozenset({"cpu"}), NOW_MS + 60_000)
    recompute(later, {key: Series(key, (5, 9, 3, 12, 20, 1), NOW_MS - 700_000)}, keeping, NOW_MS + 60_000, NOW)
    fresh = plan_status(fed(), {}, {}, {("app", "cpu"): 6}, frozenset({"cpu"}), NOW_MS + 60_000)
    recompute(fresh, {key: Series(key, (5, 9, 3, 12, 20, 1), NOW_MS - 700_000)}, EXACT, NOW_MS + 60_000, NOW)

    assert later.reasons == {("app", "cpu"): "samples"}
    assert later.memos[("app", "cpu")].running is ready.running  # the same sorted copy, grown
    assert later.state["app"]["cpu"] == fresh.state["app"]["cpu"]
    assert dict(later.state["app"]["cpu"].recommendation) == {"request": "20m"}


def test_a_quiet_series_read_back_is_dated_by_its_newest_sample_or_dropped_when_stale() -> None:
    state = {"app": {"cpu": ENTRY}, "old": {"cpu": ENTRY}}
    plan = plan_status(fed(), state, {}, {}, frozenset({"cpu"}), NOW_MS)
    app, old = SeriesKey(HASH, "app", "cpu"), SeriesKey(HASH, "old", "cpu")
    now_s = NOW_MS // 1000
    series = {app: Series(app, (5, 6, 7), NOW_MS - 700_000, (now_s - 200, now_s - 120, now_s - 61)),
              old: Series(old, (1,), NOW_MS - 700_000, (now_s - 601,))}  # fmt: skip

    recompute(plan, series, EXACT, NOW_MS, NOW)

    assert list(plan.state) == ["app"]
    assert plan.memos[("app", "cpu")].last_sample_ms == (now_s - 61) * 1000


def test_chunks_keep_a_profile_together_and_read_about_64_series_each() -> None:
    plans = [plan_status(fed(), {}, {}, {(f"c{i}", "cpu"): 1 for i in range(30)}, frozenset({"cpu"}), NOW_MS)
             for _ in range(5)]  # fmt: skip
    assert [len(chunk) for chunk in chunks(plans)] == [3, 2]


def test_the_memory_counts_samples_into_remembered_memos_and_reports_the_threshold_flip() -> None:
    memory = CollectionMemory()
    remembered = memo()
    applied = ProfileMemory("u1", {"app": {"cpu": ENTRY}}, {("app", "cpu"): remembered}, False, {"status": {}})
    assert memory.remember("api", applied, cached_meets_threshold=False) is False
    memory.samples_written({"api": {("app", "cpu"): 10, ("app", "memory"): 10}, "gone": {("app", "cpu"): 1}}, NOW_MS)
    assert (remembered.written, remembered.last_sample_ms) == (10, NOW_MS)
    assert memory.profile("api", "u2") is None
    found = memory.profile("api", "u1")
    assert found is not None
    state, memos = found.working_copy()
    state["app"].clear()
    assert found.state == {"app": {"cpu": ENTRY}}
    assert memos[("app", "cpu")] is remembered

    met = ProfileMemory("u1", {}, {}, True)
    assert memory.remember("api", met, cached_meets_threshold=False) is True
    assert memory.remember("api", met, cached_meets_threshold=False) is False
    assert memory.remember("web", met, cached_meets_threshold=True) is False  # the cached status already said so
    memory.keep_only({"web"})
    assert memory.profile("api", "u1") is None


def test_ready_judges_each_resource_by_its_own_source_and_a_fresh_leader_keeps_the_condition() -> None:
    def judge(delivered: dict[str, frozenset[str] | None], previous: dict[str, Any] | None) -> list[bool]:
        collected = collected_in_latest_cycles(POLICY, "metrics", frozenset({"cpu"}), delivered,
                                               frozenset({"kubelet"}), previous)  # fmt: skip
        return [collected("cpu"), collected("ephemeral-storage")]

    assert judge({"kubelet": frozenset({"ephemeral-storage"})}, None) == [True, True]
    assert judge({"kubelet": frozenset()}, None) == [True, False]
    assert judge({}, None) == [True, False]  # not polled yet, no condition to go by
    assert judge({}, {"status": "True"}) == [True, True]
    missing = {"status": "False", "message": "No samples in the latest collection cycle for: ephemeral-storage"}
    assert judge({}, missing) == [True, False]


def test_a_plan_that_changes_nothing_reuses_the_status_assembled_last_time() -> None:
    state = {"app": {"cpu": ENTRY}}
    quiet = plan_status(fed(), state, {("app", "cpu"): memo()}, {("app", "cpu"): 1}, frozenset({"cpu"}), NOW_MS)
    assert not quiet.changed
    status = profile_status(quiet.state, POLICY)
    remembered = ProfileMemory("u1", state, quiet.memos, False, None, status, ("v1",))
    assert remembered.status_if_unchanged(quiet) is status
    assert remembered.status_if_unchanged(plan_status(fed(("v2",)), state, {}, {}, frozenset({"cpu"}), NOW_MS)) is None
    # Another source's cycle under the same policy (its own stamp, the same policy stamp) reuses it too.
    other = FedProfile(fed().profile, POLICY, fed().measured, ("v1", "kubelet"), ("v1",))
    assert remembered.status_if_unchanged(plan_status(other, state, {}, {}, frozenset(), NOW_MS)) is status
    due = plan_status(fed(), state, {("app", "cpu"): memo(accruing=True)}, {("app", "cpu"): 1}, frozenset({"cpu"}),
                      NOW_MS)  # fmt: skip
    assert due.changed
    assert remembered.status_if_unchanged(due) is None
    # New ceilings (a larger node ran the pods) reassemble it: a value left out may now be applied (difference 25).
    assert remembered.status_if_unchanged(quiet, {}) is status
    assert remembered.status_if_unchanged(quiet, {"cpu": 4000}) is None
