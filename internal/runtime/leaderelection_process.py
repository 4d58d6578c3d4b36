"""Leader election in a child interpreter, so lease renewals never queue behind this process's GIL.

    elector = ProcessLeaderElector(rest_config, LeaderElectionConfig(name=..., namespace=...))
    manager = Manager(config, leader_elector=elector)   # same contract as `LeaseLeaderElector`

CPU-bound C code (a large informer LIST decoded by orjson, a pydantic validation) holds the GIL for tens of
milliseconds at a time, and an HTTPS round trip needs the GIL a dozen times: under four such threads an
in-process renewal takes seconds (benchmarks/RESULTS.md). The child runs the unchanged `LeaseLeaderElector` with
its own GIL and reports over a pipe, one JSON object per line:

    parent → child   stdin    the settings (REST config, election config), then "stop" or EOF
    child → parent   stdout   {"event": "started_leading" | "stopped_leading" | "renewed" | "slowpath" | "log"}

The child stops, and releases the lease when `release_on_cancel` is set, on "stop" or when the parent's end of
the pipe closes — including when the parent is killed. If the child dies, the parent stops leading at once.

The parent keeps the step-down deadline on its own clock as well: "started_leading" and "renewed" carry the
child's `leading_until` (CLOCK_MONOTONIC, shared by every process of the machine), `is_leader()` is False once
it passes, and the thread following the child stops leader-only work then unless a renewal is waiting in the
pipe — so a parent whose threads were starved while the child lost the lease never acts on it, and one that was
merely slow to read does not give up a lease the child kept.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import IO, Any

import orjson

from . import metrics
from .leaderelection import LeaderElectionConfig
from .log import get_logger
from .rest import RESTConfig

_log = get_logger("ballast.runtime.leaderelection")
STOP = b"stop\n"
CHILD_MODULE = f"{__package__}._leaderelection_child"  # not imported by the package: `-m` runs it once
_POLL_SECONDS = 0.2  # how soon `stop` is forwarded to the child


class ProcessLeaderElector:
    """`LeaseLeaderElector`'s contract (`run`, `is_leader`, `observed_leader`, `renewals`) with the loop in a child."""

    def __init__(
        self,
        rest_config: RESTConfig,
        config: LeaderElectionConfig,
        *,
        python: str = sys.executable,
        stop_timeout: float | None = None,
    ) -> None:
        self.rest_config = rest_config
        self.config = config
        self.python = python
        # Long enough for a release_on_cancel write bounded by the request timeout.
        self.stop_timeout = stop_timeout if stop_timeout is not None else config.request_timeout + 5.0
        self.renewals = 0
        self.renew_latencies: list[float] = []  # seconds per successful renewal, as timed in the child
        self.pid: int | None = None
        self._leading = threading.Event()
        self._leading_until = 0.0  # time.monotonic() as the child reported it
        self._observed_leader = ""
        self._status = metrics.LEADER_ELECTION_MASTER_STATUS.labels(config.name)
        self._slowpath = metrics.LEADER_ELECTION_SLOWPATH.labels(config.name)
        self._status.set(0)
        self.log = _log.with_values(lease=f"{config.namespace}/{config.name}", identity=config.identity)

    def is_leader(self) -> bool:
        return self._leading.is_set() and time.monotonic() < self._leading_until

    @property
    def leading_until(self) -> float:
        """`time.monotonic()` by which this replica stops leading unless the child reports a renewal first."""
        return self._leading_until

    @property
    def observed_leader(self) -> str:
        return self._observed_leader

    def run(
        self, stop: threading.Event, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None]
    ) -> None:
        """Start the child and follow it until `stop`, loss, or its exit; the contract of `LeaseLeaderElector.run`."""
        child = subprocess.Popen(
            [self.python, "-m", CHILD_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.pid = child.pid
        assert child.stdin is not None
        assert child.stdout is not None
        settings = {"rest": self.rest_config.portable(), "election": asdict(self.config)}
        stopped = _Once(on_stopped_leading)
        try:
            child.stdin.write(orjson.dumps(settings) + b"\n")
            child.stdin.flush()
            self._follow(child.stdout.fileno(), child.stdin, stop, on_started_leading, stopped)
        except BrokenPipeError:
            self.log.error("leader election process closed its pipe before reading its settings")
        finally:
            was_leading = self._leading.is_set()
            self._leading.clear()
            self._status.set(0)
            with contextlib.suppress(OSError, ValueError):
                child.stdin.close()  # EOF: a child still running (say, a callback raised) stops too
            code = _reap(child, self.stop_timeout)
            if code != 0 and not stop.is_set():
                self.log.error("leader election process exited with code %s", code, extra={"leading": was_leading})
            stopped()

    def _follow(
        self,
        reports: int,
        pipe: IO[bytes],
        stop: threading.Event,
        on_started_leading: Callable[[], None],
        stopped: _Once,
    ) -> None:
        """Read the child's reports until it exits; forward `stop`; step down on this clock when no renewal came.

        One thread reads and judges: after a starved spell it reads what is waiting in the pipe before deciding,
        so a renewal the child made in time is never mistaken for a lost lease.
        """
        os.set_blocking(reports, False)
        watcher = selectors.DefaultSelector()  # not select.select: the descriptor may be above 1024
        watcher.register(reports, selectors.EVENT_READ)
        pending = b""
        told = False
        while True:
            if stop.is_set() and not told:
                told = _tell_stop(pipe)
            wait = _POLL_SECONDS
            if self._leading.is_set():
                wait = min(wait, max(0.0, self._leading_until - time.monotonic()))
            if watcher.select(wait):
                try:
                    chunk = os.read(reports, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    return  # EOF: the child exited
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self._report(line, on_started_leading)
                continue  # read everything waiting before judging the deadline
            if self._leading.is_set() and time.monotonic() >= self._leading_until:
                if watcher.select(0):
                    continue  # a report came while this thread waited for the GIL after the wait: read it first
                self._leading.clear()
                self._status.set(0)
                self.log.error("no lease renewal within %.1fs: leadership lost", self.config.leading_grace)
                stopped()
                told = told or _tell_stop(pipe)

    def _report(self, line: bytes, on_started_leading: Callable[[], None]) -> None:
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            self.log.warning("leader election process wrote a stray line: %r", line[:200])
            return
        self._handle(message, on_started_leading)

    def _handle(self, message: dict[str, Any], on_started_leading: Callable[[], None]) -> None:
        event = message.get("event")
        if event == "started_leading":
            self._leading_until = float(message["until"])
            self._leading.set()
            self._status.set(1)
            on_started_leading()
        elif event == "stopped_leading":
            self._leading.clear()  # before the child exits: leader-only work stops as early as possible
            self._status.set(0)
        elif event == "renewed":
            self._leading_until = max(self._leading_until, float(message["until"]))
            self.renewals += 1
            self.renew_latencies.append(float(message["seconds"]))
            del self.renew_latencies[:-1000]
        elif event == "observed":
            self._observed_leader = str(message["leader"])
        elif event == "slowpath":
            self._slowpath.inc()
        elif event == "log":
            _log.log(int(message["level"]), "%s", message["msg"], extra=message.get("fields") or {})


class _Once:
    """Calls `callback` the first time it is called, from whichever thread gets there first."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self._callback = callback
        self._lock = threading.Lock()
        self._called = False

    def __call__(self) -> None:
        with self._lock:
            if self._called:
                return
            self._called = True
        self._callback()


def _tell_stop(pipe: IO[bytes]) -> bool:
    with contextlib.suppress(OSError, ValueError):  # the child is already gone, or run() closed the pipe
        pipe.write(STOP)
        pipe.close()
    return True


def _reap(child: subprocess.Popen[bytes], timeout: float) -> int:
    try:
        return child.wait(timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        return child.wait()


__all__ = [
    "CHILD_MODULE",
    "STOP",
    "ProcessLeaderElector",
]
