"""The two processes of a Ballast run: which profiles each owns, the writes one keeps for the other and replays
from it, and the pipe between them (`fleetsim.shards`)."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

import pytest

from ballast.internal.fleetsim.shards import PEER_FAILED, Shard, ShardError, ShardLink, Step, WriteLog
from ballast.runtime import FakeAPI, GroupVersionKind

CONFIG_MAP = GroupVersionKind("", "v1", "ConfigMap")
EVENT = GroupVersionKind("", "v1", "Event")


def api(kind: type[FakeAPI] = FakeAPI) -> Any:
    server = kind()
    server.register(CONFIG_MAP, "configmaps", namespaced=True, status=False)
    server.register(EVENT, "events", namespaced=True, status=False)
    return server


def config_map(name: str, value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"},
            "data": {"value": value}}  # fmt: skip


def test_every_profile_has_exactly_one_owner_whatever_the_process() -> None:
    names = [f"app-{index}--default" for index in range(200)]
    first, second = Shard(0, 2), Shard(1, 2)

    owned = [sum(shard.owns(name) for shard in (first, second)) for name in names]

    assert owned == [1] * len(names)
    assert 60 < sum(first.owns(name) for name in names) < 140  # a hash, not one process taking them all
    assert [Shard(0, 2).owns(name) for name in names] == [first.owns(name) for name in names]


def test_only_the_writes_served_while_recording_are_kept_events_aside() -> None:
    server = api(WriteLog)
    client = server.client()
    client.create(config_map("before", "1"))
    server.recording = True
    client.create(config_map("own", "1"))
    client.patch(config_map("own", "2"), {"data": {"value": "2"}})
    client.create({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns"}})
    client.get("v1/ConfigMap", "own", "ns")
    server.recording = False
    client.create(config_map("after", "1"))

    written = server.take()

    assert [(method, path) for method, path, *_ in written] == [
        ("POST", "/api/v1/namespaces/ns/configmaps"),
        ("PATCH", "/api/v1/namespaces/ns/configmaps/own"),
    ]
    assert server.take() == []


def test_the_other_process_replays_the_writes_to_the_same_objects_and_skips_what_its_server_refused() -> None:
    origin, peer = api(WriteLog), api(WriteLog)
    for server in (origin, peer):
        server.client().create(config_map("shared", "0"))
    origin.recording = True
    origin.client().create(config_map("own", "1"))
    origin.client().patch(config_map("shared", "0"), {"data": {"value": "3"}})
    origin.recording = False
    written = origin.take()

    peer.replay([*written, ("DELETE", "/api/v1/namespaces/ns/configmaps/missing", {}, None, None)])

    assert {o["metadata"]["name"]: o["data"]["value"] for o in peer.objects(CONFIG_MAP)} == {"own": "1", "shared": "3"}
    assert peer.take() == []  # a replay is never sent back


def test_the_two_ends_exchange_their_steps_in_either_order_of_arrival() -> None:
    ours, theirs = multiprocessing.Pipe()
    first, second = ShardLink(Shard(0, 2), ours), ShardLink(Shard(1, 2), theirs)
    big: Step = ([("PATCH", "/x", {}, b"y" * 1_000_000, None)], 900.0)  # more than a pipe holds
    got: list[Step] = []
    peer = threading.Thread(target=lambda: got.append(second.exchange(big)))
    peer.start()

    received = first.exchange(([], 600.0))
    peer.join(10)

    assert received == big
    assert got == [([], 600.0)]


def test_a_failed_or_vanished_peer_is_an_error_naming_it() -> None:
    ours, theirs = multiprocessing.Pipe()
    link = ShardLink(Shard(0, 2), ours)
    theirs.send((PEER_FAILED, "Traceback ...\nValueError: bad fleet"))
    with pytest.raises(ShardError, match=r"(?s)simulation process 1 failed: .*bad fleet"):
        link.exchange(([], 0.0))

    theirs.close()
    with pytest.raises(ShardError, match="simulation process 1 went away"):
        link.receive()


def test_a_run_is_shared_by_two_processes() -> None:
    ours, _ = multiprocessing.Pipe()
    with pytest.raises(ValueError, match="2 processes, not 3"):
        ShardLink(Shard(0, 3), ours)
