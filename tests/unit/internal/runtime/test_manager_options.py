"""Leader election as manager options: which elector, which Lease, and start-up errors that name what is
missing (the Lease itself is taken on the real API server: tests/integration/.../test_manager_leader_election.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ballast.runtime import FakeAPI, LeaderElectionConfig, LeaseLeaderElector, Manager
from ballast.runtime.leaderelection import namespace_in_pod


def test_in_process_election_holds_the_named_lease_in_the_given_namespace(api: FakeAPI) -> None:
    manager = Manager(
        client=api.client(),
        leader_election=True,
        leader_election_id="x",
        leader_election_namespace="ops",
        leader_election_in_process=True,
        lease_duration=30.0,
        leader_election_release_on_cancel=True,
    )
    elector = manager._leader_elector
    assert isinstance(elector, LeaseLeaderElector)
    assert (elector.config.name, elector.config.namespace) == ("x", "ops")
    assert elector.config.lease_duration == 30.0
    assert elector.config.release_on_cancel


def test_the_namespace_is_read_from_the_service_account_file(api: FakeAPI, tmp_path: Path) -> None:
    path = tmp_path / "namespace"
    path.write_text("ballast-system\n")
    manager = Manager(
        client=api.client(),
        leader_election=True,
        leader_election_id="x",
        leader_election_in_process=True,
        service_account_namespace_file=path,
    )
    assert isinstance(manager._leader_elector, LeaseLeaderElector)
    assert manager._leader_elector.config.namespace == "ballast-system"


def test_an_id_is_required(api: FakeAPI) -> None:
    with pytest.raises(ValueError, match="needs a leader_election_id"):
        Manager(client=api.client(), leader_election=True, leader_election_namespace="ops")


def test_an_elector_and_the_option_are_refused_together(api: FakeAPI) -> None:
    client = api.client()
    elector = LeaseLeaderElector(client, LeaderElectionConfig(name="y", namespace="ops"))
    with pytest.raises(ValueError, match="not both"):
        Manager(client=client, leader_election=True, leader_election_id="x", leader_elector=elector)


def test_the_child_process_elector_needs_a_rest_config(api: FakeAPI) -> None:
    with pytest.raises(ValueError, match="needs a RESTConfig"):
        Manager(client=api.client(), leader_election=True, leader_election_id="x", leader_election_namespace="ops")


def test_an_empty_or_missing_namespace_file_is_named(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("")
    with pytest.raises(ValueError, match=f"{empty} is empty"):
        namespace_in_pod(empty)
    with pytest.raises(ValueError, match="not running in a pod"):
        namespace_in_pod(tmp_path / "missing")


def test_timings_are_checked_as_client_go_does(api: FakeAPI) -> None:
    with pytest.raises(ValueError, match="must be greater than the renew deadline"):
        Manager(
            client=api.client(),
            leader_election=True,
            leader_election_id="x",
            leader_election_namespace="ops",
            leader_election_in_process=True,
            lease_duration=5.0,
            renew_deadline=10.0,
        )
