"""The SQLite backend: the embedded store for one replica, development and the simulator (stdlib sqlite3)."""

from __future__ import annotations

import bisect
import contextlib
import sqlite3
import threading
from array import array
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import Self

from cachetools import LRUCache

from .errors import StoreError, StoreUnavailableError
from .protocol import DEFAULT_CYCLE_TTL
from .series import Cycle, Series, SeriesKey, check_measurement_hash
from .window import next_first_seen

SCHEMA_VERSION = 1
DEFAULT_BUSY_TIMEOUT = 5.0
"""Seconds a write waits for another writer's lock before the store counts as unavailable."""

_SCHEMA = """
CREATE TABLE series (
    id INTEGER PRIMARY KEY,
    measurement_hash TEXT NOT NULL,
    container TEXT NOT NULL,
    resource TEXT NOT NULL,
    first_seen_ms INTEGER,
    sample_count INTEGER NOT NULL DEFAULT 0,
    UNIQUE (measurement_hash, container, resource)
);
CREATE TABLE samples (
    id INTEGER PRIMARY KEY,  -- append order: a new row gets a larger id than every row there is
    series_id INTEGER NOT NULL REFERENCES series (id),
    value INTEGER NOT NULL,
    at_s INTEGER NOT NULL
);
CREATE INDEX samples_by_series ON samples (series_id, id);
CREATE TABLE cycles (
    id TEXT PRIMARY KEY,
    at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS unowned (
    measurement_hash TEXT PRIMARY KEY,
    since_ms INTEGER NOT NULL
);
"""
_UNOWNED_TABLE = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS unowned") :]
"""The history sweep's memory: added to version 1 without a new version (a file from before gets it on open)."""


@dataclass(frozen=True, slots=True)
class _Tail:
    """One series' samples as last read, with their row ids: the next read fetches only the rows after them."""

    series_id: int
    ids: array[int]
    """Row ids and times as machine integers: a read extends them with a copy of memory (a tuple's copy touches
    every element's object, which is what a read costs for a long series)."""
    values: tuple[int, ...]
    """Handed to readers as it is (a `Series` holds a tuple): never copied again, never changed."""
    times: array[int]


_SERIES = (
    "SELECT id, first_seen_ms, sample_count FROM series WHERE measurement_hash = ? AND container = ? AND resource = ?"
)
_SERIES_WITH_OLDEST = (
    "SELECT id, first_seen_ms, sample_count, (SELECT min(id) FROM samples WHERE series_id = series.id) FROM series "
    "WHERE measurement_hash = ? AND container = ? AND resource = ?"
)
"""A series' row, and with the read cache its oldest sample's row id too (`_read_tail` needs it)."""


class SQLiteHistoryStore:
    """History in one SQLite file in WAL mode: readers never block the writer nor each other.

    Each thread gets its own connection, so the store can be shared by the collector and any number of reader
    threads; other processes may read the same file. A cycle is one IMMEDIATE transaction (all or nothing,
    durable at commit with `synchronous=FULL`; `durable=False` uses `synchronous=NORMAL`, no fsync per commit,
    so a power loss may lose the last cycles but never corrupts the file — for a throw-away store such as the
    simulator's). Not for several writing replicas: history would fork.
    Errors: `StoreUnavailableError` when the file is locked beyond `busy_timeout` or cannot be read or written,
    `StoreError` when it is not a history database of this version.

    `read_cache_samples` > 0 keeps up to that many samples of the series read last (least recently read dropped
    first), so reading a series again fetches only the rows written since and drops those trimmed: what a poll
    loop that re-reads whole histories needs (the simulator). Every read checks the cached rows against the file
    (the oldest row, the newest cached row unchanged, the series' sample count) and reads the series whole when
    they disagree, so results are those of an uncached read. About 70 bytes a cached sample; 0 (the default)
    caches nothing.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        cycle_ttl: timedelta = DEFAULT_CYCLE_TTL,
        read_cache_samples: int = 0,
        durable: bool = True,
    ) -> None:
        """Open (creating if needed) the database at `path`; its directory must exist."""
        if busy_timeout <= 0:
            raise ValueError(f"busy_timeout {busy_timeout} must be positive (seconds)")
        if read_cache_samples < 0:
            raise ValueError(f"read_cache_samples {read_cache_samples} must be 0 (no cache) or more")
        self._tails: LRUCache[SeriesKey, _Tail] | None = (
            LRUCache(read_cache_samples, getsizeof=lambda tail: max(1, len(tail.ids))) if read_cache_samples else None
        )
        self._path = Path(path)
        self._synchronous = "FULL" if durable else "NORMAL"
        self._busy_timeout = busy_timeout
        self._cycle_ttl_ms = cycle_ttl // timedelta(milliseconds=1)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._in_use: Counter[sqlite3.Connection] = Counter()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._closed = False
        with self._errors(f"opening {self._path}"):
            self._migrate(self._connection())

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            return connection
        if self._closed:
            raise StoreError(f"history store {self._path} is closed")
        # check_same_thread=False only so close() may close other threads' idle connections; each is used by one
        # thread.
        connection = sqlite3.connect(
            self._path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False
        )
        connection.execute(f"PRAGMA synchronous = {self._synchronous}")
        with self._lock:
            closed_meanwhile = self.closed  # the property: mypy would keep `_closed` narrowed from above
            if not closed_meanwhile:
                self._connections.append(connection)
        if closed_meanwhile:  # close() ran while it was opened: nobody else would close it
            connection.close()
            raise StoreError(f"history store {self._path} is closed")
        self._local.connection = connection
        return connection

    @contextlib.contextmanager
    def _session(self) -> Iterator[sqlite3.Connection]:
        """The calling thread's connection, marked in use for the call: closing a connection under a running
        statement crashes the interpreter, so `close()` leaves a busy one to be closed here when the call ends."""
        connection = self._connection()
        with self._lock:
            if self._closed:
                raise StoreError(f"history store {self._path} is closed")
            self._in_use[connection] += 1
        try:
            yield connection
        finally:
            with self._lock:
                self._in_use[connection] -= 1
                last = not self._in_use[connection]
                if last:
                    del self._in_use[connection]
                    self._idle.notify_all()
                orphaned = last and self.closed
            if orphaned:
                connection.close()

    def _migrate(self, db: sqlite3.Connection) -> None:
        # WAL is a property of the file: set once, kept by every later connection.
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            raise StoreError(f"{self._path}: cannot switch to WAL journal mode (got {mode!r})")
        with self._transaction(db, "IMMEDIATE"):
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise StoreError(f"{self._path} is an SQLite database, but not a ballast history store")
                for statement in _SCHEMA.split(";\n"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise StoreError(
                    f"{self._path} has history schema version {version}; this ballast reads version {SCHEMA_VERSION}"
                )
            else:
                db.execute(_UNOWNED_TABLE)

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise StoreUnavailableError(f"{what}: SQLite {self._path}: {exc}") from exc
            raise StoreError(f"{what}: SQLite {self._path}: {exc}") from exc

    @staticmethod
    @contextlib.contextmanager
    def _transaction(db: sqlite3.Connection, kind: str = "DEFERRED") -> Iterator[None]:
        db.execute(f"BEGIN {kind}")
        try:
            yield
            db.execute("COMMIT")
        except BaseException:
            # A failed COMMIT (busy, I/O) leaves the transaction open: roll back so the connection stays usable.
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

    def write_cycle(self, cycle: Cycle) -> bool:
        """Apply `cycle` in one transaction; `False` when its id was already applied."""
        with (
            self._session() as db,
            self._errors(f"writing cycle {cycle.cycle_id} ({len(cycle.samples)} samples)"),
            self._transaction(db, "IMMEDIATE"),
        ):
            inserted = db.execute(
                "INSERT INTO cycles (id, at_ms) VALUES (?, ?) ON CONFLICT DO NOTHING", (cycle.cycle_id, cycle.at_ms)
            )
            if inserted.rowcount == 0:
                return False
            db.execute("DELETE FROM cycles WHERE at_ms < ?", (cycle.at_ms - self._cycle_ttl_ms,))
            cutoff_ms = cycle.cutoff_ms
            written: list[tuple[int, int, int, list[int]]] = []
            for key, values in cycle.by_series().items():
                series_id, first_seen, count = self._series_row(db, key)
                if cutoff_ms is not None and count:
                    count -= self._drop_expired(db, series_id, cutoff_ms)
                first_seen = next_first_seen(first_seen, kept=count, at_ms=cycle.at_ms, cutoff_ms=cutoff_ms)
                written.append((series_id, first_seen, count + len(values), values))
            # One statement for the whole cycle, series after series: still appends, each row's id above every row
            # there is (ids only order a series' rows).
            at_s = cycle.at_s
            db.executemany(
                "INSERT INTO samples (series_id, value, at_s) VALUES (?, ?, ?)",
                ((series_id, value, at_s) for series_id, _, _, values in written for value in values),
            )
            updates: list[tuple[int, int, int]] = []
            for series_id, first_seen, count, _ in written:
                kept = min(count, cycle.reservoir_size)
                if count > kept:
                    db.execute(
                        "DELETE FROM samples WHERE id IN "
                        "(SELECT id FROM samples WHERE series_id = ? ORDER BY id LIMIT ?)",
                        (series_id, count - kept),
                    )
                updates.append((first_seen, kept, series_id))
            db.executemany("UPDATE series SET first_seen_ms = ?, sample_count = ? WHERE id = ?", updates)
        return True

    @staticmethod
    def _series_row(db: sqlite3.Connection, key: SeriesKey) -> tuple[int, int | None, int]:
        params = (key.measurement_hash, key.container, key.resource)
        row = db.execute(_SERIES, params).fetchone()
        if row is None:
            cursor = db.execute("INSERT INTO series (measurement_hash, container, resource) VALUES (?, ?, ?)", params)
            return int(cursor.lastrowid or 0), None, 0
        return row[0], row[1], row[2]

    @staticmethod
    def _drop_expired(db: sqlite3.Connection, series_id: int, cutoff_ms: int) -> int:
        """Drop the run of samples older than the cutoff at the oldest end (as the Redis list is trimmed)."""
        oldest = db.execute("SELECT at_s FROM samples WHERE series_id = ? ORDER BY id LIMIT 1", (series_id,)).fetchone()
        if oldest is None or oldest[0] * 1000 >= cutoff_ms:
            return 0
        first_kept = None
        scan = db.execute("SELECT id, at_s FROM samples WHERE series_id = ? ORDER BY id", (series_id,))
        for sample_id, at_s in scan:
            if at_s * 1000 >= cutoff_ms:
                first_kept = sample_id
                break
        scan.close()
        if first_kept is None:
            return db.execute("DELETE FROM samples WHERE series_id = ?", (series_id,)).rowcount
        return db.execute("DELETE FROM samples WHERE series_id = ? AND id < ?", (series_id, first_kept)).rowcount

    def read_many(self, keys: Sequence[SeriesKey], *, with_times: bool = False) -> list[Series]:
        """Return the series of `keys` from one read transaction (a consistent snapshot)."""
        out = []
        lookup = _SERIES_WITH_OLDEST if self._tails is not None else _SERIES
        with self._session() as db, self._errors(f"reading {len(keys)} series"), self._transaction(db):
            for key in keys:
                row = db.execute(lookup, (key.measurement_hash, key.container, key.resource)).fetchone()
                if row is None:
                    out.append(Series(key, (), None, () if with_times else None))
                    continue
                if self._tails is not None:
                    tail, grown_from = self._read_tail(db, key, row[0], row[2], row[3])
                    times = tuple(tail.times) if with_times else None
                    out.append(Series(key, tail.values, row[1], times, grown_from=grown_from))
                    continue
                samples = db.execute("SELECT value, at_s FROM samples WHERE series_id = ? ORDER BY id", (row[0],))
                if with_times:
                    pairs = samples.fetchall()
                    out.append(Series(key, tuple(p[0] for p in pairs), row[1], tuple(p[1] for p in pairs)))
                else:
                    out.append(Series(key, tuple(p[0] for p in samples), row[1]))
        return out

    def _read_tail(
        self, db: sqlite3.Connection, key: SeriesKey, series_id: int, count: int, oldest: int | None
    ) -> tuple[_Tail, tuple[int, ...] | None]:
        """The series' samples, from the cached ones plus the rows after them (appends always get larger ids;
        trims remove the oldest rows only); read whole when the result would not hold `count` samples. `oldest`
        is the series' lowest row id (None: no rows). Also the cached values when the result only appends to them
        (`Series.grown_from`)."""
        assert self._tails is not None
        with self._lock:
            cached = self._tails.get(key)
        tail = None
        grown_from = None
        if cached is not None and cached.series_id == series_id and cached.ids:
            keep = bisect.bisect_left(cached.ids, oldest) if oldest is not None else len(cached.ids)
            # A purge that removed the newest rows lets SQLite hand their ids out again: the last cached row must
            # still be there, unchanged, for the rows after it to be the ones written since. One statement reads
            # it with those rows.
            last = (cached.ids[-1], cached.values[-1], cached.times[-1])
            rows = db.execute(
                "SELECT id, value, at_s FROM samples WHERE series_id = ? AND id >= ? ORDER BY id", (series_id, last[0])
            ).fetchall()
            last_kept = bool(rows) and rows[0] == last
            if rows and rows[0][0] == last[0]:
                del rows[0]
            unchanged = keep == len(cached.ids) or (cached.ids[keep] == oldest and last_kept)
            if unchanged and len(cached.ids) - keep + len(rows) == count:
                # New sequences: the cached tail may be in another reader's hands (a tuple's slice from 0 is the
                # tuple itself; an array's is a copy, made only when rows were trimmed).
                new_ids, new_values, new_times = zip(*rows, strict=True) if rows else ((), (), ())
                tail = _Tail(
                    series_id,
                    (cached.ids[keep:] if keep else cached.ids) + array("q", new_ids),
                    cached.values[keep:] + new_values,
                    (cached.times[keep:] if keep else cached.times) + array("q", new_times),
                )
                grown_from = cached.values if keep == 0 else None
        if tail is None:
            rows = db.execute(
                "SELECT id, value, at_s FROM samples WHERE series_id = ? ORDER BY id", (series_id,)
            ).fetchall()
            ids, values, times = zip(*rows, strict=True) if rows else ((), (), ())
            tail = _Tail(series_id, array("q", ids), values, array("q", times))
        with self._lock:
            if len(tail.ids) <= self._tails.maxsize:
                self._tails[key] = tail
            else:
                self._tails.pop(key, None)
        return tail, grown_from

    def read(self, key: SeriesKey, *, with_times: bool = False) -> Series:
        """Return one series. See `HistoryStore.read`."""
        return self.read_many([key], with_times=with_times)[0]

    def purge(self, measurement_hash: str) -> int:
        """Delete every series of a profile's history in one transaction; returns how many there were."""
        check_measurement_hash(measurement_hash)
        if self._tails is not None:
            with self._lock:
                for key in [key for key in self._tails if key.measurement_hash == measurement_hash]:
                    del self._tails[key]
        with (
            self._session() as db,
            self._errors(f"purging history {measurement_hash}"),
            self._transaction(db, "IMMEDIATE"),
        ):
            db.execute(
                "DELETE FROM samples WHERE series_id IN (SELECT id FROM series WHERE measurement_hash = ?)",
                (measurement_hash,),
            )
            db.execute("DELETE FROM unowned WHERE measurement_hash = ?", (measurement_hash,))
            return db.execute("DELETE FROM series WHERE measurement_hash = ?", (measurement_hash,)).rowcount

    def measurement_hashes(self) -> set[str]:
        """Every measurement hash with a stored series. See `HistoryStore.measurement_hashes`."""
        with self._session() as db, self._errors("listing measurement hashes"):
            return {row[0] for row in db.execute("SELECT DISTINCT measurement_hash FROM series")}

    def unowned_since(self, unowned: Collection[str], now_ms: int) -> dict[str, int]:
        """Since when each hash of `unowned` has had no profile, in one transaction. See `HistoryStore`."""
        wanted = set(unowned)
        with (
            self._session() as db,
            self._errors("recording unowned history"),
            self._transaction(db, "IMMEDIATE"),
        ):
            known = dict(db.execute("SELECT measurement_hash, since_ms FROM unowned").fetchall())
            db.executemany("DELETE FROM unowned WHERE measurement_hash = ?", [(h,) for h in known.keys() - wanted])
            new = dict.fromkeys(wanted - known.keys(), now_ms)
            db.executemany("INSERT INTO unowned (measurement_hash, since_ms) VALUES (?, ?)", new.items())
            return {digest: known.get(digest, now_ms) for digest in wanted}

    def ping(self) -> None:
        """Raise `StoreUnavailableError` unless the database file can be read."""
        with self._session() as db, self._errors("ping"):
            db.execute("SELECT count(*) FROM series").fetchone()

    def close(self) -> None:
        """Close every thread's connection; later calls raise `StoreError`. Waits up to `busy_timeout` for calls in
        progress on other threads; a connection still busy after that is closed by its thread when its call ends."""
        with self._lock:
            self._closed = True
            self._idle.wait_for(lambda: not self._in_use, timeout=self._busy_timeout)
            connections, self._connections = self._connections, []
            idle = [connection for connection in connections if connection not in self._in_use]
        for connection in idle:
            connection.close()
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
