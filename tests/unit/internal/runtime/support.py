"""Helpers shared by the runtime's unit tests."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ballast.runtime import Manager, Request
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.metrics import REGISTRY
from ballast.runtime.priorityqueue import PriorityQueue

T = TypeVar("T")


def eventually(condition: Callable[[], T | None], what: str, timeout: float = 5.0) -> T:
    """Poll `condition` every 5 ms until it is truthy (threads are involved, sleeps are not)."""
    return poll_until(condition, timeout=timeout, what=what, interval=0.005)


def configmap(
    name: str, namespace: str = "default", labels: dict[str, str] | None = None, **data: str
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels is not None:
        metadata["labels"] = labels
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    if data:
        obj["data"] = data
    return obj


class RecordingQueue(PriorityQueue[Request]):
    """A controller queue that also records what handlers add, with priorities."""

    def __init__(self) -> None:
        super().__init__()
        self.added: list[tuple[Request, int]] = []
        self._recorded = threading.Lock()

    def add(self, item: Request, *, priority: int = 0, after: float = 0.0, rate_limited: bool = False) -> None:
        with self._recorded:
            self.added.append((item, priority))
        super().add(item, priority=priority, after=after, rate_limited=rate_limited)


@contextlib.contextmanager
def running(manager: Manager, *, stop_timeout: float = 10.0) -> Iterator[Manager]:
    """Run the manager on a thread; stop it afterwards (waiting up to `stop_timeout` s) and surface its failure."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            manager.start()
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield manager
    finally:
        manager.stop()
        thread.join(stop_timeout)
        assert not thread.is_alive(), "the manager did not stop"
    if failure:
        raise failure[0]


def sample(metric: str, **labels: str) -> float:
    """A sample of the runtime's registry (0 when the series does not exist yet)."""
    return REGISTRY.get_sample_value(metric, labels) or 0.0


class Calls:
    """Thread-safe count of reconciles per request."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._lock = threading.Lock()

    def record(self, request: Request) -> int:
        with self._lock:
            self.requests.append(request)
            return self.requests.count(request)

    def count(self, request: Request) -> int:
        with self._lock:
            return self.requests.count(request)

    def seen(self) -> list[Request]:
        with self._lock:
            return list(self.requests)
