"""Usage history: one `HistoryStore` Protocol, two real backends (Redis/Valkey and SQLite), opened by URL.

    with open_store("redis://valkey:6379/0") as store:  # or "sqlite:////var/lib/ballast/history.db"
        key = SeriesKey(profile.measurement_hash, "app", "cpu")
        store.write_cycle(Cycle("kubernetesMetrics/1732900000000", 1732900000000, [Sample(key, 230)]))
        series = store.read(key)  # values oldest first, first_seen_ms

A cycle (every sample of one poll of a MetricsSource) is written atomically, once (by cycle id), in one round
trip for Redis; series keep the newest `reservoir_size` samples and, with a `retention`, only the window, with
`first_seen` moving along (docs/design.md, differences 11 and 12). The Redis keys are the Go operator's
(docs/compatibility.md) plus a parallel `:ts` list, so history migrates either way.
"""

from .cluster_backend import ClusterHistoryStore
from .errors import StoreError, StoreNotReplicatedError, StoreUnavailableError, StoreURLError
from .protocol import DEFAULT_CYCLE_TTL, HistoryStore
from .redis_backend import RedisHistoryStore
from .series import DEFAULT_RESERVOIR_SIZE, Cycle, Sample, Series, SeriesKey
from .sqlite_backend import SQLiteHistoryStore
from .url import open_store, sqlite_path
from .window import next_first_seen

__all__ = [
    "DEFAULT_CYCLE_TTL",
    "DEFAULT_RESERVOIR_SIZE",
    "ClusterHistoryStore",
    "Cycle",
    "HistoryStore",
    "RedisHistoryStore",
    "SQLiteHistoryStore",
    "Sample",
    "Series",
    "SeriesKey",
    "StoreError",
    "StoreNotReplicatedError",
    "StoreURLError",
    "StoreUnavailableError",
    "next_first_seen",
    "open_store",
    "sqlite_path",
]
