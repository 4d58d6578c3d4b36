"""Leader election as manager options on the real API server: the Lease named by `leader_election_id` is taken
in the given namespace, or in the one the service-account file names; released on cancel when asked."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from ballast.runtime import Client, Manager, RESTConfig
from ballast.runtime.envtest.wait import poll_until

LEASE = "coordination.k8s.io/v1/Lease"
FAST: dict[str, Any] = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.5}


def _run(manager: Manager) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=manager.start, args=(stop,), daemon=True)
    thread.start()
    return stop, thread


def _holder(client: Client, name: str, namespace: str) -> str:
    lease = client.get(LEASE, name, namespace)
    return str(lease["spec"].get("holderIdentity") or "")


@pytest.mark.parametrize("in_process", [False, True], ids=["child-process", "in-process"])
def test_the_manager_takes_the_lease_named_by_its_id(
    rest_config: RESTConfig, client: Client, envtest_namespace: str, in_process: bool
) -> None:
    manager = Manager(
        rest_config,
        leader_election=True,
        leader_election_id="x",
        leader_election_namespace=envtest_namespace,
        leader_election_in_process=in_process,
        leader_election_release_on_cancel=True,
        **FAST,
    )
    stop, thread = _run(manager)
    try:
        assert manager.elected.wait(20), "the manager never led"
        assert _holder(client, "x", envtest_namespace)
    finally:
        stop.set()
        thread.join(20)
    assert not thread.is_alive()
    # release on cancel: the holder is cleared, so a standby need not wait out the lease
    poll_until(lambda: _holder(client, "x", envtest_namespace) == "", timeout=10, what="the lease released")


def test_the_namespace_comes_from_the_service_account_file(
    rest_config: RESTConfig, client: Client, envtest_namespace: str, tmp_path: Path
) -> None:
    namespace_file = tmp_path / "namespace"
    namespace_file.write_text(envtest_namespace)
    manager = Manager(
        rest_config,
        leader_election=True,
        leader_election_id="from-file",
        service_account_namespace_file=namespace_file,
        **FAST,
    )
    stop, thread = _run(manager)
    try:
        assert manager.elected.wait(20), "the manager never led"
        assert _holder(client, "from-file", envtest_namespace)
    finally:
        stop.set()
        thread.join(20)


def test_outside_a_pod_without_a_namespace_start_up_fails_naming_the_file(
    rest_config: RESTConfig, tmp_path: Path
) -> None:
    missing = tmp_path / "serviceaccount" / "namespace"
    with pytest.raises(ValueError, match=f"{missing}.*not running in a pod"):
        Manager(rest_config, leader_election=True, leader_election_id="x", service_account_namespace_file=missing)
