"""The history sweep on both backends, on a fake clock (plain epoch milliseconds): history without a profile is
purged once it has had none for the TTL, not before; a profile that comes back resets the count; the count is
kept in the store (docs/design.md, difference 53)."""

from __future__ import annotations

from ballast.internal.history import Cycle, HistoryStore, Sample, SeriesKey
from ballast.internal.history.orphans import sweep

HOUR_MS = 3_600_000
TTL_MS = 168 * HOUR_MS  # the BallastConfig's default orphanTTL
T0 = 1_800_000_000_000
KEPT, GONE, BACK = "1111111111111111", "2222222222222222", "3333333333333333"


def _seed(store: HistoryStore, *digests: str) -> None:
    for digest in digests:
        samples = [Sample(SeriesKey(digest, "app", resource), 100) for resource in ("cpu", "memory")]
        store.write_cycle(Cycle(f"seed/{digest}", T0, samples))


def _stored(store: HistoryStore, digest: str) -> int:
    return len(store.read(SeriesKey(digest, "app", "cpu")).values)


def test_history_without_a_profile_is_purged_after_the_ttl_and_not_before(store: HistoryStore) -> None:
    _seed(store, KEPT, GONE)
    assert store.measurement_hashes() == {KEPT, GONE}

    assert sweep(store, owned={KEPT}, now_ms=T0, ttl_ms=TTL_MS) == []  # GONE first seen without a profile
    assert sweep(store, owned={KEPT}, now_ms=T0 + TTL_MS - 1, ttl_ms=TTL_MS) == []
    assert (_stored(store, KEPT), _stored(store, GONE)) == (1, 1)

    assert sweep(store, owned={KEPT}, now_ms=T0 + TTL_MS, ttl_ms=TTL_MS) == [GONE]
    assert store.measurement_hashes() == {KEPT}
    assert (_stored(store, KEPT), _stored(store, GONE)) == (1, 0)
    assert store.unowned_since(set(), T0 + TTL_MS) == {}  # the purge forgot it too


def test_a_profile_that_comes_back_in_time_resets_the_count(store: HistoryStore) -> None:
    _seed(store, BACK)
    sweep(store, owned=set(), now_ms=T0, ttl_ms=TTL_MS)  # the CRD went: no profile
    sweep(store, owned={BACK}, now_ms=T0 + HOUR_MS, ttl_ms=TTL_MS)  # reinstalled, the profile is back
    sweep(store, owned=set(), now_ms=T0 + 2 * HOUR_MS, ttl_ms=TTL_MS)  # gone again: the count starts over

    assert sweep(store, owned=set(), now_ms=T0 + TTL_MS + HOUR_MS, ttl_ms=TTL_MS) == []
    assert _stored(store, BACK) == 1
    assert sweep(store, owned=set(), now_ms=T0 + TTL_MS + 2 * HOUR_MS, ttl_ms=TTL_MS) == [BACK]


def test_the_first_time_without_a_profile_is_kept_by_the_store(store: HistoryStore) -> None:
    """What a restarted operator or a new leader finds: the time recorded first, never a later one."""
    assert store.unowned_since({GONE}, T0) == {GONE: T0}
    assert store.unowned_since({GONE, KEPT}, T0 + HOUR_MS) == {GONE: T0, KEPT: T0 + HOUR_MS}
    assert store.unowned_since({KEPT}, T0 + 2 * HOUR_MS) == {KEPT: T0 + HOUR_MS}
    assert store.unowned_since({GONE}, T0 + 3 * HOUR_MS) == {GONE: T0 + 3 * HOUR_MS}  # forgotten meanwhile
