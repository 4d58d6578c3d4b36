"""The store primary SIGKILLed under collection, shared by the e2e scenario (one profile) and the load one (1,000
pods): `ballastd` collects into a Sentinel group, its primary is killed, and the books are checked against the
operator's own counters and the usage metrics.k8s.io served (docs/design.md, difference 67).

`kill_primary_under_collection` asserts: a replica is promoted; while none answers, the collector holds its cycles
(`ballast_history_cycles_buffered` > 0) and no profile's status moves; once one does, the held cycles are written
(`ballast_history_writes_retried`) and none is dropped; every sample the collector counted as written is in the
new primary exactly once, each equal to the memory metrics.k8s.io serves and within 15 % of its cpu (a rate
over two scrapes); the operator names the new primary (`ballast_history_primary`); and the statuses move again
with the first cycle that starts after the promotion.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis

from ballast.internal.history import HistoryStore, SeriesKey, open_store
from ballast.internal.history.keys import PREFIX, is_values_key
from ballast.internal.quantity import to_units
from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.integration.internal.cmd.ballastd.conftest import Ballastd
from tests.integration.redis_topology import SentinelGroup

SOURCE = "kubernetes-metrics"
PROFILES = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"
SAMPLES = "ballast_samples_collected_total"
RESOURCES = ("cpu", "memory")
CPU_JITTER = 0.15
"""How far a stored cpu sample may be from what metrics.k8s.io serves now (a rate over two scrapes)."""


@dataclass(frozen=True, slots=True)
class Scene:
    """What the test set up: the profiles' name prefix, how many, their pods each, their namespaces and the
    MetricsSource's poll interval."""

    prefix: str
    profiles: int
    pods_per_profile: int
    namespaces: Sequence[str]
    poll_seconds: float


def profiles(cluster: MiniCluster, prefix: str) -> list[dict[str, Any]]:
    """The WorkloadProfiles whose names start with `prefix` (a name carries a hash of the namespace)."""
    items = cluster.env.rest.get(PROFILES).get("items") or []
    return [dict(item) for item in items if item["metadata"]["name"].startswith(prefix)]


def cpu_samples(status: dict[str, Any]) -> int:
    """The cpu sample count of a profile's status (0 before any)."""
    for container in status.get("containers") or []:
        for stats in container.get("usageStats") or []:
            if stats.get("resource") == "cpu":
                return int(stats.get("samples") or 0)
    return 0


def statuses(cluster: MiniCluster, prefix: str) -> dict[str, dict[str, Any]]:
    """Each profile's status by name ({} before any profile; a transient API error reads as none)."""
    try:
        return {item["metadata"]["name"]: dict(item.get("status") or {}) for item in profiles(cluster, prefix)}
    except APIError:
        return {}


def collector_log(replica: Ballastd, lines: int = 60) -> str:
    """The replica's last log lines but the per-pod enrollment ones (a thousand pods drown the collector's)."""
    kept = [
        line for line in replica.log().splitlines() if "workloadwatcher-pod" not in line and "pool is full" not in line
    ]
    return "\n".join(kept[-lines:])


def _counters(replica: Ballastd) -> str:
    families = (SAMPLES, "ballast_store_errors_total", "ballast_history_cycles_buffered",
                "ballast_history_writes_retried_total", "ballast_history_cycles_dropped_total")  # fmt: skip
    return ", ".join(f"{family} {total(replica, family):g}" for family in families)


def _containers(statuses: dict[str, dict[str, Any]], name: str) -> Any:
    return statuses.get(name, {}).get("containers")


def primary_series(replica: Ballastd) -> str:
    """Every `ballast_history_primary` series the replica serves, for a failure message."""
    return "\n".join(line for line in replica.metrics().splitlines() if line.startswith("ballast_history_primary"))


def total(replica: Ballastd, family: str, **labels: str) -> float:
    """The sum of every sample of `family` carrying `labels` (0 when there is none)."""
    wanted = [f'{key}="{value}"' for key, value in labels.items()]
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in replica.metrics().splitlines()
        if line.startswith((family + "{", family + " ")) and all(label in line for label in wanted)
    )


def served_usage(cluster: MiniCluster, namespaces: Sequence[str]) -> dict[str, set[int]]:
    """The usages metrics.k8s.io serves now for container `app` of every pod in `namespaces`, in store units."""
    served: dict[str, set[int]] = {resource: set() for resource in RESOURCES}
    for namespace in namespaces:
        for item in cluster.env.rest.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods")["items"]:
            for container in item["containers"]:
                if container["name"] == "app":
                    for resource in RESOURCES:
                        served[resource].add(to_units(container["usage"][resource], resource))
    return served


@dataclass(frozen=True, slots=True)
class Books:
    counted: float  # cpu samples the collector counted as written
    stored: int  # cpu samples the store holds, every series
    values: dict[str, set[int]]  # every distinct value stored, by resource
    twice: int  # (series, cycle time) pairs holding more cpu samples than the profile has pods


def cpu_series_keys(group: SentinelGroup) -> list[SeriesKey]:
    """Every cpu series in the group's store. The replica collects every enrolled pod of the cluster — other tests'
    too, when they share it — and counts them all; the store is this test's alone, so it holds exactly those."""
    client = redis.Redis(host="127.0.0.1", port=group.primary_port(), password=group.password)
    try:
        names = [name.decode() for name in client.scan_iter(match=f"{PREFIX}*", count=1000)]
    finally:
        client.close()
    parts = [name[len(PREFIX) :].split(":") for name in names if is_values_key(name)]
    return [SeriesKey(digest, container, resource) for digest, container, resource in parts if resource == "cpu"]


def books(
    replica: Ballastd, group: SentinelGroup, store: HistoryStore, keys: Sequence[SeriesKey], pods_per_profile: int
) -> Books:
    """The collector's count against every cpu series in the store, read between two equal readings of the
    counter (no cycle lands in between); the values and the cycles stored twice of `keys`, the scene's series."""
    for _ in range(100):
        before = total(replica, SAMPLES, resource="cpu", source=SOURCE)
        everything = store.read_many(cpu_series_keys(group), with_times=False)
        series = store.read_many(keys, with_times=True)
        if total(replica, SAMPLES, resource="cpu", source=SOURCE) == before:
            cpu = [s for s in series if s.key.resource == "cpu"]
            return Books(
                counted=before,
                stored=sum(len(s.values) for s in everything),
                values={r: {v for s in series if s.key.resource == r for v in s.values} for r in RESOURCES},
                twice=sum(1 for s in cpu for n in Counter(s.times_s or ()).values() if n > pods_per_profile),
            )
    raise AssertionError("the collector's counter never held still for one store read")


def kill_primary_under_collection(
    cluster: MiniCluster, replica: Ballastd, group: SentinelGroup, scene: Scene, *, cycles_after: int = 5
) -> dict[str, Any]:
    """Kill the Sentinel group's primary while `replica` collects `scene`'s profiles; assert the module
    docstring's outcomes and return the figures. Every profile must have samples in its status already."""
    found = profiles(cluster, scene.prefix)
    assert len(found) == scene.profiles, f"{len(found)} profiles named {scene.prefix}…, wanted {scene.profiles}"
    hashes = [item["status"]["measurementHash"] for item in found]
    keys = [SeriesKey(digest, "app", resource) for digest in hashes for resource in RESOURCES]
    old_port = group.primary_port()

    def written() -> float:
        return total(replica, SAMPLES, resource="cpu", source=SOURCE)

    def log() -> str:
        return collector_log(replica)

    # The cycle period as it is (a cycle of many pods outlasts the poll interval), then the kill a second before the
    # next write is due, so that write meets no primary.
    increments = []
    for _ in range(2):
        before = written()
        poll_until(lambda: written() > before, timeout=60, interval=0.05,  # noqa: B023 - called within the loop
                   what="a cycle written before the kill", last_error=log)  # fmt: skip
        increments.append(time.monotonic())
    period = increments[1] - increments[0]
    time.sleep(max(0.0, period - 1.0))

    group.server_on(old_port).kill()  # SIGKILL: whatever it had not sent to a replica dies with it
    killed = time.monotonic()
    at_kill = total(replica, SAMPLES, resource="cpu", source=SOURCE)
    held_peak, promoted, first_write = 0.0, 0.0, 0.0
    last: dict[str, dict[str, Any]] | None = None
    while not first_write:
        held = total(replica, "ballast_history_cycles_buffered")
        held_peak = max(held_peak, held)
        if not promoted and group.primary_port() != old_port:
            promoted = time.monotonic()
        now = statuses(cluster, scene.prefix)  # read before the counter: no write yet means no new status
        if total(replica, "ballast_history_writes_retried_total", source=SOURCE) > 0:
            first_write = time.monotonic()
        elif last is not None:
            moved = [name for name, status in now.items() if status.get("containers") != _containers(last, name)]
            assert not moved, f"statuses moved with no primary: {moved[:5]}"
        elif held:  # a cycle failed: the ones before it are done, their statuses included
            last = now
        elif total(replica, SAMPLES, resource="cpu", source=SOURCE) > at_kill:
            raise AssertionError(
                f"a cycle went to the new primary {time.monotonic() - killed:.1f} s after the kill with none held: "
                "no cycle was due while no primary answered (Sentinel's down-after shorter than a cycle?)"
            )
        assert time.monotonic() - killed < 90, (
            f"no held cycle written 90 s after the kill; {_counters(replica)}\n{collector_log(replica)}"
        )
        time.sleep(0.05)
    assert last is not None, "no cycle was held: the kill was not under collection"
    new_port = group.wait_for_new_primary(old_port)
    promoted = promoted or time.monotonic()
    samples_then = {name: cpu_samples(status) for name, status in last.items()}

    def every_status_moved() -> bool:
        now = statuses(cluster, scene.prefix)
        return all(cpu_samples(now.get(name, {})) > count for name, count in samples_then.items())

    poll_until(every_status_moved, timeout=60, interval=0.05, what="every status to move after the promotion",
               last_error=log)  # fmt: skip
    statuses_resumed = time.monotonic() - promoted

    for cycle in range(1, cycles_after + 1):  # a few whole cycles after the held ones and the statuses
        before = written()
        poll_until(lambda: written() > before, timeout=60,  # noqa: B023 - called before the loop moves on
                   what=f"cycle {cycle} after the failover", last_error=log)  # fmt: skip
    with open_store(group.url, min_replicas=0) as store:
        book = books(replica, group, store, keys, scene.pods_per_profile)
    served = served_usage(cluster, scene.namespaces)
    retried = total(replica, "ballast_history_writes_retried_total", source=SOURCE)
    dropped = total(replica, "ballast_history_cycles_dropped_total")
    held_after = total(replica, "ballast_history_cycles_buffered")
    assert new_port != old_port
    assert retried >= held_peak, f"{held_peak:.0f} cycles held, {retried:.0f} written after the promotion"
    assert (dropped, held_after) == (0, 0), "held cycles dropped, or still held"
    assert book.stored == book.counted, f"{book.counted:.0f} samples counted as written, {book.stored} stored"
    assert book.twice == 0, f"{book.twice} cycles stored twice in a series"  # each pod gives one sample a cycle
    assert book.values["memory"] == served["memory"], f"stored {book.values}; metrics.k8s.io served {served}"
    # metrics-server rates kwok's cumulative CPU counter between two scrapes: each pod's cpu jitters around its value
    middle = sorted(served["cpu"])[len(served["cpu"]) // 2]
    strays = {value for value in book.values["cpu"] if abs(value - middle) > CPU_JITTER * middle}
    assert not strays, f"cpu stored {sorted(book.values['cpu'])}; metrics.k8s.io serves {sorted(served['cpu'])}"
    # The gauge follows the write that reached the promoted replica; read it until it names it (a CI run once read
    # it not naming it after five cycles: the poll's failure shows what it held instead).
    poll_until(lambda: total(replica, "ballast_history_primary", address=f"127.0.0.1:{new_port}") == 1,
               timeout=30, interval=0.2, what=f"ballast_history_primary to name the promoted replica :{new_port}",
               last_error=lambda: primary_series(replica))  # fmt: skip
    # the first cycle to start after the promotion moves them: at most one period to start it, one to run it
    assert statuses_resumed <= 2 * max(period, scene.poll_seconds), (
        f"the statuses moved {statuses_resumed:.1f} s after the promotion; a cycle every {period:.1f} s"
    )
    return {
        "samples_lost": int(book.counted - book.stored),
        "cycles_written_twice": book.twice,
        "samples_checked": book.stored,
        "profiles": scene.profiles,
        "pods_per_profile": scene.pods_per_profile,
        "promotion_seconds": round(promoted - killed, 2),
        "failover_seconds": round(first_write - killed, 2),
        "status_resumed_seconds": round(statuses_resumed, 2),
        "cycles_buffered": int(held_peak),
        "cycle_seconds": round(period, 2),
        "poll_seconds": scene.poll_seconds,
    }
