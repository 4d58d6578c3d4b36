"""The enrollment lane (`workloadwatcher-pod`) on the in-memory API server: an enrolled pod gets its profile
(created with the identity in its status) and the `profile-ref`/`policy-ref` annotations; a pod that leaves
enrollment loses them; the Go operator's pod finalizer is removed; without the BallastConfig nothing is enrolled
until it appears."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ballast.api.ballast.v1 import BallastConfig, WorkloadProfile, WorkloadProfileStatus
from ballast.api.scheme import add_to_scheme
from ballast.controllers import enrollment
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.enrollment import LEGACY_POD_FINALIZER, MODE_LABEL, POLICY_REF, PROFILE_REF
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.runtime import Client, FakeAPI, NotFoundError, Scheme, objects
from ballast.runtime.metrics import RECONCILE_ERRORS
from tests.unit.internal.policy.builders import crp
from tests.unit.internal.runtime.support import eventually, running
from tests.unit.webhook.support import APP_LABELS, DEFAULT_PROFILE, NAMESPACE, ballast_config, pod

HOLD = "example.com/hold"


@pytest.fixture
def client(api: FakeAPI) -> Iterator[Client]:
    client = api.client(scheme=add_to_scheme(Scheme()))
    client.create(crp("default"))
    manager = new_manager(client, namespace="ballast-system")
    enrollment.setup(manager, kill_switch=KillSwitchState(), options=OperatorOptions())
    with running(manager):
        yield client


def _annotations(client: Client, name: str = "web-0") -> dict[str, Any]:
    return dict(objects.annotations(client.get("v1/Pod", name, NAMESPACE)))


def _profile(client: Client, name: str = DEFAULT_PROFILE) -> WorkloadProfile | None:
    try:
        found: WorkloadProfile = client.get(WorkloadProfile, name)
    except NotFoundError:
        return None
    return found


def _identity(client: Client) -> WorkloadProfileStatus | None:
    """The profile's status once enrollment has applied the identity to it."""
    profile = _profile(client)
    return profile.status if profile and profile.status and profile.status.measurement_hash else None


def _finalizers(client: Client) -> list[str]:
    return list(client.get("v1/Pod", "web-0", NAMESPACE)["metadata"].get("finalizers") or [])


def test_an_enrolled_pod_gets_its_profile_with_the_identity_and_both_refs(client: Client) -> None:
    client.create(ballast_config())
    client.create(pod("measure"))

    eventually(lambda: _annotations(client).get(PROFILE_REF) == DEFAULT_PROFILE, what="the pod's profile-ref")
    assert _annotations(client)[POLICY_REF] == "default"
    status = eventually(lambda: _identity(client), what="the profile's identity")
    assert status.tuple_labels == APP_LABELS
    assert status.selector_labels == APP_LABELS
    assert status.measurement_hash == "8746f67fe9f3d343"  # the Go operator's hash of this identity and policy
    assert status.policy_ref is not None
    assert (status.policy_ref.kind, status.policy_ref.name) == ("ClusterResourcePolicy", "default")


def test_a_pod_that_leaves_enrollment_loses_the_refs(client: Client) -> None:
    client.create(ballast_config())
    client.create(pod("apply"))
    eventually(lambda: PROFILE_REF in _annotations(client), what="the pod enrolled")

    stored = client.get("v1/Pod", "web-0", NAMESPACE)
    client.patch(stored, {"metadata": {"labels": {MODE_LABEL: None}}})

    eventually(lambda: not {PROFILE_REF, POLICY_REF} & set(_annotations(client)), what="the refs removed")


def test_an_invalid_mode_is_not_enrolled_and_keeps_no_refs(client: Client) -> None:
    client.create(ballast_config())
    body = pod("sometimes", annotations={PROFILE_REF: DEFAULT_PROFILE, POLICY_REF: "default"})
    client.create(body)

    eventually(lambda: not {PROFILE_REF, POLICY_REF} & set(_annotations(client)), what="the stale refs removed")
    assert _profile(client) is None


def test_the_go_operators_pod_finalizer_is_removed_and_others_kept(client: Client) -> None:
    client.create(ballast_config())
    body = pod("measure")
    body["metadata"]["finalizers"] = [LEGACY_POD_FINALIZER, HOLD]
    client.create(body)

    eventually(lambda: PROFILE_REF in _annotations(client), what="the pod enrolled")
    eventually(lambda: _finalizers(client) == [HOLD], what="only the Go operator's finalizer removed")


def test_without_the_ballast_config_pods_wait_and_are_enrolled_when_it_appears(client: Client) -> None:
    client.create(pod("measure"))
    eventually(lambda: client.get("v1/Pod", "web-0", NAMESPACE) is not None, what="the pod stored")
    assert PROFILE_REF not in _annotations(client)
    assert _profile(client) is None

    client.create(ballast_config())

    eventually(lambda: _annotations(client).get(PROFILE_REF) == DEFAULT_PROFILE, what="the pod enrolled")


def test_an_invalid_ballast_config_enrolls_nothing_until_a_fix_enrolls_every_pod(client: Client) -> None:
    # docs/design.md, difference 26: a key no pod can carry would put every pod into one placeholder profile
    client.create(ballast_config(["not a label!!", "app.kubernetes.io/component"]))
    client.create(pod("measure"))

    def unenrolled() -> bool:
        return PROFILE_REF not in _annotations(client) and len(client.list(WorkloadProfile)) == 0

    _stays(unenrolled, "nothing enrolled under the invalid config")
    stored = client.get(BallastConfig, "ballast")
    client.patch(stored, {"spec": {"identityLabels": ballast_config().spec.identity_labels, "orphanTTL": "banana"}})
    _stays(unenrolled, "nothing enrolled while a duration does not parse")

    client.patch(stored, {"spec": {"orphanTTL": "168h"}})  # only the TTL changes: the fix alone re-enqueues the pods
    eventually(lambda: _annotations(client).get(PROFILE_REF) == DEFAULT_PROFILE, what="the pod enrolled")


def _stays(condition: Callable[[], bool], what: str, seconds: float = 0.5) -> None:
    """`condition` holds now and for `seconds` (the lane runs on threads: absence is watched, not sampled once)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert condition(), what
        time.sleep(0.02)


def _deleted_before_the_patch(patched: list[str]) -> Callable[..., None]:
    """An admission hook answering 404 to a patch of a pod's refs, as the API server does once the pod is
    gone — deleted between the lane's live read and its patch (seen on the e2e mini-cluster)."""

    def hook(operation: str, gvk: Any, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        refs = (PROFILE_REF, POLICY_REF)
        before = {key: objects.annotations(old).get(key) for key in refs} if old else {}
        after = {key: objects.annotations(obj).get(key) for key in refs}
        if gvk.kind == "Pod" and operation == "UPDATE" and before != after:
            patched.append(objects.name(obj))
            raise NotFoundError(404, "NotFound", f'pods "{objects.name(obj)}" not found')

    return hook


@pytest.mark.parametrize("mode", ["measure", "sometimes"], ids=["stamp", "unstamp"])
def test_a_pod_deleted_before_its_refs_are_patched_is_no_reconcile_error(
    api: FakeAPI, client: Client, mode: str
) -> None:
    errors = RECONCILE_ERRORS.labels(enrollment.NAME)
    before = errors._value.get()
    patched: list[str] = []
    api.admission(_deleted_before_the_patch(patched))
    client.create(ballast_config())
    client.create(pod(mode, annotations={PROFILE_REF: "stale", POLICY_REF: "stale"} if mode == "sometimes" else None))

    eventually(lambda: patched, what="the lane's patch of the pod's refs")
    time.sleep(0.3)  # an error would be logged, counted and retried right away
    assert errors._value.get() == before
    assert set(patched) == {"web-0"}
