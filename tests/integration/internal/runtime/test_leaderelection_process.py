"""Leader election in a child interpreter against the real API server: renewals under GIL load, release,
and each side noticing when the other dies."""

from __future__ import annotations

import logging
import os
import signal
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from ballast.runtime import Client, LeaderElectionConfig, LeaseLeaderElector, ProcessLeaderElector, RESTConfig
from ballast.runtime.envtest.wait import poll_until

pytestmark = pytest.mark.alone  # lease timings in seconds: a busy neighbour would stretch them
LEASE = "coordination.k8s.io/v1/Lease"
TIMINGS: dict[str, Any] = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.5}


class ProcessReplica:
    """A `ProcessLeaderElector` followed on a thread, recording its callbacks."""

    def __init__(self, rest_config: RESTConfig, name: str, namespace: str, **options: Any) -> None:
        config = LeaderElectionConfig(name=name, namespace=namespace, **{**TIMINGS, **options})
        self.elector = ProcessLeaderElector(rest_config, config)
        self.stop = threading.Event()
        self.started_leading: list[float] = []
        self.stopped_leading: list[float] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.elector.run(
            self.stop,
            lambda: self.started_leading.append(time.monotonic()),
            lambda: self.stopped_leading.append(time.monotonic()),
        )

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(15)
        assert not self.thread.is_alive()


def _exited(pid: int) -> bool:
    """True once `pid` is gone or a zombie (an orphan waits for init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def _round_trip(client: Client, namespace: str) -> float:
    began = time.monotonic()
    client.get(LEASE, "load", namespace)
    return time.monotonic() - began


def test_renewal_does_not_starve_behind_cpu_heavy_decoding(
    rest_config: RESTConfig, client: Client, envtest_namespace: str
) -> None:
    """Four threads decode large JSON bodies flat out (each decode holds the GIL ~60 ms) while the leader
    renews every 0.5 s with a 2 s renew deadline: the lease is never lost and every renewal stays fast. That
    the load was real is shown against this process's own API calls, measured idle first: a ratio in one run,
    whatever the machine's speed."""
    body = orjson.dumps(
        [{"metadata": {"name": f"pod-{i}", "labels": {"app": "x" * 20}}, "spec": {"n": i}} for i in range(40_000)]
    )
    stop = threading.Event()

    def burn() -> None:
        while not stop.is_set():
            orjson.loads(body)

    replica = ProcessReplica(rest_config, "load", envtest_namespace)
    try:
        poll_until(replica.elector.is_leader, timeout=20, what="leadership")
        idle = statistics.median(_round_trip(client, envtest_namespace) for _ in range(5))
        burners = [threading.Thread(target=burn, daemon=True) for _ in range(4)]
        for burner in burners:
            burner.start()
        renewals_before = replica.elector.renewals
        window_ends = time.monotonic() + 8
        loaded = []
        while time.monotonic() < window_ends:
            loaded.append(_round_trip(client, envtest_namespace))
        stop.set()
        for burner in burners:
            burner.join()
        config = replica.elector.config
        # The parent may still be reading the child's last reports it could not read under the load.
        poll_until(replica.elector.is_leader, timeout=5, what="the parent to catch up with the renewals")
        assert replica.stopped_leading == []  # and it never stepped down
        # Each cycle takes at most the retry period plus one request timeout.
        assert replica.elector.renewals - renewals_before >= int(8 / (config.retry_period + config.request_timeout))
        assert max(replica.elector.renew_latencies) < config.request_timeout  # as timed in the child
        assert statistics.median(loaded) > 5 * idle, (idle, loaded)  # and the load starved this process
    finally:
        stop.set()
        replica.finish()
    assert replica.stopped_leading
    assert not replica.elector.is_leader()


def test_stop_releases_the_lease_for_a_standby(rest_config: RESTConfig, client: Client, envtest_namespace: str) -> None:
    replica = ProcessReplica(rest_config, "release", envtest_namespace, release_on_cancel=True)
    poll_until(replica.elector.is_leader, timeout=20, what="leadership")
    holder = replica.elector.config.identity
    assert client.get(LEASE, "release", envtest_namespace)["spec"]["holderIdentity"] == holder
    assert replica.elector.observed_leader == holder
    replica.finish()
    assert len(replica.stopped_leading) == 1
    assert client.get(LEASE, "release", envtest_namespace)["spec"]["holderIdentity"] == ""
    standby = LeaseLeaderElector(client, LeaderElectionConfig(name="release", namespace=envtest_namespace))
    assert standby.try_acquire_or_renew()  # at once, without waiting out the 3 s lease
    assert replica.elector.pid is not None
    assert _exited(replica.elector.pid)


def test_a_dead_child_stops_leadership_at_once(rest_config: RESTConfig, envtest_namespace: str) -> None:
    replica = ProcessReplica(rest_config, "crash", envtest_namespace)
    poll_until(replica.elector.is_leader, timeout=20, what="leadership")
    assert replica.elector.pid is not None
    os.kill(replica.elector.pid, signal.SIGKILL)
    replica.thread.join(5)
    assert not replica.thread.is_alive()
    assert not replica.elector.is_leader()
    assert len(replica.stopped_leading) == 1


@pytest.mark.parametrize("release", [False, True])
def test_the_child_stops_renewing_when_its_parent_is_killed(
    rest_config: RESTConfig, client: Client, envtest_namespace: str, tmp_path: Path, release: bool
) -> None:
    """A parent killed with SIGKILL cannot say stop: the child notices the closed pipe and stops renewing; a
    standby takes over once the lease runs out — at once when the child releases it on the way out."""
    lease = f"orphan-{release}".lower()
    settings = tmp_path / "rest.json"
    settings.write_bytes(orjson.dumps(rest_config.portable()))
    script = textwrap.dedent(f"""
        import sys, threading, orjson
        from pathlib import Path
        from ballast.runtime.leaderelection import LeaderElectionConfig
        from ballast.runtime.leaderelection_process import ProcessLeaderElector
        from ballast.runtime.rest import RESTConfig
        rest = RESTConfig.from_portable(orjson.loads(Path({str(settings)!r}).read_bytes()))
        config = LeaderElectionConfig(name={lease!r}, namespace={envtest_namespace!r}, lease_duration=3.0,
                                      renew_deadline=2.0, retry_period=0.5, release_on_cancel={release!r})
        elector = ProcessLeaderElector(rest, config)
        def started():
            print(elector.pid, flush=True)
        elector.run(threading.Event(), started, lambda: None)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child_pid = int(parent.stdout.readline())
        renewed = client.get(LEASE, lease, envtest_namespace)["spec"]["renewTime"]
        poll_until(
            lambda: client.get(LEASE, lease, envtest_namespace)["spec"]["renewTime"] != renewed,
            timeout=5,
            what="a renewal by the child",
        )
    finally:
        parent.kill()
        parent.wait()
    poll_until(lambda: _exited(child_pid), timeout=5, what="the orphaned election process to exit")
    standby = LeaseLeaderElector(client, LeaderElectionConfig(name=lease, namespace=envtest_namespace, **TIMINGS))
    if release:
        assert client.get(LEASE, lease, envtest_namespace)["spec"]["holderIdentity"] == ""
        assert standby.try_acquire_or_renew()  # released: no need to wait out the lease
    else:
        poll_until(standby.try_acquire_or_renew, timeout=8, interval=0.25, what="the standby to take over")


def test_bad_settings_are_reported_and_never_lead(
    rest_config: RESTConfig, envtest_namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    broken = RESTConfig(rest_config.configuration)
    broken.portable = lambda: {"configuration": {"host": "https://127.0.0.1:1", "colour": "blue"}}  # type: ignore[method-assign]
    caplog.set_level(logging.INFO, logger="ballast.runtime.leaderelection")
    replica = ProcessReplica(broken, "broken", envtest_namespace)
    replica.thread.join(15)
    assert not replica.thread.is_alive()
    assert replica.started_leading == []
    assert len(replica.stopped_leading) == 1
    messages = [record.getMessage() for record in caplog.records]
    assert any("bad settings" in m and "unknown REST configuration settings: colour" in m for m in messages)
    assert any("exited with code 2" in m for m in messages)
