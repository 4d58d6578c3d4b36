"""The two processes of a Ballast run: which profiles each owns, the writes one keeps for the other and replays
from it, and the pipe between them (`fleetsim.shards`)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
from typing import Any

import pytest

from ballast.internal.fleetsim.shards import Done, Failed, Shard, ShardError, ShardLink, Step, Write, WriteLog
from ballast.runtime import FakeAPI, GroupVersionKind

CONFIG_MAP = GroupVersionKind("", "v1", "ConfigMap")
EVENT = GroupVersionKind("", "v1", "Event")
NAMES = [f"app-{index}--default" for index in range(200)]
OWNED_ELSEWHERE = f"""
from ballast.internal.fleetsim.shards import Shard
print("".join("1" if Shard(0).owns(f"app-{{index}}--default") else "0" for index in range({len(NAMES)})))
"""


def api(kind: type[FakeAPI] = FakeAPI) -> Any:
    server = kind()
    server.register(CONFIG_MAP, "configmaps", namespaced=True, status=False)
    server.register(EVENT, "events", namespaced=True, status=False)
    return server


def config_map(name: str, value: str, namespace: str = "ns") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": {"value": value}}  # fmt: skip


def test_every_profile_has_exactly_one_owner_the_same_in_a_process_with_another_hash_seed() -> None:
    first, second = Shard(0), Shard(1)
    elsewhere = subprocess.run(
        [sys.executable, "-c", OWNED_ELSEWHERE],
        env={**os.environ, "PYTHONHASHSEED": "12345"},
        capture_output=True,
        text=True,
        check=True,
    )

    assert [first.owns(name) + second.owns(name) for name in NAMES] == [1] * len(NAMES)
    assert 60 < sum(first.owns(name) for name in NAMES) < 140  # a hash, not one process taking them all
    assert elsewhere.stdout.strip() == "".join("1" if first.owns(name) else "0" for name in NAMES)


def test_only_the_writes_served_while_recording_are_kept_events_aside() -> None:
    server = api(WriteLog)
    client = server.client()
    client.create(config_map("before", "1"))
    with server.recording():
        client.create(config_map("own", "1"))
        client.patch(config_map("own", "2"), {"data": {"value": "2"}})
        client.create(config_map("events-api", "1", namespace="events"))  # named like the kind, still kept
        client.create({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns"}})
        client.get("v1/ConfigMap", "own", "ns")
    client.create(config_map("after", "1"))

    written = server.take()

    assert [(method, path) for method, path, *_ in written] == [
        ("POST", "/api/v1/namespaces/ns/configmaps"),
        ("PATCH", "/api/v1/namespaces/ns/configmaps/own"),
        ("POST", "/api/v1/namespaces/events/configmaps"),
    ]
    assert server.take() == []


def test_the_other_process_replays_the_writes_to_the_same_objects_unrecorded() -> None:
    origin, peer = api(WriteLog), api(WriteLog)
    for server in (origin, peer):
        server.client().create(config_map("shared", "0"))
    with origin.recording():
        origin.client().create(config_map("own", "1"))
        origin.client().patch(config_map("shared", "0"), {"data": {"value": "3"}})

    peer.replay(origin.take())

    assert {o["metadata"]["name"]: o["data"]["value"] for o in peer.objects(CONFIG_MAP)} == {"own": "1", "shared": "3"}
    assert peer.take() == []  # a replay is never sent back


def test_a_write_the_other_server_refuses_means_the_two_went_apart() -> None:
    origin, peer = api(WriteLog), api(WriteLog)
    with origin.recording():
        origin.client().create(config_map("only-there", "1"))
        origin.client().patch(config_map("only-there", "1"), {"data": {"value": "2"}})
    writes = origin.take()
    peer.replay(writes[:1])
    peer.client().delete(config_map("only-there", "1"))

    with pytest.raises(ShardError, match="PATCH /api/v1/namespaces/ns/configmaps/only-there was refused here"):
        peer.replay(writes[1:])


def test_two_large_steps_cross_without_waiting_on_each_other() -> None:
    ours, theirs = multiprocessing.Pipe()
    first, second = ShardLink(Shard(0), ours), ShardLink(Shard(1), theirs)
    big: list[Write] = [("PATCH", "/x", {}, b"y" * 1_000_000, None)]  # far more than a pipe holds, both ways
    got: list[Step] = []
    peer = threading.Thread(target=lambda: got.append(second.exchange(Step(300, big, 900.0))), daemon=True)
    peer.start()

    received = first.exchange(Step(300, big, 600.0))
    peer.join(10)

    assert not peer.is_alive()
    assert received == Step(300, big, 900.0)
    assert got == [Step(300, big, 600.0)]


def test_two_processes_at_different_steps_or_messages_are_out_of_step() -> None:
    ours, theirs = multiprocessing.Pipe()
    link = ShardLink(Shard(0), ours)
    theirs.send(Step(315, [], 0.0))
    with pytest.raises(ShardError, match="out of step: at 300 s and 315 s"):
        link.exchange(Step(300, [], 0.0))

    theirs.send(Done("digest"))
    with pytest.raises(ShardError, match="out of step: Done where Step was due"):
        link.exchange(Step(600, [], 0.0))


def test_a_failed_or_vanished_peer_is_an_error_naming_it() -> None:
    ours, theirs = multiprocessing.Pipe()
    link = ShardLink(Shard(0), ours)
    theirs.send(Failed("Traceback ...\nValueError: bad fleet"))
    with pytest.raises(ShardError, match=r"(?s)simulation process 1 failed:.*bad fleet"):
        link.exchange(Step(0, [], 0.0))

    theirs.send(Failed("Traceback ...\nValueError: bad store"))  # then it went: the reason still reaches us
    theirs.close()
    with pytest.raises(ShardError, match=r"(?s)simulation process 1 failed:.*bad store"):
        link.send(Step(0, [("PATCH", "/x", {}, b"y" * 1_000_000, None)], 0.0))
    with pytest.raises(ShardError, match="simulation process 1 went away"):
        link.receive(Step)


def test_a_run_is_shared_by_processes_0_and_1() -> None:
    with pytest.raises(ValueError, match="processes 0 and 1, not 2"):
        Shard(2)
