"""The history sweep: history that has had no profile for `orphanTTL` is purged (docs/design.md, difference 53).

A profile deleted with its CRD, or while the install is being removed, keeps its history so that it is found
again when the profile comes back. What never comes back would stay forever; the sweep bounds it:

    purged = sweep(store, owned={p.measurement_hash for p in profiles}, now_ms=..., ttl_ms=...)

The time each history was first found without a profile is kept in the store (`HistoryStore.unowned_since`), so
neither a restart nor a new leader starts the count again; a profile that comes back in time resets it.
"""

from __future__ import annotations

from collections.abc import Set

from .protocol import HistoryStore


def sweep(store: HistoryStore, *, owned: Set[str], now_ms: int, ttl_ms: int) -> list[str]:
    """Purge every history without a profile in `owned` for at least `ttl_ms`; returns the purged hashes, sorted.

    `owned` must be every profile's measurement hash: the caller sweeps only from a synced profile cache, and
    never while the WorkloadProfile kind is not served (an empty list then means nothing).
    """
    unowned = store.measurement_hashes() - owned
    since = store.unowned_since(unowned, now_ms)
    expired = sorted(digest for digest, first_ms in since.items() if now_ms - first_ms >= ttl_ms)
    for digest in expired:
        store.purge(digest)
    return expired
