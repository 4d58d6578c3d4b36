"""Opening a history store from a URL (`--store`, `--redis-url`, `REDIS_URL`)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

from .cluster_backend import ClusterHistoryStore
from .errors import StoreURLError
from .protocol import DEFAULT_CYCLE_TTL, HistoryStore
from .redis_backend import DEFAULT_SENTINEL_MIN_REPLICAS, DEFAULT_TIMEOUT, RedisHistoryStore
from .sqlite_backend import SQLiteHistoryStore
from .topology import CLUSTER_SCHEMES, SENTINEL_SCHEMES, parse_cluster_url, parse_sentinel_url

SCHEMES = ("redis", "rediss", *SENTINEL_SCHEMES, *CLUSTER_SCHEMES, "sqlite")


def sqlite_path(url: str) -> Path:
    """Return the file of a `sqlite:` URL, SQLAlchemy's way: `sqlite:///rel/h.db` is relative to the working
    directory, `sqlite:////var/lib/ballast/h.db` absolute. Raises `StoreURLError` for a host, a query or no path.
    """
    parts = urlsplit(url)
    if parts.scheme != "sqlite":
        raise StoreURLError(f"store URL {url!r} is not a sqlite: URL")
    if parts.netloc or parts.query or parts.fragment:
        raise StoreURLError(
            f"store URL {url!r}: a sqlite URL has no host, query or fragment; "
            "write sqlite:///relative/file.db or sqlite:////absolute/file.db"
        )
    path = parts.path[1:]
    if not path or path.endswith("/"):
        raise StoreURLError(f"store URL {url!r} names no database file (sqlite:///path/to/history.db)")
    return Path(path)


def open_store(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cycle_ttl: timedelta = DEFAULT_CYCLE_TTL,
    read_cache_samples: int = 0,
    min_replicas: int | None = None,
    durable: bool = True,
) -> HistoryStore:
    """Open the history store at `url` and return it (use it as a context manager, or call `close()`).

    - `redis://[[user]:password@]host[:port][/db]` and `rediss://…` (TLS, e.g. `?ssl_ca_certs=/etc/ca.crt`):
      Redis or Valkey, standalone. Nothing is sent yet, so an unreachable server shows at the first call.
    - `redis+sentinel://[user:password@]host1:26379,host2:26379/<service>[?db=0&sentinel_password=…]` (and
      `rediss+sentinel://`): the primary Sentinel names, found again after a failover (topology.py).
    - `redis+cluster://host1:6379,host2:6379` (and `rediss+cluster://`): a Cluster, in the tagged key layout
      (cluster_backend.py).
    - `sqlite:///relative/history.db`, `sqlite:////absolute/history.db`: created if missing (its directory must
      exist), WAL mode. For a single replica only.

    `timeout` bounds each Redis connect and reply, or how long SQLite waits for a lock (seconds). `cycle_ttl` is
    how long cycle ids are remembered against retries. `read_cache_samples`: SQLite's read cache (0: none; Redis
    ignores it). `min_replicas`: replicas that must acknowledge each cycle (`WAIT`); `None`: 1 behind Sentinel, 0
    otherwise; SQLite refuses more than 0. `durable=False`: SQLite commits without an fsync (a throw-away store;
    Redis ignores it). Raises `StoreURLError` (a `ValueError`) for an unknown
    scheme or a malformed URL, and for SQLite `StoreUnavailableError` when the file cannot be opened.
    """
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if min_replicas is not None and min_replicas < 0:
        raise StoreURLError(f"min_replicas {min_replicas} must be 0 or more")
    if scheme in ("redis", "rediss"):
        # Schemes are case-insensitive (RFC 3986); redis-py only accepts lowercase ones.
        return RedisHistoryStore.from_url(
            scheme + url[len(scheme) :], timeout=timeout, cycle_ttl=cycle_ttl, min_replicas=min_replicas or 0
        )
    if scheme in SENTINEL_SCHEMES:
        wanted = DEFAULT_SENTINEL_MIN_REPLICAS if min_replicas is None else min_replicas
        target = parse_sentinel_url(url)
        return RedisHistoryStore.from_sentinel(target, timeout=timeout, cycle_ttl=cycle_ttl, min_replicas=wanted)
    if scheme in CLUSTER_SCHEMES:
        return ClusterHistoryStore.from_endpoints(
            parse_cluster_url(url), timeout=timeout, cycle_ttl=cycle_ttl, min_replicas=min_replicas or 0
        )
    if scheme == "sqlite":
        if min_replicas:
            raise StoreURLError(f"min_replicas {min_replicas}: an SQLite store has no replicas")
        return SQLiteHistoryStore(
            sqlite_path(scheme + url[len(scheme) :]),
            busy_timeout=timeout,
            cycle_ttl=cycle_ttl,
            read_cache_samples=read_cache_samples,
            durable=durable,
        )
    shown = url.split("@", 1)[-1]  # never echo credentials
    raise StoreURLError(f"store URL {shown!r}: unsupported scheme {scheme!r}; use one of {', '.join(SCHEMES)}")
