"""The history store contract, run against both backends (SQLite, and Redis on a real redis-server)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballast.internal.history import Cycle, HistoryStore, Sample, Series, SeriesKey

T0 = 1_732_900_000_000  # epoch ms
HASH = "8746f67fe9f3d343"
OTHER = "b155686f88558bac"
CPU = SeriesKey(HASH, "app", "cpu")
MEMORY = SeriesKey(HASH, "app", "memory")
SIDECAR = SeriesKey(HASH, "envoy", "cpu")
ELSEWHERE = SeriesKey(OTHER, "app", "cpu")
MINUTE = 60_000
DAY = 86_400_000


def cycle(cycle_id: str, at_ms: int, *samples: tuple[SeriesKey, int], **options: object) -> Cycle:
    return Cycle(cycle_id, at_ms, [Sample(key, value) for key, value in samples], **options)  # type: ignore[arg-type]


def test_a_cycle_is_read_back_in_order_with_first_seen_and_times(store: HistoryStore) -> None:
    assert store.write_cycle(cycle("c1", T0, (CPU, 230), (MEMORY, 1 << 20), (CPU, 250), (SIDECAR, 5)))
    assert store.write_cycle(cycle("c2", T0 + MINUTE, (CPU, 240)))
    cpu, memory, sidecar = store.read_many([CPU, MEMORY, SIDECAR], with_times=True)
    assert cpu == Series(CPU, (230, 250, 240), T0, (T0 // 1000, T0 // 1000, (T0 + MINUTE) // 1000))
    assert memory == Series(MEMORY, (1 << 20,), T0, (T0 // 1000,))
    assert sidecar.values == (5,)
    assert store.read(CPU).times_s is None


def test_a_series_never_written_reads_empty(store: HistoryStore) -> None:
    assert store.read(CPU) == Series(CPU, (), None)
    assert store.read_many([]) == []


def test_a_retried_cycle_is_applied_once(store: HistoryStore) -> None:
    first = cycle("kubernetesMetrics/1", T0, (CPU, 1), (MEMORY, 2))
    assert store.write_cycle(first) is True
    assert store.write_cycle(first) is False
    # the id alone decides: a different payload under a used id is not applied either
    assert store.write_cycle(cycle("kubernetesMetrics/1", T0 + MINUTE, (CPU, 99))) is False
    assert store.read(CPU).values == (1,)
    assert store.read(MEMORY).values == (2,)


def test_an_empty_cycle_is_recorded(store: HistoryStore) -> None:
    assert store.write_cycle(Cycle("empty", T0)) is True
    assert store.write_cycle(Cycle("empty", T0)) is False
    assert store.read(CPU) == Series(CPU, (), None)


@pytest.mark.parametrize(
    ("batches", "reservoir", "expected"),
    [
        ([[1, 2, 3]], 5, (1, 2, 3)),
        ([[1, 2, 3], [4, 5, 6]], 5, (2, 3, 4, 5, 6)),
        ([[1, 2, 3, 4, 5, 6, 7]], 3, (5, 6, 7)),
        ([[1], [2], [3], [4]], 1, (4,)),
        ([[5, 5, 5], [5]], 10, (5, 5, 5, 5)),  # identical values are all kept
    ],
)
def test_the_reservoir_keeps_the_newest_samples(
    store: HistoryStore, batches: list[list[int]], reservoir: int, expected: tuple[int, ...]
) -> None:
    for n, values in enumerate(batches):
        store.write_cycle(cycle(f"c{n}", T0 + n * MINUTE, *((CPU, v) for v in values), reservoir_size=reservoir))
    series = store.read(CPU, with_times=True)
    assert series.values == expected
    assert series.first_seen_ms == T0  # trimming by count never moves first_seen (the Go operator's rule)
    assert series.times_s is not None
    assert len(series.times_s) == len(expected)


def test_without_retention_nothing_expires(store: HistoryStore) -> None:
    store.write_cycle(cycle("old", T0, (CPU, 1)))
    store.write_cycle(cycle("new", T0 + 400 * DAY, (CPU, 2)))
    assert store.read(CPU) == Series(CPU, (1, 2), T0)


def test_retention_drops_old_samples_and_moves_first_seen_to_the_window(store: HistoryStore) -> None:
    week = timedelta(days=7)
    for day in range(10):
        store.write_cycle(cycle(f"d{day}", T0 + day * DAY, (CPU, day), retention=week))
    series = store.read(CPU, with_times=True)
    # at day 9 the window starts at day 2: samples of days 0 and 1 are gone, first_seen is the window start
    assert series.values == (2, 3, 4, 5, 6, 7, 8, 9)
    assert series.first_seen_ms == T0 + 2 * DAY
    assert series.times_s == tuple((T0 + day * DAY) // 1000 for day in range(2, 10))


def test_a_sample_exactly_at_the_window_start_is_kept(store: HistoryStore) -> None:
    store.write_cycle(cycle("a", T0, (CPU, 1), retention=timedelta(hours=1)))
    store.write_cycle(cycle("b", T0 + 3_600_000, (CPU, 2), retention=timedelta(hours=1)))
    assert store.read(CPU) == Series(CPU, (1, 2), T0)


def test_a_series_whose_samples_all_expired_starts_over(store: HistoryStore) -> None:
    store.write_cycle(cycle("a", T0, (CPU, 1), retention=timedelta(days=1)))
    store.write_cycle(cycle("b", T0 + 3 * DAY, (CPU, 2), retention=timedelta(days=1)))
    assert store.read(CPU) == Series(CPU, (2,), T0 + 3 * DAY)


def test_a_busy_series_keeps_its_window_although_the_reservoir_holds_minutes(store: HistoryStore) -> None:
    # Readiness needs now - first_seen ≥ minTimeSpan: count trimming must not shrink the span to the reservoir.
    for minute in range(0, 3 * 24 * 60, 60):
        store.write_cycle(
            cycle(f"m{minute}", T0 + minute * MINUTE, (CPU, minute), reservoir_size=2, retention=timedelta(days=2))
        )
    series = store.read(CPU)
    assert series.values == (4200, 4260)  # the last two hourly samples
    assert series.first_seen_ms == T0 + (4260 - 48 * 60) * MINUTE  # the last cycle's time minus two days


def test_purge_removes_one_profiles_history_only(store: HistoryStore) -> None:
    store.write_cycle(cycle("c1", T0, (CPU, 1), (MEMORY, 2), (SIDECAR, 3), (ELSEWHERE, 4)))
    assert store.purge(HASH) == 3
    assert store.read_many([CPU, MEMORY, SIDECAR]) == [
        Series(CPU, (), None),
        Series(MEMORY, (), None),
        Series(SIDECAR, (), None),
    ]
    assert store.read(ELSEWHERE) == Series(ELSEWHERE, (4,), T0)
    assert store.purge(HASH) == 0
    # a purged profile that comes back starts a new history
    store.write_cycle(cycle("c2", T0 + DAY, (CPU, 5)))
    assert store.read(CPU) == Series(CPU, (5,), T0 + DAY)


@pytest.mark.parametrize("bad", ["*", "8746f67fe9f3d34", "8746F67FE9F3D343", "8746f67fe9f3d343:*"])
def test_purge_refuses_a_malformed_hash(store: HistoryStore, bad: str) -> None:
    store.write_cycle(cycle("c1", T0, (CPU, 1)))
    with pytest.raises(ValueError, match="16 lowercase hex"):
        store.purge(bad)
    assert store.read(CPU).values == (1,)


def test_ping(store: HistoryStore) -> None:
    store.ping()


def test_readers_see_whole_cycles_while_a_writer_writes(store: HistoryStore) -> None:
    """Every cycle writes one sample to each of two series: a reader must never see them differ in length."""
    errors: list[BaseException] = []
    done = threading.Event()
    seen: list[int] = []

    def read() -> None:
        try:
            while not done.is_set():
                cpu, memory = store.read_many([CPU, MEMORY])
                assert len(cpu.values) == len(memory.values)
                seen.append(len(cpu.values))
        except BaseException as exc:
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    for n in range(60):
        store.write_cycle(cycle(f"c{n}", T0 + n * MINUTE, (CPU, n), (MEMORY, n)))
    done.set()
    for reader in readers:
        reader.join(10)
    assert not errors, errors[0]
    assert seen, "the readers never ran"
    assert store.read(CPU).values == tuple(range(60))


# --- invariants: the store behaves like a plain list model (hypothesis) --------------------------------------


@dataclass
class _ModelSeries:
    samples: list[tuple[int, int]] = field(default_factory=list)  # (value, epoch s)
    first_seen_ms: int | None = None


def _apply(model: dict[SeriesKey, _ModelSeries], c: Cycle) -> None:
    cutoff = c.cutoff_ms
    for key, values in c.by_series().items():
        series = model.setdefault(key, _ModelSeries())
        if cutoff is not None:
            while series.samples and series.samples[0][1] * 1000 < cutoff:
                series.samples.pop(0)
        if cutoff is None:
            if series.first_seen_ms is None:
                series.first_seen_ms = c.at_ms
        elif series.first_seen_ms is None or series.first_seen_ms < cutoff:
            series.first_seen_ms = cutoff if series.samples else c.at_ms
        series.samples += [(value, c.at_s) for value in values]
        del series.samples[: -c.reservoir_size]


_hashes = (f"{n:016x}" for n in itertools.count(1))
_CONTAINERS = ["app", "envoy"]
_RESOURCES = ["cpu", "memory"]
_cycles = st.lists(
    st.tuples(
        st.sampled_from([0, 1, 999, 1000, MINUTE, 3_600_000, DAY, 3 * DAY]),  # time step from the previous cycle
        st.lists(st.tuples(st.integers(0, 3), st.integers(0, 10**12)), max_size=12),  # (series index, value)
        st.integers(1, 6),  # reservoir
        st.sampled_from([None, timedelta(seconds=1), timedelta(minutes=5), timedelta(days=1), timedelta(days=2)]),
        st.booleans(),  # replay the previous cycle (a retry) instead
    ),
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_cycles)
def test_store_matches_the_list_model(
    store: HistoryStore, steps: list[tuple[int, list[tuple[int, int]], int, timedelta | None, bool]]
) -> None:
    measurement_hash = next(_hashes)
    keys = [SeriesKey(measurement_hash, c, r) for c in _CONTAINERS for r in _RESOURCES]
    model: dict[SeriesKey, _ModelSeries] = {}
    at = T0
    previous: Cycle | None = None
    for n, (step, picks, reservoir, retention, replay) in enumerate(steps):
        if replay and previous is not None:
            assert store.write_cycle(previous) is False
            continue
        at += step
        c = Cycle(f"{measurement_hash}/{n}", at, [Sample(keys[i], v) for i, v in picks], reservoir, retention)
        assert store.write_cycle(c) is True
        _apply(model, c)
        previous = c
    for series in store.read_many(keys, with_times=True):
        expected = model.get(series.key, _ModelSeries())
        assert series.values == tuple(v for v, _ in expected.samples)
        assert series.times_s == tuple(t for _, t in expected.samples)
        assert series.first_seen_ms == expected.first_seen_ms
