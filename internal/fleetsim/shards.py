"""Ballast's side of a run shared by two processes (docs/simulate.md, "Two processes").

Both processes run the same world, the same admission and the same enrollment, so both see every pod and every
profile; each runs the collection, resize and OOM lanes for the profiles it owns only (`Shard.owns`), with a
history store of its own. At the end of every step each sends the other the writes its own lanes made to its
in-memory API server (`WriteLog`) and replays the other's, before the kubelet's part of the resizes: both API
servers then hold the same statuses and pods, the two worlds stay the same, and each process has done half the
operator's work. The lanes of two profiles never read each other's writes (a profile's collection reads its own
series and pods; its resize, its own pods), which is what lets them run apart.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, cast

from ballast.runtime import APIStatusError, Clock, FakeAPI

Write = tuple[str, str, dict[str, str], bytes | None, str | None]
"""One write request as served: method, path, query parameters, body, content type."""
Step = tuple[list[Write], float]
"""What a process sends at an exchange: its lanes' writes since the last, and the virtual second its lanes next
reconcile unprompted (by a requeue)."""
PEER_FAILED = "peer failed"
"""The first item of the message a process sends its peer instead of its writes when its run raised."""


@dataclass(frozen=True, slots=True)
class Shard:
    """Process `index` of `count`: it owns the profiles whose name hashes to `index` (the same in every process,
    whatever its hash seed)."""

    index: int
    count: int

    def owns(self, profile: str) -> bool:
        return zlib.crc32(profile.encode()) % self.count == self.index


class ShardError(RuntimeError):
    """The other process of the pair failed (its message says why) or went away."""


class WriteLog(FakeAPI):
    """The in-memory API server, keeping every write it serves successfully while `recording` (a lane of this
    process's own profiles is reconciling), Events aside: what the other process replays."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self.recording = False
        self.written: list[Write] = []

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = "application/json",
        timeout: float | None = None,
    ) -> Any:
        response = super().request(
            method, path, params=params, body=body, content_type=content_type, accept=accept, timeout=timeout
        )
        if self.recording and method != "GET" and "/events" not in path:
            self.written.append((method, path, dict(params or {}), body, content_type))
        return response

    def take(self) -> list[Write]:
        written, self.written = self.written, []
        return written

    def replay(self, writes: list[Write]) -> None:
        """Serve the other process's writes, unrecorded. One its own server refused is refused here too (the
        same object in the same state), and skipped."""
        for method, path, params, body, content_type in writes:
            try:
                super().request(method, path, params=params, body=body, content_type=content_type)
            except APIStatusError:
                continue


class ShardLink:
    """This process's end of the pair: its `shard` and the pipe to the other process."""

    def __init__(self, shard: Shard, connection: Connection) -> None:
        if shard.count != 2:
            raise ValueError(f"a run is shared by 2 processes, not {shard.count}")
        self.shard = shard
        self.connection = connection

    def exchange(self, step: Step) -> Step:
        """Send this process's `Step` and receive the other's. Process 0 sends first and process 1 receives first,
        so that two large messages never wait on each other in a full pipe."""
        if self.shard.index == 0:
            self.send(step)
            return cast(Step, self.receive())
        received = cast(Step, self.receive())
        self.send(step)
        return received

    def send(self, message: Any) -> None:
        try:
            self.connection.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError) as exc:
            raise ShardError(f"simulation process {1 - self.shard.index} went away") from exc

    def receive(self) -> Any:
        try:
            message = self.connection.recv()
        except (EOFError, ConnectionResetError) as exc:
            raise ShardError(f"simulation process {1 - self.shard.index} went away") from exc
        if isinstance(message, tuple) and message[:1] == (PEER_FAILED,):
            raise ShardError(f"simulation process {1 - self.shard.index} failed: {message[1]}")
        return message
