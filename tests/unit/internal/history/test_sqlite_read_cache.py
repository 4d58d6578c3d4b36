"""SQLite's read cache: a cached store reads exactly what an uncached one reads from the same file, whatever was
appended, trimmed by the reservoir or the retention window, or purged in between — also when another store
object (another process) writes the file."""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballast.internal.history import Cycle, Sample, SeriesKey, SQLiteHistoryStore

T0 = 1_732_900_000_000
HASH = "8746f67fe9f3d343"
KEYS = [SeriesKey(HASH, "app", "cpu"), SeriesKey(HASH, "app", "memory"), SeriesKey("0123456789abcdef", "db", "cpu")]

# One step: ("write", samples per key, reservoir, retention in minutes or None) or ("purge", hash) or ("read",).
steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("write"),
            st.lists(st.integers(0, 3), min_size=len(KEYS), max_size=len(KEYS)),
            st.integers(1, 8),
            st.one_of(st.none(), st.integers(1, 5)),
        ),
        st.tuples(st.just("purge"), st.sampled_from([HASH, "0123456789abcdef"])),
        st.tuples(st.just("read")),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(steps)
def test_a_cached_read_equals_an_uncached_one_after_any_writes_trims_and_purges(script: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "h.db"
        with (
            SQLiteHistoryStore(path, read_cache_samples=1_000) as cached,
            SQLiteHistoryStore(path) as plain,
            SQLiteHistoryStore(path) as writer,
        ):
            last: dict[SeriesKey, tuple[int, ...]] = {}
            for n, step in enumerate(script):
                at_ms = T0 + n * 60_000
                if step[0] == "write":
                    _, counts, reservoir, retention = step
                    samples = [
                        Sample(key, n * 10 + i) for key, count in zip(KEYS, counts, strict=True) for i in range(count)
                    ]
                    window = timedelta(minutes=retention) if retention else None
                    writer.write_cycle(Cycle(f"c{n}", at_ms, samples, reservoir_size=reservoir, retention=window))
                elif step[0] == "purge":
                    writer.purge(step[1])
                read = cached.read_many(KEYS, with_times=True)
                assert read == plain.read_many(KEYS, with_times=True)
                for series in read:  # grown from what the last read handed out (before this step's write), or not said
                    assert series.grown_from is None or series.grown_from is last.get(series.key)
                last = {series.key: series.values for series in cached.read_many(KEYS)}
                assert list(last.values()) == [series.values for series in plain.read_many(KEYS)]


def test_a_second_read_fetches_only_the_new_rows(tmp_path: Path) -> None:
    key = KEYS[0]
    with SQLiteHistoryStore(tmp_path / "h.db", read_cache_samples=100) as store:
        store.write_cycle(Cycle("c1", T0, [Sample(key, v) for v in (1, 2, 3)], reservoir_size=4))
        assert store.read(key).values == (1, 2, 3)
        store.write_cycle(Cycle("c2", T0 + 1, [Sample(key, v) for v in (4, 5)], reservoir_size=4))
        statements: list[str] = []
        store._connection().set_trace_callback(statements.append)
        assert store.read(key, with_times=True).values == (2, 3, 4, 5)
        fetched = [s for s in statements if "FROM samples" in s and "ORDER BY id" in s]
        assert len(fetched) == 1
        assert "AND id >= 3 " in fetched[0]  # from the last cached row on: no whole-series read
        assert len([s for s in statements if s.lstrip().startswith("SELECT")]) == 2  # with the series' row


def test_a_series_larger_than_the_cache_is_read_whole_each_time(tmp_path: Path) -> None:
    key = KEYS[0]
    with SQLiteHistoryStore(tmp_path / "h.db", read_cache_samples=2) as store:
        store.write_cycle(Cycle("c1", T0, [Sample(key, v) for v in (1, 2, 3)]))
        assert store.read(key).values == (1, 2, 3)
        store.write_cycle(Cycle("c2", T0 + 1, [Sample(key, 4)]))
        assert store.read(key).values == (1, 2, 3, 4)


def test_a_negative_cache_size_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="read_cache_samples -1"):
        SQLiteHistoryStore(tmp_path / "h.db", read_cache_samples=-1)


def test_a_read_that_only_appended_names_the_values_it_grew_from(tmp_path: Path) -> None:
    key = KEYS[0]
    with SQLiteHistoryStore(tmp_path / "h.db", read_cache_samples=100) as store:
        store.write_cycle(Cycle("c1", T0, [Sample(key, v) for v in (1, 2)], reservoir_size=3))
        first = store.read(key)
        assert first.grown_from is None  # nothing cached before
        store.write_cycle(Cycle("c2", T0 + 1, [Sample(key, 3)], reservoir_size=3))
        second = store.read(key)
        assert (second.values, second.grown_from) == ((1, 2, 3), (1, 2))
        assert second.grown_from is first.values
        store.write_cycle(Cycle("c3", T0 + 2, [Sample(key, 4)], reservoir_size=3))
        assert store.read(key).grown_from is None  # the reservoir pushed 1 out: not an append
    with SQLiteHistoryStore(tmp_path / "h.db") as uncached:
        assert uncached.read(key).grown_from is None
