"""`ballastd uninstall` on the in-memory API: the install is marked, the operator is stopped first, then only our
finalizer goes; the CRDs are called deletable only when no finalizer comes back and no one holds the Lease."""

from __future__ import annotations

import argparse
import copy
import datetime
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.internal.cmd import ballastd
from ballast.internal.cmd.uninstall import remove_finalizer
from ballast.internal.enrollment import LEADER_ELECTION_ID, PROFILE_CLEANUP_FINALIZER, UNINSTALLING_ANNOTATION
from ballast.runtime import Client, FakeAPI, GroupVersionKind

WORKLOAD_PROFILE = GroupVersionKind("ballast.tightlinesoftware.com", "v1", "WorkloadProfile")
BALLAST_CONFIG = GroupVersionKind("ballast.tightlinesoftware.com", "v1", "BallastConfig")
LEASE = GroupVersionKind("coordination.k8s.io", "v1", "Lease")
OTHER_FINALIZER = "example.com/keep-me"
NAMESPACE = "ballast-system"
SELECTOR = {"app.kubernetes.io/name": "ballast", "app.kubernetes.io/component": "operator"}


@pytest.fixture
def api() -> FakeAPI:
    fake = FakeAPI()
    fake.register(WORKLOAD_PROFILE, "workloadprofiles", namespaced=False)
    fake.register(BALLAST_CONFIG, "ballastconfigs", namespaced=False)
    fake.register(LEASE, "leases", namespaced=True, status=False)
    return fake


@pytest.fixture
def client(api: FakeAPI) -> Client:
    return api.client()


def _args(*argv: str) -> argparse.Namespace:
    quiet = "--uninstall-quiet-period=0"  # a test that watches for finalizers coming back sets its own
    return ballastd.build_parser().parse_args(["uninstall", f"--operator-namespace={NAMESPACE}", quiet, *argv])


def _profile(client: Client, name: str, finalizers: list[str]) -> dict[str, Any]:
    body = {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile",
            "metadata": {"name": name, "finalizers": finalizers}, "spec": {}}  # fmt: skip
    created: dict[str, Any] = client.create(body)
    return created


def _deployment(client: Client, replicas: int = 2) -> None:
    client.create({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ballast", "namespace": NAMESPACE},
        "spec": {"replicas": replicas, "selector": {"matchLabels": SELECTOR},
                 "template": {"metadata": {"labels": SELECTOR}, "spec": {"containers": []}}},
    })  # fmt: skip


def _pod(client: Client, name: str, labels: dict[str, str]) -> None:
    metadata = {"name": name, "namespace": NAMESPACE, "labels": labels}
    client.create({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {"containers": []}})


def _finalizers(client: Client, name: str) -> list[str]:
    return list(client.get(WORKLOAD_PROFILE, name)["metadata"].get("finalizers") or [])


def test_finalizers_go_and_foreign_ones_stay(client: Client, capsys: pytest.CaptureFixture[str]) -> None:
    _profile(client, "billing--api--default-a9696153", [PROFILE_CLEANUP_FINALIZER])
    _profile(client, "web--ui--default-a9696153", [OTHER_FINALIZER, PROFILE_CLEANUP_FINALIZER])
    _profile(client, "never-finalized", [])
    _deployment(client)
    assert ballastd.uninstall(_args("--deployment=ballast"), client) == 0
    assert _finalizers(client, "billing--api--default-a9696153") == []
    assert _finalizers(client, "web--ui--default-a9696153") == [OTHER_FINALIZER]
    assert client.get("apps/v1/Deployment", "ballast", NAMESPACE)["spec"]["replicas"] == 0
    out = capsys.readouterr().out
    assert "deployment.apps/ballast scaled to 0" in out
    assert f"removed finalizer {PROFILE_CLEANUP_FINALIZER} from 2 WorkloadProfiles" in out


def test_a_conflicting_write_is_retried_from_a_fresh_read(client: Client) -> None:
    stale = _profile(client, "p", [PROFILE_CLEANUP_FINALIZER])
    fresh = copy.deepcopy(stale)
    fresh["metadata"]["labels"] = {"changed": "meanwhile"}
    client.update(fresh)  # bumps the resourceVersion: `stale` now conflicts
    assert remove_finalizer(client, stale, PROFILE_CLEANUP_FINALIZER) == 1
    assert _finalizers(client, "p") == []
    assert client.get(WORKLOAD_PROFILE, "p")["metadata"]["labels"] == {"changed": "meanwhile"}


def test_a_profile_deleted_meanwhile_counts_as_done(client: Client) -> None:
    stale = _profile(client, "gone", [PROFILE_CLEANUP_FINALIZER])
    client.patch(stale, {"metadata": {"finalizers": []}})
    client.delete(stale)
    assert remove_finalizer(client, stale, PROFILE_CLEANUP_FINALIZER) == 0


def test_operator_pods_that_stay_fail_the_uninstall_before_any_finalizer_goes(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    _profile(client, "p", [PROFILE_CLEANUP_FINALIZER])
    _deployment(client)
    _pod(client, "ballast-7d9f-abcde", SELECTOR)  # no controller here to remove it
    _pod(client, "unrelated", {"app.kubernetes.io/name": "other"})
    assert ballastd.uninstall(_args("--deployment=ballast", "--uninstall-timeout=0"), client) == 1
    assert "operator pods still present after 0s: ballast-7d9f-abcde" in capsys.readouterr().err
    assert _finalizers(client, "p") == [PROFILE_CLEANUP_FINALIZER]


def test_a_missing_deployment_is_reported_and_the_finalizers_still_go(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    _profile(client, "p", [PROFILE_CLEANUP_FINALIZER])
    assert ballastd.uninstall(_args("--deployment=ballast"), client) == 0
    assert "deployment.apps/ballast not found in ballast-system" in capsys.readouterr().out
    assert _finalizers(client, "p") == []


def test_without_deployment_a_warning_says_the_operator_may_add_them_back(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ballastd.uninstall(_args(), client) == 0
    captured = capsys.readouterr()
    assert "a running operator adds its finalizers back" in captured.err
    assert "from 0 WorkloadProfiles" in captured.out


def test_without_the_crd_there_is_nothing_to_free(capsys: pytest.CaptureFixture[str]) -> None:
    client = FakeAPI().client()  # WorkloadProfile not served: the CRDs are gone already
    assert ballastd.uninstall(_args(), client) == 0
    assert "no WorkloadProfile CRD is served" in capsys.readouterr().out


@pytest.fixture
def running_operator(client: Client) -> Iterator[None]:
    """An operator without leader election that nobody stopped: it puts the finalizer back on every profile."""
    stop = threading.Event()

    def put_back() -> None:
        while not stop.wait(0.01):
            for profile in client.list(WORKLOAD_PROFILE).items:
                if PROFILE_CLEANUP_FINALIZER not in (profile["metadata"].get("finalizers") or []):
                    client.patch(profile, {"metadata": {"finalizers": [PROFILE_CLEANUP_FINALIZER]}})

    thread = threading.Thread(target=put_back, daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join()


def test_a_finalizer_that_comes_back_names_the_running_operator_and_fails(
    client: Client, running_operator: None, capsys: pytest.CaptureFixture[str]
) -> None:
    _profile(client, "billing--api--default-a9696153", [PROFILE_CLEANUP_FINALIZER])
    assert ballastd.uninstall(_args("--uninstall-quiet-period=2"), client) == 1
    captured = capsys.readouterr()
    assert "came back on 1 WorkloadProfiles (billing--api--default-a9696153)" in captured.err
    assert "an operator is still running" in captured.err
    assert "the CRDs can be deleted" not in captured.out


def test_the_install_is_marked_on_the_ballast_config_before_any_finalizer_goes(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    client.create({"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "BallastConfig",
                   "metadata": {"name": "ballast"}, "spec": {}})  # fmt: skip
    _profile(client, "p", [PROFILE_CLEANUP_FINALIZER])
    assert ballastd.uninstall(_args(), client) == 0
    annotations = client.get(BALLAST_CONFIG, "ballast")["metadata"]["annotations"]
    assert datetime.datetime.fromisoformat(annotations[UNINSTALLING_ANNOTATION])
    assert "the CRDs can be deleted" in capsys.readouterr().out


def _lease(client: Client, holder: str, renewed: datetime.datetime) -> None:
    renew_time = renewed.isoformat(timespec="microseconds").replace("+00:00", "Z")
    client.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                   "metadata": {"name": LEADER_ELECTION_ID, "namespace": NAMESPACE},
                   "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15,
                            "renewTime": renew_time}})  # fmt: skip


def test_a_lease_still_renewed_names_its_holder_and_fails(client: Client, capsys: pytest.CaptureFixture[str]) -> None:
    _lease(client, "ballast-7d9f-abcde_1234", datetime.datetime.now(datetime.UTC))
    assert ballastd.uninstall(_args("--uninstall-timeout=0"), client) == 1
    assert f"Lease {NAMESPACE}/{LEADER_ELECTION_ID} is held by ballast-7d9f-abcde_1234" in capsys.readouterr().err


def test_an_expired_lease_lets_the_crds_go(client: Client, capsys: pytest.CaptureFixture[str]) -> None:
    _lease(client, "ballast-7d9f-abcde_1234", datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=16))
    assert ballastd.uninstall(_args("--uninstall-timeout=0"), client) == 0
    assert "the CRDs can be deleted" in capsys.readouterr().out
