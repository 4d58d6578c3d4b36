"""The child side of `ProcessLeaderElector`: run `LeaseLeaderElector` and report over stdout (see that module).

python -m ballast.runtime._leaderelection_child   # settings as one JSON line on stdin
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from typing import IO, Any

import orjson

from .leaderelection import LeaderElectionConfig, LeaseLeaderElector
from .leaderelection_process import STOP
from .log import get_logger, record_fields
from .rest import RESTConfig

_log = get_logger("ballast.runtime.leaderelection")


class _Emitter:
    """Writes events to stdout from any thread of the child; a closed pipe (the parent is gone) means stop."""

    def __init__(self, stream: IO[bytes], stop: threading.Event) -> None:
        self._stream = stream
        self._stop = stop
        self._lock = threading.Lock()

    def __call__(self, event: str, **fields: Any) -> None:
        with self._lock:
            try:
                self._stream.write(orjson.dumps({"event": event, **fields}, default=str) + b"\n")
                self._stream.flush()
            except (OSError, ValueError):
                self._stop.set()  # nobody listens: stop leading (releasing if configured), never crash


class _ForwardingHandler(logging.Handler):
    def __init__(self, emit: _Emitter) -> None:
        super().__init__()
        self._emit = emit

    def emit(self, record: logging.LogRecord) -> None:
        self._emit("log", level=record.levelno, msg=record.getMessage(), fields=record_fields(record))


class _Counter:
    """Stands in for a Prometheus counter child; each increment becomes an event for the parent's metric."""

    def __init__(self, emit: _Emitter, event: str) -> None:
        self._emit, self._event = emit, event

    def inc(self, amount: float = 1) -> None:
        self._emit(self._event)


class _ReportingElector(LeaseLeaderElector):
    def __init__(self, *args: Any, emit: _Emitter, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._emit = emit
        self._slowpath = _Counter(emit, "slowpath")  # type: ignore[assignment]
        self._leader_sent = ""

    def _attempt(self) -> bool:
        ok = super()._attempt()
        if self.observed_leader != self._leader_sent:
            self._leader_sent = self.observed_leader
            self._emit("observed", leader=self._leader_sent)
        return ok

    def _renewed(self, seconds: float) -> None:
        # The parent keeps the same deadline: RealClock is time.monotonic(), CLOCK_MONOTONIC machine-wide.
        self._emit("renewed", seconds=seconds, until=self.leading_until)


def _watch_parent(stop: threading.Event, stdin: IO[bytes]) -> None:
    for line in stdin:
        if line == STOP:
            break
    stop.set()  # "stop", or EOF: the parent closed the pipe or died


def _read_settings(stdin: IO[bytes]) -> tuple[RESTConfig, LeaderElectionConfig]:
    settings = orjson.loads(stdin.readline())
    missing = [key for key in ("rest", "election") if not isinstance(settings, dict) or key not in settings]
    if missing:
        raise ValueError(f"expected a JSON object with {' and '.join(repr(key) for key in missing)}")
    return RESTConfig.from_portable(settings["rest"]), LeaderElectionConfig(**settings["election"])


def main() -> int:
    # Ctrl-C reaches the whole process group: the parent decides when we stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    emit = _Emitter(sys.stdout.buffer, stop)
    root = logging.getLogger()
    root.addHandler(_ForwardingHandler(emit))
    root.setLevel(logging.INFO)
    try:
        rest_config, config = _read_settings(sys.stdin.buffer)
    except Exception as exc:  # whatever was wrong with them, say so and exit: the parent stops leading
        _log.error("leader election process: bad settings: %s", exc)
        return 2
    from .client import new_client  # noqa: PLC0415 - after the settings, so a bad pipe fails fast

    threading.Thread(target=_watch_parent, args=(stop, sys.stdin.buffer), daemon=True).start()
    elector = _ReportingElector(new_client(rest_config), config, emit=emit)
    elector.run(stop, lambda: emit("started_leading", until=elector.leading_until), lambda: emit("stopped_leading"))
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # The stdin watcher may still be blocked in a read (we stopped on our own: a lost lease); a normal
    # interpreter shutdown would abort on that thread's buffer lock.
    os._exit(code)
