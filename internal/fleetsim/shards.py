"""Ballast's side of a run shared by two processes (docs/simulate.md, "Two processes for Ballast's side").

Both processes run the same world, the same admission and the same enrollment, so both see every pod and every
profile; each runs the collection, resize and OOM lanes for the profiles it owns only (`Shard.owns`), with a
history store of its own. At each step where a lane of either may have written, each sends the other the writes
its own lanes made to its in-memory API server (`WriteLog`) and replays the other's, before the kubelet's part of
the resizes: both API servers then hold the same statuses and pods (their uids and resourceVersions aside), the two
worlds stay the same, and each process has done half the lanes' work. The lanes of two profiles never read each
other's writes (a profile's collection reads its own series and pods; its resize, its own pods), which is what lets
them run apart.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from ballast.runtime import APIStatusError, Clock, FakeAPI

Write = tuple[str, str, dict[str, str], bytes | None, str | None]
"""One write request as served: method, path, query parameters, body, content type."""
EVENT_KINDS = ("Event",)
"""Writes of these kinds are not sent: nothing in a run reads Events (core or events.k8s.io)."""
M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class Shard:
    """Process `index` of the pair: it owns the profiles whose name hashes to `index` (the same in every process,
    whatever its hash seed)."""

    index: int

    def __post_init__(self) -> None:
        if self.index not in (0, 1):
            raise ValueError(f"a run is shared by processes 0 and 1, not {self.index}")

    def owns(self, profile: str) -> bool:
        return zlib.crc32(profile.encode()) % 2 == self.index

    @property
    def other(self) -> int:
        return 1 - self.index


@dataclass(frozen=True, slots=True)
class Step:
    """What a process sends at an exchange: the virtual second it is at, its lanes' writes since the last
    exchange, and the virtual second its lanes next reconcile unprompted (a requeue)."""

    at_s: int
    writes: list[Write]
    next_requeue_s: float


@dataclass(frozen=True, slots=True)
class Done:
    """Process 1's last message: the digest of its trace."""

    digest: str


@dataclass(frozen=True, slots=True)
class Failed:
    """Sent instead of anything else when a process's run raised: its traceback."""

    traceback: str


class ShardError(RuntimeError):
    """The two processes of a run went apart: the other failed (its traceback is in the message), went away, or
    is at another step."""


class ShardGoneError(ShardError):
    """The other process went away (its end of the pipe closed): it reports why itself, if it can."""


class WriteLog(FakeAPI):
    """The in-memory API server, keeping every write it serves successfully while `recording()` (a lane of this
    process's own profiles is reconciling), Events aside: what the other process replays."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self._recording = False
        self.written: list[Write] = []

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        self._recording = True
        try:
            yield
        finally:
            self._recording = False

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
        if self._recording and method != "GET" and self._route(path)[0].mapping.gvk.kind not in EVENT_KINDS:
            self.written.append((method, path, dict(params or {}), body, content_type))
        return response

    def take(self) -> list[Write]:
        written, self.written = self.written, []
        return written

    def replay(self, writes: list[Write]) -> None:
        """Serve the other process's writes, unrecorded. Each was served there, on the same objects in the same
        state: one refused here means the two servers went apart."""
        for method, path, params, body, content_type in writes:
            try:
                super().request(method, path, params=params, body=body, content_type=content_type)
            except APIStatusError as exc:
                raise ShardError(f"the other process's {method} {path} was refused here: {exc}") from exc


class ShardLink:
    """This process's end of the pair: its `shard` and the pipe to the other process."""

    def __init__(self, shard: Shard, connection: Connection) -> None:
        self.shard = shard
        self.connection = connection

    def exchange(self, step: Step) -> Step:
        """Send this process's `Step` and receive the other's, which must be at the same second. Process 0 sends
        first and process 1 receives first, so that two large messages never wait on each other in a full pipe."""
        if self.shard.index == 0:
            self.send(step)
            received = self.receive(Step)
        else:
            received = self.receive(Step)
            self.send(step)
        if received.at_s != step.at_s:
            raise ShardError(f"the two simulation processes are out of step: at {step.at_s} s and {received.at_s} s")
        return received

    def send(self, message: Step | Done | Failed) -> None:
        try:
            self.connection.send(message)
        except (BrokenPipeError, ConnectionResetError) as exc:
            # A process that failed says why before it goes: its message may be waiting here.
            with contextlib.suppress(OSError, EOFError):
                if self.connection.poll(0):
                    self._raise_failure(self.connection.recv())
            raise ShardGoneError(f"simulation process {self.shard.other} went away") from exc

    def receive(self, expected: type[M]) -> M:
        try:
            message = self.connection.recv()
        except (EOFError, ConnectionResetError) as exc:
            raise ShardGoneError(f"simulation process {self.shard.other} went away") from exc
        self._raise_failure(message)
        if not isinstance(message, expected):
            what = type(message).__name__
            raise ShardError(f"the two simulation processes are out of step: {what} where {expected.__name__} was due")
        return message

    def _raise_failure(self, message: object) -> None:
        if isinstance(message, Failed):
            raise ShardError(f"simulation process {self.shard.other} failed:\n{message.traceback}")
