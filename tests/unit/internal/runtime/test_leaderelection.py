"""Leader election's step-down bound on the in-memory API, for both electors and both timing sets: a leader
that cannot renew stops leading no later than retry_period + renew_deadline after the start of its last
successful renewal — whether its requests hang, fail fast and then hang, or ignore every deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes.client import Configuration

from ballast.runtime import FakeAPI, LeaderElectionConfig, LeaseLeaderElector, ProcessLeaderElector, RESTConfig
from ballast.runtime.envtest.wait import poll_until

from .partition import Partition, partitioned_client, serve_over_http

# lease duration / renew deadline / retry period: equality (step-down at lease expiry), and the defaults.
TIMINGS = {"4/3/1": (4.0, 3.0, 1.0), "15/10/2": (15.0, 10.0, 2.0)}
# Left once the deadline is kept: waking a thread, and for the child one pipe hop.
SLACK = 0.3


class Followed:
    """An elector run on a thread, its callbacks timed and `is_leader()` sampled every 2 ms."""

    def __init__(self, elector: LeaseLeaderElector | ProcessLeaderElector) -> None:
        self.elector = elector
        self.stop = threading.Event()
        self.started = threading.Event()
        self.stopped_at: list[float] = []
        self.last_seen_leading = 0.0
        self._threads = [
            threading.Thread(target=self._run, daemon=True),
            threading.Thread(target=self._sample, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _run(self) -> None:
        self.elector.run(self.stop, self.started.set, lambda: self.stopped_at.append(time.monotonic()))

    def _sample(self) -> None:
        while not self.stop.is_set():
            if self.elector.is_leader():
                self.last_seen_leading = time.monotonic()
            time.sleep(0.002)

    def finish(self) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(30)


def cut_after_a_renewal(partition: Partition, steps: list[tuple[str, float]]) -> None:
    """Wait for a renewal (a lease write after the first), then apply each (mode, seconds-later) step."""
    writes = len(partition.lease_writes)
    poll_until(lambda: len(partition.lease_writes) > max(writes, 1), timeout=30, interval=0.001, what="a renewal")
    for mode, after in steps:
        if after:
            time.sleep(after)
        partition.cut(mode)


def failure_steps(failure: str, retry_period: float) -> list[tuple[str, float]]:
    if failure == "fail-then-hang":
        return [("fail", 0.0), ("hang", 2 * retry_period)]  # fast failures use up part of the deadline first
    return [(failure, 0.0)]


def election(timings: str) -> LeaderElectionConfig:
    lease, renew, retry = TIMINGS[timings]
    return LeaderElectionConfig(
        name="lock", namespace="default", lease_duration=lease, renew_deadline=renew, retry_period=retry
    )


def in_process(api: FakeAPI, partition: Partition, config: LeaderElectionConfig) -> LeaseLeaderElector:
    return LeaseLeaderElector(partitioned_client(api, partition), config)


@pytest.fixture
def over_http(api: FakeAPI, partition: Partition) -> Iterator[RESTConfig]:
    with serve_over_http(api, partition) as url:
        yield RESTConfig(Configuration(host=url))


@pytest.fixture
def partition() -> Iterator[Partition]:
    partition = Partition()
    yield partition
    partition.heal()


def assert_steps_down_in_time(followed: Followed, partition: Partition, config: LeaderElectionConfig) -> None:
    poll_until(lambda: followed.stopped_at, timeout=config.lease_duration + 10, what="the step-down")
    last_renewal = partition.last_lease_write
    stepped_down = followed.stopped_at[0] - last_renewal
    stopped_acting = followed.last_seen_leading - last_renewal
    bound = config.retry_period + config.renew_deadline
    assert stopped_acting <= bound, f"is_leader() still true {stopped_acting:.2f}s after the last renewal"
    assert stepped_down <= bound + SLACK, f"stepped down {stepped_down:.2f}s after the last renewal (bound {bound})"
    assert stepped_down >= bound - SLACK, f"stepped down early: {stepped_down:.2f}s (the deadline is {bound})"
    assert not followed.elector.is_leader()


CASES = [
    pytest.param(timings, failure, id=f"{timings}-{failure}")
    for timings in TIMINGS
    for failure in ("hang", "fail-then-hang")
]


@pytest.mark.parametrize(
    ("timings", "failure"), [*CASES, pytest.param("4/3/1", "hang-forever", id="4/3/1-hang-forever")]
)
def test_in_process_elector_steps_down_by_its_renew_deadline(
    api: FakeAPI, partition: Partition, timings: str, failure: str
) -> None:
    config = election(timings)
    followed = Followed(in_process(api, partition, config))
    try:
        poll_until(followed.started.is_set, timeout=10, what="leadership")
        cut_after_a_renewal(partition, failure_steps(failure, config.retry_period))
        assert_steps_down_in_time(followed, partition, config)
    finally:
        followed.finish()


@pytest.mark.parametrize(("timings", "failure"), CASES)
def test_process_elector_steps_down_by_its_renew_deadline(
    api: FakeAPI, partition: Partition, over_http: RESTConfig, timings: str, failure: str
) -> None:
    config = election(timings)
    followed = Followed(ProcessLeaderElector(over_http, config))
    try:
        poll_until(followed.started.is_set, timeout=20, what="leadership")
        cut_after_a_renewal(partition, failure_steps(failure, config.retry_period))
        assert_steps_down_in_time(followed, partition, config)
    finally:
        followed.finish()


def test_a_healthy_leader_keeps_leading(api: FakeAPI, partition: Partition) -> None:
    config = election("4/3/1")
    followed = Followed(in_process(api, partition, config))
    try:
        poll_until(followed.started.is_set, timeout=10, what="leadership")
        window = 2 * (config.retry_period + config.renew_deadline)
        time.sleep(window)
        assert followed.elector.is_leader()
        assert followed.stopped_at == []
        # Each cycle takes at most the retry period plus one request timeout: the count the timings promise.
        assert followed.elector.renewals >= int(window / (config.retry_period + config.request_timeout))
    finally:
        followed.finish()


def test_the_parent_steps_down_on_its_own_clock_when_renewals_stop_arriving(
    api: FakeAPI, partition: Partition, over_http: RESTConfig
) -> None:
    """The child keeps renewing, but its reports no longer reach the parent (a starved reader): the parent stops
    leader-only work when no renewal arrived within retry + renew deadline, and tells the child to stop."""
    config = election("4/3/1")
    elector = ProcessLeaderElector(over_http, config)
    deaf = threading.Event()
    handle = elector._handle

    def starved(message: dict[str, Any], on_started_leading: Any) -> None:
        if deaf.is_set() and message.get("event") == "renewed":
            return  # as if this line were still waiting for the parent's GIL
        handle(message, on_started_leading)

    elector._handle = starved  # type: ignore[method-assign]
    followed = Followed(elector)
    try:
        poll_until(followed.started.is_set, timeout=20, what="leadership")
        poll_until(lambda: elector.renewals >= 1, timeout=10, what="a renewal report")
        deaf.set()
        deaf_at = time.monotonic()
        poll_until(lambda: followed.stopped_at, timeout=15, what="the parent to step down")
        assert followed.stopped_at[0] - deaf_at <= config.retry_period + config.renew_deadline + SLACK
        assert not elector.is_leader()
        assert len(partition.lease_writes) >= 3  # the child was renewing all along
    finally:
        followed.finish()


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "accepted"),
    [(4.0, 3.0, 1.0, True), (15.0, 10.0, 2.0, True), (4.0, 3.0, 1.5, False), (15.0, 12.0, 4.0, False)],
)
def test_timings_whose_step_down_could_outlast_the_lease_are_refused(
    lease: float, renew: float, retry: float, accepted: bool
) -> None:
    def config() -> LeaderElectionConfig:
        return LeaderElectionConfig(
            name="l", namespace="n", lease_duration=lease, renew_deadline=renew, retry_period=retry
        )

    if accepted:
        assert config().leading_grace == retry + renew
        return
    with pytest.raises(ValueError, match="must not exceed the lease duration") as refused:
        config()
    for value in (lease, renew, retry):
        assert f"({value}s)" in str(refused.value)
