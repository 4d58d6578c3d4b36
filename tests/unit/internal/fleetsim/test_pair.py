"""Ballast's run on two processes gives the trace one process gives; a failure of either is the run's, with the
other's reason (`fleetsim.pair`)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import orjson
import pytest

from ballast.internal.fleetsim.fleet import default_fleet
from ballast.internal.fleetsim.model import Fleet, Usage
from ballast.internal.fleetsim.operator import BallastOperator
from ballast.internal.fleetsim.pair import Load, _digest, simulate_pair
from ballast.internal.fleetsim.report import JSON_OPTIONS, trace_json
from ballast.internal.fleetsim.run import AsWritten, simulate
from ballast.internal.fleetsim.shards import ShardError
from ballast.internal.fleetsim.usage import SyntheticUsage
from ballast.internal.history import open_store


def small_fleet() -> tuple[Fleet, Usage]:
    fleet = default_fleet(3, apps=6, namespaces=2, replicas=2, days=1)
    return fleet, SyntheticUsage(fleet)


def fleet_the_peer_cannot_build() -> tuple[Fleet, Usage]:
    if multiprocessing.parent_process() is not None:  # the spawned peer
        raise ValueError("no fleet in the peer (test)")
    return small_fleet()


def fleet_the_peer_finds_apart() -> tuple[Fleet, Usage]:
    if multiprocessing.parent_process() is not None:  # as a check of the pair would, in the process that makes it
        raise ShardError("out of step in the peer (test)")
    return small_fleet()


@pytest.mark.timeout(300)
def test_two_processes_give_the_trace_of_one(tmp_path: Path) -> None:
    fleet, usage = small_fleet()
    alone = simulate(fleet, usage, BallastOperator(fleet, store_url=f"sqlite:///{tmp_path / 'alone.db'}"))

    paired = simulate_pair(small_fleet, f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}")

    assert orjson.dumps(trace_json(paired, fleet), option=JSON_OPTIONS) == orjson.dumps(
        trace_json(alone, fleet), option=JSON_OPTIONS
    )
    assert len(paired.changes) == len(alone.changes) > 0  # the operator changed pods, in both
    with open_store(f"sqlite:///{tmp_path / 'a.db'}") as first, open_store(f"sqlite:///{tmp_path / 'b.db'}") as second:
        ours, theirs = first.measurement_hashes(), second.measurement_hashes()
    with open_store(f"sqlite:///{tmp_path / 'alone.db'}") as store:
        assert ours | theirs == store.measurement_hashes()
    assert ours
    assert theirs  # each process measured profiles of its own
    assert not ours & theirs
    assert multiprocessing.active_children() == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("load", "reason"),
    [(fleet_the_peer_cannot_build, "no fleet in the peer"), (fleet_the_peer_finds_apart, "out of step in the peer")],
)
def test_the_peers_failure_fails_the_run_with_its_reason(tmp_path: Path, load: Load, reason: str) -> None:
    with pytest.raises(ShardError, match=rf"(?s)simulation process 1 failed:.*{reason}"):
        simulate_pair(load, f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}")

    assert multiprocessing.active_children() == []


def test_equal_traces_have_one_digest_and_a_changed_field_another() -> None:
    fleet, usage = small_fleet()
    first, second = (simulate(fleet, usage, AsWritten()) for _ in range(2))
    assert first is not second

    same = _digest(first) == _digest(second)
    first.overcommitted += 1

    assert same
    assert _digest(first) != _digest(second)


def test_the_two_processes_need_stores_of_their_own(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'history.db'}"
    with pytest.raises(ValueError, match="history stores of their own"):
        simulate_pair(small_fleet, store, store)
