"""Enrollment, profile lifecycle, policy status, kill switch and migration against the real API server."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from ballast.api.ballast.v1 import ClusterResourcePolicy, WorkloadProfile
from ballast.internal.cmd.wiring import CONTROLLERS, Dependencies, add_core_lanes, new_manager
from ballast.internal.enrollment import LEGACY_POD_FINALIZER, POLICY_REF, PROFILE_REF
from ballast.internal.history import Cycle, Sample, SeriesKey, open_store
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.runtime import NotFoundError
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from tests.unit.internal.runtime.support import running

from .conftest import CRP, Operator, ballast_config, pod

# The operator's lanes are given 20 s to react: beside another worker on a busy machine they did not (2026-12-06).
pytestmark = pytest.mark.alone


@pytest.fixture
def namespaces(new_namespace: Callable[[str], str]) -> list[str]:
    return [new_namespace("team"), new_namespace("team")]


def _profile(client: APIServerClient, name: str) -> WorkloadProfile | None:
    try:
        profile: WorkloadProfile = client.get(WorkloadProfile, name)
    except NotFoundError:
        return None
    return profile


def _active(client: APIServerClient, name: str) -> int | None:
    profile = _profile(client, name)
    return profile.status.active_workloads if profile and profile.status else None


def _annotations(client: APIServerClient, namespace: str, name: str) -> dict[str, Any]:
    return dict(client.get("v1/Pod", name, namespace)["metadata"].get("annotations") or {})


def test_pods_of_one_tuple_in_two_namespaces_share_one_profile(
    operator: Operator, operator_client: APIServerClient, apply_config: Any, default_policy: str, namespaces: list[str]
) -> None:
    apply_config(ballast_config())
    labels = {"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "api"}
    for index, namespace in enumerate(namespaces):
        operator_client.create(pod(f"billing-{index}", namespace, labels))
    name = "billing--api--default-a9696153"
    poll_until(lambda: _active(operator_client, name) == 2, timeout=20, what="one profile counting both pods")
    profile = _profile(operator_client, name)
    assert profile is not None
    assert profile.status is not None
    assert profile.status.tuple_labels == {"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "api"}
    assert profile.status.measurement_hash == "8746f67fe9f3d343"  # the Go operator's hash for this identity
    assert profile.status.policy_ref is not None
    assert profile.status.policy_ref.name == "default"
    assert "ballast.tightlinesoftware.com/profile-cleanup" in (profile.metadata.finalizers or [])
    for index, namespace in enumerate(namespaces):
        annotations = _annotations(operator_client, namespace, f"billing-{index}")
        assert (annotations[PROFILE_REF], annotations[POLICY_REF]) == (name, "default")
        assert not operator_client.get("v1/Pod", f"billing-{index}", namespace)["metadata"].get("finalizers")

    # Removing the mode label unenrolls: the count follows and the pod loses our annotations.
    operator_client.patch(
        pod("billing-0", namespaces[0], {}), {"metadata": {"labels": {"ballast.tightlinesoftware.com/mode": None}}}
    )
    poll_until(lambda: _active(operator_client, name) == 1, timeout=20, what="the count to drop to 1")
    poll_until(lambda: PROFILE_REF not in _annotations(operator_client, namespaces[0], "billing-0"), timeout=20,
               what="the unenrolled pod's refs to be removed")  # fmt: skip

    # The last pod goes: the profile is orphaned.
    operator_client.delete(pod("billing-1", namespaces[1], {}))
    poll_until(lambda: _active(operator_client, name) == 0, timeout=20, what="the count to reach 0")
    profile = _profile(operator_client, name)
    assert profile is not None
    assert profile.status is not None
    orphaned = {c.type: c for c in profile.status.conditions or []}["Orphaned"]
    assert (orphaned.status, orphaned.reason) == ("True", "NoActiveWorkloads")


def _history(client: APIServerClient, name: str) -> str | None:
    profile = _profile(client, name)
    return profile.status.measurement_hash if profile and profile.status else None


def _contributing(client: APIServerClient, name: str) -> tuple[int, list[str]] | None:
    profile = _profile(client, name)
    shown = profile.status.contributing_namespaces if profile and profile.status else None
    return (shown.count, shown.names or []) if shown else None


def test_a_policy_per_trust_zone_keeps_a_foreign_namespace_out_of_a_shared_profile(
    envtest: Environment,
    operator: Operator,
    operator_client: APIServerClient,
    apply_config: Any,
    default_policy: str,
    namespaces: list[str],
    new_namespace: Callable[[str], str],
) -> None:
    """The trust-zone recipe of docs/right-sizing.md: a ClusterResourcePolicy selecting the zone's namespaces gives them
    profiles of their own, so pods with the same identity labels elsewhere never feed them."""
    foreign = new_namespace("other")
    zone = {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "ClusterResourcePolicy",
            "metadata": {"name": "zone-teams"},
            "spec": {"priority": 10, "selector": {"namespaces": {"include": sorted(namespaces)}}}}  # fmt: skip
    envtest.rest.apply(f"{CRP}/zone-teams", zone)
    try:
        apply_config(ballast_config())
        labels = {"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "api"}
        for index, namespace in enumerate([*namespaces, foreign]):
            operator_client.create(pod(f"billing-{index}", namespace, labels))
        shared, outside = "billing--api--zone-teams-39ef3468", "billing--api--default-a9696153"
        poll_until(lambda: _contributing(operator_client, shared) == (2, sorted(namespaces)), timeout=20,
                   what="the zone's profile fed by the zone's two namespaces only")  # fmt: skip
        poll_until(lambda: _contributing(operator_client, outside) == (1, [foreign]), timeout=20,
                   what="the foreign namespace's pod in a profile of its own")  # fmt: skip
        assert _annotations(operator_client, foreign, "billing-2")[PROFILE_REF] == outside
        zone_history, other_history = _history(operator_client, shared), _history(operator_client, outside)
        assert zone_history is not None
        assert other_history not in (None, zone_history)  # two histories
    finally:
        with contextlib.suppress(Exception):
            envtest.rest.delete(f"{CRP}/zone-teams")


def test_an_orphaned_profile_is_deleted_after_its_ttl_with_its_history(
    operator: Operator, operator_client: APIServerClient, apply_config: Any, default_policy: str, namespaces: list[str]
) -> None:
    apply_config(ballast_config(orphan_ttl="3s"))
    labels = {"app.kubernetes.io/name": "shortlived", "app.kubernetes.io/component": "job"}
    operator_client.create(pod("once", namespaces[0], labels))
    name = "shortlived--job--default-a9696153"
    poll_until(lambda: _active(operator_client, name) == 1, timeout=20, what="the profile")
    profile = _profile(operator_client, name)
    assert profile is not None
    assert profile.status is not None
    assert profile.status.measurement_hash
    key = SeriesKey(profile.status.measurement_hash, "app", "cpu")
    operator.store.write_cycle(Cycle("test/1", 1_700_000_000_000, [Sample(key, 250)]))
    assert operator.store.read(key).values == (250,)
    operator_client.delete(pod("once", namespaces[0], {}))
    poll_until(lambda: _profile(operator_client, name) is None, timeout=30, what="the profile to be deleted after 3s")
    assert operator.store.read(key).values == ()  # the finalizer purged the history


def test_an_identity_change_migrates_pods_to_new_profiles(
    operator: Operator, operator_client: APIServerClient, apply_config: Any, default_policy: str, namespaces: list[str]
) -> None:
    apply_config(ballast_config())
    labels = {"app.kubernetes.io/name": "shop", "app.kubernetes.io/component": "web", "tier": "gold"}
    operator_client.create(pod("shop-0", namespaces[0], labels))
    old = "shop--web--default-a9696153"
    poll_until(lambda: _active(operator_client, old) == 1, timeout=20, what="the first profile")
    apply_config(ballast_config(identity=["app.kubernetes.io/name", "tier"]))
    new = "shop--gold--default-a9696153"
    poll_until(lambda: _active(operator_client, new) == 1, timeout=20, what="the pod to migrate")
    poll_until(lambda: _active(operator_client, old) == 0, timeout=20, what="the old profile to be orphaned")
    assert _annotations(operator_client, namespaces[0], "shop-0")[PROFILE_REF] == new


def test_policy_status_publishes_the_discriminator_and_validity(
    operator: Operator, operator_client: APIServerClient
) -> None:
    good = {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "ClusterResourcePolicy",
            "metadata": {"name": "fleet"}, "spec": {"priority": 5}}  # fmt: skip
    bad = {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "ClusterResourcePolicy",
           "metadata": {"name": "broken"}, "spec": {"selector": {"namespaces": {"include": ["/(/"]}}}}  # fmt: skip
    operator_client.create(good)
    operator_client.create(bad)
    try:

        def status(name: str) -> Any:
            policy: ClusterResourcePolicy = operator_client.get(ClusterResourcePolicy, name)
            return policy.status

        poll_until(
            lambda: status("fleet") is not None and status("fleet").profile_discriminator,
            timeout=20,
            what="fleet's status",
        )
        poll_until(
            lambda: status("broken") is not None and status("broken").conditions, timeout=20, what="broken's status"
        )
        assert status("fleet").profile_discriminator == "fleet-9aa5ac7c"
        assert [(c.type, c.status) for c in status("fleet").conditions] == [("Valid", "True")]
        (valid,) = status("broken").conditions
        assert (valid.status, valid.reason) == ("False", "InvalidPolicy")
        assert "spec.selector.namespaces.include[0]" in valid.message
    finally:
        for name in ("fleet", "broken"):
            operator_client.delete({**good, "metadata": {"name": name}}, ignore_not_found=True)


def test_the_kill_switch_follows_the_configmap_and_suspension(
    operator: Operator, operator_client: APIServerClient, apply_config: Any
) -> None:
    apply_config(ballast_config())
    assert not operator.kill_switch.active
    switch = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ballast-kill-switch", "namespace": "ballast-system"},
    }
    operator_client.create(switch)
    poll_until(lambda: operator.kill_switch.active, timeout=15, what="the kill switch to activate")
    assert operator.kill_switch.reason == "ConfigMap ballast-kill-switch"
    apply_config(ballast_config(suspended=True))
    poll_until(lambda: "and" in operator.kill_switch.reason, timeout=15, what="both reasons")
    operator_client.delete(switch)
    apply_config(ballast_config(suspended=False))
    poll_until(lambda: not operator.kill_switch.active, timeout=15, what="the kill switch to deactivate")


def test_the_go_operators_finalizer_is_removed_even_from_unlabelled_pods(
    envtest: Environment, operator_client: APIServerClient, namespaces: list[str], tmp_path: Any
) -> None:
    stuck = pod("stuck", namespaces[0], {"app.kubernetes.io/name": "old"}, mode=None, finalizers=[LEGACY_POD_FINALIZER])
    operator_client.create(stuck)
    operator_client.delete(stuck)  # Terminating, held by the Go operator's finalizer
    assert operator_client.get("v1/Pod", "stuck", namespaces[0])["metadata"]["deletionTimestamp"]
    manager = new_manager(operator_client, namespace="ballast-system")
    with open_store(f"sqlite:///{tmp_path / 'h.db'}") as store:
        add_core_lanes(
            manager,
            set(CONTROLLERS),
            Dependencies(store=store, kill_switch=KillSwitchState(), options=OperatorOptions()),
        )
        with running(manager, stop_timeout=40):
            poll_until(
                lambda: _gone(operator_client, namespaces[0], "stuck"),
                timeout=20,
                what="the stuck pod to finish deleting",
            )


def _gone(client: APIServerClient, namespace: str, name: str) -> bool:
    try:
        client.get("v1/Pod", name, namespace)
    except NotFoundError:
        return True
    return False
