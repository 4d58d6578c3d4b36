"""SQLite specifics: WAL, schema versioning, locks as unavailability, durability across reopen, threads."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.history import (
    Cycle,
    Sample,
    Series,
    SeriesKey,
    SQLiteHistoryStore,
    StoreError,
    StoreUnavailableError,
)

T0 = 1_732_900_000_000
CPU = SeriesKey("8746f67fe9f3d343", "app", "cpu")


def test_the_file_is_in_wal_mode_with_a_schema_version(tmp_path: Path) -> None:
    SQLiteHistoryStore(tmp_path / "h.db").close()
    raw = sqlite3.connect(tmp_path / "h.db")
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
    raw.close()


@pytest.mark.parametrize(("durable", "synchronous"), [(True, 2), (False, 1)])  # FULL: fsync per commit; NORMAL
def test_a_store_is_durable_at_each_commit_unless_opened_as_throw_away(
    tmp_path: Path, durable: bool, synchronous: int
) -> None:
    with SQLiteHistoryStore(tmp_path / "h.db", durable=durable) as store:
        store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)]))
        assert store._connection().execute("PRAGMA synchronous").fetchone()[0] == synchronous
    with SQLiteHistoryStore(tmp_path / "h.db") as reopened:
        assert reopened.read(CPU).values == (1,)


def test_history_survives_reopening(tmp_path: Path) -> None:
    with SQLiteHistoryStore(tmp_path / "h.db") as store:
        store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1), Sample(CPU, 2)]))
    with SQLiteHistoryStore(tmp_path / "h.db") as store:
        assert store.read(CPU) == Series(CPU, (1, 2), T0)
        assert store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)])) is False  # cycle ids are durable too


def test_refuses_a_newer_schema(tmp_path: Path) -> None:
    SQLiteHistoryStore(tmp_path / "h.db").close()
    raw = sqlite3.connect(tmp_path / "h.db")
    raw.execute("PRAGMA user_version = 7")
    raw.close()
    with pytest.raises(StoreError, match="history schema version 7; this ballast reads version 1"):
        SQLiteHistoryStore(tmp_path / "h.db")


def test_refuses_a_foreign_database(tmp_path: Path) -> None:
    raw = sqlite3.connect(tmp_path / "app.db")
    raw.execute("CREATE TABLE users (id INTEGER)")
    raw.close()
    with pytest.raises(StoreError, match="not a ballast history store"):
        SQLiteHistoryStore(tmp_path / "app.db")


def test_a_missing_directory_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailableError, match="unable to open database file"):
        SQLiteHistoryStore(tmp_path / "absent" / "h.db")


def test_a_held_write_lock_is_unavailable_and_the_cycle_can_be_retried(tmp_path: Path) -> None:
    store = SQLiteHistoryStore(tmp_path / "h.db", busy_timeout=0.2)
    holder = sqlite3.connect(tmp_path / "h.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreUnavailableError, match="database is locked"):
        store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)]))
    assert store.read(CPU) == Series(CPU, (), None)  # readers are not blocked by the writer (WAL)
    holder.execute("ROLLBACK")
    holder.close()
    assert store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)])) is True
    assert store.read(CPU).values == (1,)
    store.close()


def raised_on_another_thread(call: Callable[[], object]) -> list[BaseException]:
    """What `call` raised when run on a thread of its own (empty when it returned)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # handed to the test, which asserts on it
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return errors


def test_a_closed_store_refuses_calls_from_any_thread(tmp_path: Path) -> None:
    store = SQLiteHistoryStore(tmp_path / "h.db")
    store.read(CPU)
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.read(CPU)
    errors = raised_on_another_thread(lambda: store.read(CPU))
    assert len(errors) == 1
    assert isinstance(errors[0], StoreError)


def test_close_waits_for_a_call_in_progress_on_another_thread_which_completes(tmp_path: Path) -> None:
    store = SQLiteHistoryStore(tmp_path / "h.db", busy_timeout=5)
    holder = sqlite3.connect(tmp_path / "h.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # the writer below waits for this lock inside its call
    written: list[bool] = []
    writer = threading.Thread(target=lambda: written.append(store.write_cycle(Cycle("c1", T0, [Sample(CPU, 7)]))))
    writer.start()
    threading.Timer(0.3, holder.execute, ("ROLLBACK",)).start()
    time.sleep(0.1)  # the write is waiting on the lock
    store.close()
    writer.join()
    holder.close()
    assert written == [True]
    with pytest.raises(StoreError, match="is closed"):
        store.read(CPU)
    with SQLiteHistoryStore(tmp_path / "h.db") as reopened:
        assert reopened.read(CPU).values == (7,)


def test_a_connection_opened_while_close_runs_is_closed_and_the_call_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteHistoryStore(tmp_path / "h.db")
    opened: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def connect_then_close_the_store(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection: sqlite3.Connection = connect(*args, **kwargs)
        opened.append(connection)
        store.close()  # another thread closes the store between connect() and registering the connection
        return connection

    monkeypatch.setattr(sqlite3, "connect", connect_then_close_the_store)
    errors = raised_on_another_thread(lambda: store.read(CPU))  # a thread without a connection yet
    assert all(isinstance(error, StoreError) for error in errors)
    assert [str(error) for error in errors] == [f"history store {tmp_path / 'h.db'} is closed"]
    assert len(opened) == 1
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        opened[0].execute("SELECT 1")


_CLOSE_UNDER_READERS = """
import sys, threading
from ballast.internal.history import SeriesKey, SQLiteHistoryStore, StoreError
key = SeriesKey("8746f67fe9f3d343", "app", "cpu")
for attempt in range(40):
    store = SQLiteHistoryStore(f"{sys.argv[1]}/h{attempt}.db")
    outcomes = []
    def read():
        try:
            while True:
                store.read(key)
        except StoreError as exc:
            outcomes.append("is closed" in str(exc))
    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    store.ping()
    store.close()
    for reader in readers:
        reader.join()
    assert outcomes == [True] * 4, outcomes
"""


def test_closing_under_reading_threads_ends_their_calls_with_store_error_and_never_crashes(tmp_path: Path) -> None:
    # In a child process: closing a connection under a running statement kills the interpreter (SIGSEGV).
    child = subprocess.run(
        [sys.executable, "-c", _CLOSE_UNDER_READERS, str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr[-2000:]


def test_old_cycle_ids_are_forgotten_after_the_ttl(tmp_path: Path) -> None:
    with SQLiteHistoryStore(tmp_path / "h.db") as store:
        store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)]))
        store.write_cycle(Cycle("c2", T0 + 2 * 86_400_000, [Sample(CPU, 2)]))
    raw = sqlite3.connect(tmp_path / "h.db")
    assert [row[0] for row in raw.execute("SELECT id FROM cycles")] == ["c2"]
    raw.close()
