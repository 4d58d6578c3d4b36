"""Lease leader election against the real API server: one leader at a time, handovers, release."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.runtime import Client, LeaderElectionConfig, LeaseLeaderElector, Manager, RESTConfig
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.manager import ManagerError
from ballast.runtime.rest import Transport

# Short timings keep the tests quick; the relations between them are the production ones.
pytestmark = pytest.mark.alone  # handover bounds in seconds: a busy neighbour would stretch them
FAST = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.25}
HANDOVER_BOUND = FAST["lease_duration"] + 2 * FAST["retry_period"] * (1 + 1.2)


def fast_config(name: str, namespace: str, **options: Any) -> LeaderElectionConfig:
    return LeaderElectionConfig(name=name, namespace=namespace, **{**FAST, **options})


class FlakyClient(APIServerClient):
    """A real client that can be cut off from the API server (a partitioned replica)."""

    partitioned = False

    def get(self, *args: Any, **kwargs: Any) -> Any:
        if self.partitioned:
            raise ConnectionError("partitioned")
        return super().get(*args, **kwargs)

    def update(self, *args: Any, **kwargs: Any) -> Any:
        if self.partitioned:
            raise ConnectionError("partitioned")
        return super().update(*args, **kwargs)


class Replica:
    """One elector on its own thread, as one operator replica would run it."""

    def __init__(self, rest_config: RESTConfig, name: str, namespace: str, **options: Any) -> None:
        self.client = FlakyClient(Transport(rest_config))
        self.elector = LeaseLeaderElector(self.client, fast_config(name, namespace, **options))
        self.stop = threading.Event()
        self.started_leading: list[float] = []
        self.stopped_leading: list[float] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        self.elector.run(
            self.stop,
            lambda: self.started_leading.append(time.monotonic()),
            lambda: self.stopped_leading.append(time.monotonic()),
        )

    def start(self) -> Replica:
        self.thread.start()
        return self

    def kill(self) -> None:
        """Stop without releasing (what a crashed pod leaves behind is a lease that runs out)."""
        self.stop.set()
        self.thread.join(10)


@contextlib.contextmanager
def never_two_leaders(replicas: list[Replica]) -> Iterator[list[int]]:
    """Sample every 5 ms that at most one replica believes it leads; yields the observed maximum."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], sum(r.elector.is_leader() for r in replicas))
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()
    assert peak[0] <= 1, "two replicas acted as leader at the same time"


def _leaders(replicas: list[Replica]) -> list[Replica]:
    return [r for r in replicas if r.elector.is_leader()]


def _lease(client: Client, namespace: str, name: str) -> dict[str, Any]:
    lease: dict[str, Any] = client.get("coordination.k8s.io/v1/Lease", name, namespace)
    return lease


def test_three_replicas_one_leader_and_a_crash_hands_over_in_time(
    rest_config: RESTConfig, client: Client, envtest_namespace: str
) -> None:
    replicas = [Replica(rest_config, "lock", envtest_namespace).start() for _ in range(3)]
    try:
        with never_two_leaders(replicas):
            poll_until(lambda: len(_leaders(replicas)) == 1, timeout=10, what="one leader")
            (first,) = _leaders(replicas)
            assert _lease(client, envtest_namespace, "lock")["spec"]["holderIdentity"] == first.elector.config.identity
            transitions = _lease(client, envtest_namespace, "lock")["spec"]["leaseTransitions"]
            killed_at = time.monotonic()
            first.kill()
            survivors = [r for r in replicas if r is not first]
            poll_until(lambda: len(_leaders(survivors)) == 1, timeout=10, what="a new leader")
            handover = time.monotonic() - killed_at
            (second,) = _leaders(survivors)
            lease = _lease(client, envtest_namespace, "lock")["spec"]
        assert handover <= HANDOVER_BOUND + 0.5, f"handover took {handover:.2f}s"
        assert lease["holderIdentity"] == second.elector.config.identity
        assert lease["leaseTransitions"] == transitions + 1
    finally:
        for replica in replicas:
            replica.kill()


def test_a_partitioned_leader_steps_down_before_anyone_else_takes_over(
    rest_config: RESTConfig, envtest_namespace: str
) -> None:
    replicas = [Replica(rest_config, "partition", envtest_namespace).start() for _ in range(2)]
    try:
        with never_two_leaders(replicas):
            poll_until(lambda: len(_leaders(replicas)) == 1, timeout=10, what="one leader")
            (leader,) = _leaders(replicas)
            (standby,) = [r for r in replicas if r is not leader]
            leader.client.partitioned = True
            poll_until(lambda: leader.stopped_leading, timeout=10, what="the partitioned leader to step down")
            poll_until(standby.elector.is_leader, timeout=10, what="the standby to take over")
        # It stopped within the renew deadline; the standby waited for the whole lease duration.
        assert leader.stopped_leading[0] < standby.started_leading[0]
    finally:
        for replica in replicas:
            replica.kill()


def test_graceful_release_hands_over_within_one_retry_period(
    rest_config: RESTConfig, client: Client, envtest_namespace: str
) -> None:
    first = Replica(rest_config, "release", envtest_namespace, release_on_cancel=True).start()
    poll_until(first.elector.is_leader, timeout=10, what="the first leader")
    second = Replica(rest_config, "release", envtest_namespace).start()
    time.sleep(0.3)
    try:
        with never_two_leaders([first, second]):
            released_at = time.monotonic()
            first.kill()  # release_on_cancel: the lease is cleared on the way out
            assert _lease(client, envtest_namespace, "release")["spec"].get("holderIdentity", "") in (
                "",
                second.elector.config.identity,
            )
            poll_until(second.elector.is_leader, timeout=10, what="the standby")
            handover = time.monotonic() - released_at
        assert handover <= FAST["retry_period"] * (1 + 1.2) + 0.5, f"handover took {handover:.2f}s"
    finally:
        second.kill()


def test_leader_only_runnables_follow_the_lease_and_a_lost_lease_stops_the_manager(
    rest_config: RESTConfig, envtest_namespace: str
) -> None:
    class Probe:
        def __init__(self, leader_only: bool) -> None:
            self.leader_only = leader_only
            self.running = threading.Event()

        def need_leader_election(self) -> bool:
            return self.leader_only

        def start(self, stop: threading.Event) -> None:
            self.running.set()
            stop.wait()
            self.running.clear()

    client = FlakyClient(Transport(rest_config))
    elector = LeaseLeaderElector(client, fast_config("manager", envtest_namespace))
    everywhere, leader_only = Probe(False), Probe(True)
    manager = Manager(client=client, leader_elector=elector)
    manager.add(everywhere)
    manager.add(leader_only)
    failure: list[BaseException] = []
    thread = threading.Thread(target=lambda: _run(manager, failure), daemon=True)
    thread.start()
    poll_until(everywhere.running.is_set, timeout=10, what="the everywhere runnable")
    poll_until(leader_only.running.is_set, timeout=10, what="the leader-only runnable after election")
    client.partitioned = True
    thread.join(15)
    assert not thread.is_alive()
    poll_until(lambda: not leader_only.running.is_set(), timeout=2, what="the leader-only runnable to stop")
    assert isinstance(failure[0], ManagerError)
    assert "leader election lost" in str(failure[0])


def _run(manager: Manager, failure: list[BaseException]) -> None:
    try:
        manager.start()
    except BaseException as exc:
        failure.append(exc)


def test_invalid_timings_are_refused() -> None:
    with pytest.raises(ValueError, match="must be greater than the renew deadline"):
        LeaderElectionConfig(name="x", namespace="y", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError, match=r"greater than 1\.2 × retry period"):
        LeaderElectionConfig(name="x", namespace="y", renew_deadline=2, retry_period=2)
