"""`/mutate-v1-pod`: every step of the Go operator's handler in order, its answer and its counters, the JSON patch,
and our differences (per-container readiness, request ≤ limit, cascading dry-run, the owner chain)."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any

import jsonpatch
import orjson
import pytest

from ballast.api.ballast.v1 import ResourcePolicy
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.naming import policy_discriminator, profile_name, tuple_labels
from ballast.internal.operator import DryRun, OperatorOptions
from ballast.internal.telemetry import (
    APPLY_APPLIED,
    APPLY_LIMIT_SCALED,
    APPLY_SKIPPED,
    WEBHOOK_MUTATIONS,
    LabelledCounter,
)
from ballast.runtime import AdmissionResponse
from ballast.runtime.admission import encode_review
from ballast.runtime.apierrors import ServerTimeoutError
from ballast.webhook.pods import PodMutator
from tests.unit.internal.policy.builders import crp, rp

from .support import (
    APP_LABELS,
    DEFAULT_PROFILE,
    IDENTITY,
    JSON,
    NAMESPACE,
    NO_POLICY_PROFILE,
    MemoryReader,
    ballast_config,
    container,
    container_profile,
    owner,
    pod,
    profile,
    review,
)

INVALID_MODE = 'invalid Ballast ballast.tightlinesoftware.com/mode label "Apply": must be one of measure, apply, resize'
PROFILE_ATTRS = {"profile": DEFAULT_PROFILE, "name": "billing", "component": "api"}
APPLY_LABELS = {**PROFILE_ATTRS, "policy": "default", "namespace": NAMESPACE}


def delta(counter: LabelledCounter, **labels: str) -> Callable[[], float]:
    """How much `counter` grew for exactly `labels` since this call."""
    before = counter.value(**labels)
    return lambda: counter.value(**labels) - before


def ready_profile(name: str = DEFAULT_PROFILE, **recommendations: dict[str, str]) -> Any:
    recs = recommendations or {"cpu": {"request": "250m"}, "memory": {"request": "192Mi", "limit": "256Mi"}}
    return profile(name, [container_profile("app", recs)])


@pytest.fixture
def reader() -> MemoryReader:
    """The BallastConfig, the `default` ClusterResourcePolicy and a ready profile for billing/api under it."""
    return MemoryReader(ballast_config(), crp("default", rv="1"), ready_profile())


@pytest.fixture
def kill_switch() -> KillSwitchState:
    return KillSwitchState()


def mutator(
    reader: MemoryReader,
    kill_switch: KillSwitchState | None = None,
    dry_run: DryRun | None = None,
    owner_reader: MemoryReader | None = None,
) -> PodMutator:
    return PodMutator(
        reader,
        kill_switch=kill_switch or KillSwitchState(),
        options=OperatorOptions(operator_namespace="ballast-system", dry_run=dry_run or DryRun()),
        owner_reader=owner_reader,
    )


def patched_pod(original: JSON, response: AdmissionResponse) -> JSON:
    """The pod the API server ends up with: the response's patch applied to the original."""
    assert response.allowed
    assert response.patch is not None
    result: JSON = jsonpatch.apply_patch(original, response.patch)
    return result


# ------------------------------------------------------------------------------------- 1. kill switch


def test_the_kill_switch_comes_first_even_before_decoding_and_mode_validation(reader: MemoryReader) -> None:
    switch = KillSwitchState()
    switch.update(configmap=True, suspended=False)
    handler = mutator(reader, switch)
    counted = delta(WEBHOOK_MUTATIONS, result="kill_switch", namespace=NAMESPACE)
    for obj in (pod("Apply"), None, {"metadata": {"labels": {"a": 1}}}):
        response = handler(review(obj))
        assert (response.allowed, response.message, response.patch) == (True, "kill switch active", None)
    assert counted() == 3
    assert reader.calls == []


def test_a_suspended_ballast_config_acts_like_the_configmap(reader: MemoryReader) -> None:
    switch = KillSwitchState()
    switch.update(configmap=False, suspended=True)
    response = mutator(reader, switch)(review(pod()))
    assert (response.allowed, response.message, response.patch) == (True, "kill switch active", None)


# -------------------------------------------------------------------------------------------- 2. decode


@pytest.mark.parametrize(
    ("obj", "kind", "fragment"),
    [
        (None, "Pod", "the request has no object"),
        (pod(labels={"app.kubernetes.io/name": 7}), "Pod", "$.metadata.labels"),  # type: ignore[dict-item]
        ({"metadata": {}, "spec": {"containers": {"name": "app"}}}, "Pod", "$.spec.containers"),
        ({"metadata": {}, "spec": {"containers": [{"name": "app", "resources": []}]}}, "Pod", "resources"),
        (pod(), "ConfigMap", "expected a Pod, got a ConfigMap"),
    ],
)
def test_an_object_that_does_not_decode_as_a_pod_is_errored_400(
    reader: MemoryReader, obj: JSON | None, kind: str, fragment: str
) -> None:
    response = mutator(reader)(review(obj, kind=kind))
    assert (response.allowed, response.code) == (False, 400)
    assert fragment in response.message


def test_other_operations_are_allowed_untouched(reader: MemoryReader) -> None:
    for operation in ("UPDATE", "DELETE", "CONNECT"):
        response = mutator(reader)(review(None if operation == "DELETE" else pod("Apply"), operation=operation))
        assert (response.allowed, response.message, response.patch) == (True, "only pod CREATE is mutated", None)
    assert reader.calls == []


# ------------------------------------------------------------------------------------------------ 3. mode


@pytest.mark.parametrize("mode", ["Apply", "", "auto", "apply "])
def test_an_invalid_mode_is_denied_with_the_anchors_exact_message(reader: MemoryReader, mode: str) -> None:
    response = mutator(reader)(review(pod(mode)))
    assert (response.allowed, response.code, response.reason) == (False, 403, "Forbidden")
    assert response.message == (
        f'invalid Ballast ballast.tightlinesoftware.com/mode label "{mode}": must be one of measure, apply, resize'
    )
    assert reader.calls == []


def test_the_denial_travels_in_the_admission_review(reader: MemoryReader) -> None:
    answer = orjson.loads(encode_review("admission.k8s.io/v1", "uid-1", mutator(reader)(review(pod("Apply")))))
    assert answer["response"] == {
        "uid": "uid-1",
        "allowed": False,
        "status": {"code": 403, "message": INVALID_MODE, "reason": "Forbidden", "status": "Failure"},
    }


# ---------------------------------------------------------------------------------------------- 4. measure


@pytest.mark.parametrize("mode", ["measure", None])
def test_measure_or_no_mode_is_allowed_without_reading_anything(reader: MemoryReader, mode: str | None) -> None:
    counted = delta(WEBHOOK_MUTATIONS, result="skipped", namespace=NAMESPACE)
    response = mutator(reader)(review(pod(mode)))
    assert (response.allowed, response.message, response.patch) == (True, "apply not requested", None)
    assert counted() == 1
    assert reader.calls == []


# --------------------------------------------------------------------------------------- 5./6. not available


def test_a_policy_read_failure_admits_unchanged_as_not_available(reader: MemoryReader) -> None:
    reader.fail["ClusterResourcePolicy"] = ServerTimeoutError(504, "Timeout", "slow")
    counted = delta(WEBHOOK_MUTATIONS, result="not_available", namespace=NAMESPACE)
    response = mutator(reader)(review(pod()))
    assert (response.allowed, response.message, response.patch) == (True, "policy not available", None)
    assert counted() == 1


def test_a_missing_ballast_config_admits_unchanged_as_not_available() -> None:
    reader = MemoryReader(crp("default"), ready_profile())
    counted = delta(WEBHOOK_MUTATIONS, result="not_available", namespace=NAMESPACE)
    response = mutator(reader)(review(pod()))
    assert (response.allowed, response.message, response.patch) == (True, "profile not available", None)
    assert counted() == 1


def test_a_missing_profile_is_skipped_as_no_profile(reader: MemoryReader) -> None:
    worker = "billing--worker--default-a9696153"
    attributes = {"profile": worker, "name": "billing", "component": "worker"}
    skipped = delta(APPLY_SKIPPED, **attributes, reason="no_profile", policy="default", namespace=NAMESPACE)
    counted = delta(WEBHOOK_MUTATIONS, **attributes, result="skipped", namespace=NAMESPACE)
    response = mutator(reader)(review(pod(labels={**APP_LABELS, "app.kubernetes.io/component": "worker"})))
    assert (response.allowed, response.message, response.patch) == (True, "profile not found", None)
    assert reader.reads_of("WorkloadProfile") == [("get", "WorkloadProfile", worker)]
    assert (skipped(), counted()) == (1, 1)


def test_a_profile_read_error_is_not_available_not_a_missing_profile(
    reader: MemoryReader, caplog: pytest.LogCaptureFixture
) -> None:
    reader.fail["WorkloadProfile"] = ServerTimeoutError(504, "Timeout", "slow")
    skipped = delta(APPLY_SKIPPED, **APPLY_LABELS, reason="no_profile")
    counted = delta(WEBHOOK_MUTATIONS, **PROFILE_ATTRS, result="not_available", namespace=NAMESPACE)
    with caplog.at_level(logging.WARNING, logger="ballast.webhook"):
        response = mutator(reader)(review(pod()))
    assert (response.allowed, response.message, response.patch) == (True, "profile not available", None)
    assert (skipped(), counted()) == (0, 1)
    (record,) = [r for r in caplog.records if "cannot read the profile" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], ServerTimeoutError)


def test_a_stored_profile_that_no_longer_fits_its_model_is_not_available(reader: MemoryReader) -> None:
    reader.add({"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile",
                "metadata": {"name": DEFAULT_PROFILE}, "status": {"containers": "not a list"}})  # fmt: skip
    counted = delta(WEBHOOK_MUTATIONS, **PROFILE_ATTRS, result="not_available", namespace=NAMESPACE)
    response = mutator(reader)(review(pod()))
    assert (response.allowed, response.message, response.patch) == (True, "profile not available", None)
    assert counted() == 1


# ------------------------------------------------------------------------------------------- 7. not ready


def test_a_profile_without_a_ready_container_is_not_ready(reader: MemoryReader) -> None:
    accruing = container_profile("app", {"cpu": {"request": "250m"}}, measured=["cpu", "memory"])
    reader.add(profile(DEFAULT_PROFILE, [accruing], meets_threshold=False))
    skipped = delta(APPLY_SKIPPED, **APPLY_LABELS, reason="not_ready")
    counted = delta(WEBHOOK_MUTATIONS, **PROFILE_ATTRS, result="skipped", namespace=NAMESPACE)
    response = mutator(reader)(review(pod()))
    assert (response.allowed, response.message, response.patch) == (True, "profile not ready", None)
    assert (skipped(), counted()) == (1, 1)


def test_an_accruing_profile_whose_containers_do_not_match_the_pod_is_not_ready(reader: MemoryReader) -> None:
    reader.add(profile(DEFAULT_PROFILE, [container_profile("other", {"cpu": {"request": "1"}})], meets_threshold=False))
    response = mutator(reader)(review(pod()))
    assert (response.allowed, response.message, response.patch) == (True, "profile not ready", None)


# ---------------------------------------------------------------------------------------------- 8. mutate


def test_the_patch_sets_requests_limits_and_annotations_of_a_pod_without_annotations(reader: MemoryReader) -> None:
    original = pod()
    applied = delta(APPLY_APPLIED, **APPLY_LABELS)
    counted = delta(WEBHOOK_MUTATIONS, **PROFILE_ATTRS, result="mutated", namespace=NAMESPACE)
    response = mutator(reader)(review(original))
    assert response.allowed
    assert sorted(response.patch or [], key=lambda op: op["path"]) == [
        {"op": "add", "path": "/metadata/annotations", "value": {
            "ballast.tightlinesoftware.com/policy-ref": "default",
            "ballast.tightlinesoftware.com/applied-cpu-request": "250m",
            "ballast.tightlinesoftware.com/applied-memory-request": "192Mi",
            "ballast.tightlinesoftware.com/applied-memory-limit": "256Mi",
        }},
        {"op": "add", "path": "/spec/containers/0/resources/limits", "value": {"memory": "256Mi"}},
        {"op": "replace", "path": "/spec/containers/0/resources/requests/cpu", "value": "250m"},
        {"op": "add", "path": "/spec/containers/0/resources/requests/memory", "value": "192Mi"},
    ]  # fmt: skip
    assert (applied(), counted()) == (1, 1)


def test_annotations_are_added_one_by_one_with_escaped_slashes(reader: MemoryReader) -> None:
    original = pod(annotations={"team": "payments"})
    response = mutator(reader)(review(original))
    annotation_ops = sorted(op["path"] for op in response.patch or [] if op["path"].startswith("/metadata"))
    assert annotation_ops == [
        "/metadata/annotations/ballast.tightlinesoftware.com~1applied-cpu-request",
        "/metadata/annotations/ballast.tightlinesoftware.com~1applied-memory-limit",
        "/metadata/annotations/ballast.tightlinesoftware.com~1applied-memory-request",
        "/metadata/annotations/ballast.tightlinesoftware.com~1policy-ref",
    ]
    assert patched_pod(original, response)["metadata"]["annotations"]["team"] == "payments"


def test_resize_mode_is_treated_like_apply(reader: MemoryReader) -> None:
    original = pod("resize")
    result = patched_pod(original, mutator(reader)(review(original)))
    assert result["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "250m", "memory": "192Mi"}


def test_restartable_init_sidecars_are_sized_and_run_to_completion_inits_are_not(reader: MemoryReader) -> None:
    recs = {"cpu": {"request": "50m"}}
    reader.add(profile(DEFAULT_PROFILE, [container_profile("proxy", recs), container_profile("migrate", recs)]))
    original = pod(
        containers=[container("app")],
        init_containers=[container("migrate"), container("proxy", restart_policy="Always")],
    )
    result = patched_pod(original, mutator(reader)(review(original)))
    assert "resources" not in result["spec"]["initContainers"][0]
    assert result["spec"]["initContainers"][1]["resources"] == {"requests": {"cpu": "50m"}}
    assert "resources" not in result["spec"]["containers"][0]


def test_without_a_matching_policy_the_nopolicy_profile_is_used_and_no_policy_ref_stamped() -> None:
    reader = MemoryReader(ballast_config(), ready_profile(NO_POLICY_PROFILE))
    applied = delta(APPLY_APPLIED, profile=NO_POLICY_PROFILE, name="billing", component="api",
                    policy="", namespace=NAMESPACE)  # fmt: skip
    original = pod()
    result = patched_pod(original, mutator(reader)(review(original)))
    assert "ballast.tightlinesoftware.com/policy-ref" not in result["metadata"]["annotations"]
    assert result["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "250m"
    assert applied() == 1


def test_a_resource_policy_in_the_pods_namespace_wins_and_is_referenced_as_namespace_slash_name(
    reader: MemoryReader,
) -> None:
    local: ResourcePolicy = rp(NAMESPACE, "local", rv="1")
    reader.add(local)
    name = profile_name(
        tuple_labels(APP_LABELS, IDENTITY), IDENTITY, policy_discriminator("ResourcePolicy", NAMESPACE, "local")
    )
    reader.add(ready_profile(name, cpu={"request": "321m"}))
    original = pod()
    result = patched_pod(original, mutator(reader)(review(original)))
    assert result["metadata"]["annotations"]["ballast.tightlinesoftware.com/policy-ref"] == "shop/local"
    assert result["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "321m"


def test_no_matching_container_still_stamps_the_policy_and_counts_no_change(reader: MemoryReader) -> None:
    original = pod(containers=[container("worker", {"cpu": "100m"})])
    skipped = delta(APPLY_SKIPPED, **APPLY_LABELS, reason="no_change")
    counted = delta(WEBHOOK_MUTATIONS, **PROFILE_ATTRS, result="mutated", namespace=NAMESPACE)
    response = mutator(reader)(review(original))
    assert response.patch == [
        {"op": "add", "path": "/metadata/annotations", "value": {"ballast.tightlinesoftware.com/policy-ref": "default"}}
    ]
    assert (skipped(), counted()) == (1, 1)


def test_values_already_in_place_still_count_as_applied_with_only_the_annotations_patched(
    reader: MemoryReader,
) -> None:
    original = pod(containers=[container("app", {"cpu": "250m", "memory": "192Mi"}, {"memory": "256Mi"})])
    applied = delta(APPLY_APPLIED, **APPLY_LABELS)
    response = mutator(reader)(review(original))
    assert {op["path"] for op in response.patch or []} == {"/metadata/annotations"}
    assert applied() == 1


def test_a_second_invocation_on_the_mutated_pod_changes_nothing(reader: MemoryReader) -> None:
    original = pod(containers=[container("app", {"cpu": "100m"}, {"cpu": "500m"})])
    once = patched_pod(original, mutator(reader)(review(original)))
    again = mutator(reader)(review(once))  # reinvocationPolicy: IfNeeded
    assert (again.allowed, again.patch) == (True, None)


def test_unparseable_recommendations_are_skipped(reader: MemoryReader) -> None:
    reader.add(ready_profile(cpu={"request": "lots"}, memory={"request": "", "limit": "300Mi"}))
    original = pod()
    result = patched_pod(original, mutator(reader)(review(original)))
    assert result["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}, "limits": {"memory": "300Mi"}}
    assert set(result["metadata"]["annotations"]) == {
        "ballast.tightlinesoftware.com/policy-ref",
        "ballast.tightlinesoftware.com/applied-memory-limit",
    }


# ---------------------------------------------------------------------- per-container readiness (difference 5)


def test_a_ready_container_is_applied_while_a_sparse_sidecar_still_accrues(reader: MemoryReader) -> None:
    app = container_profile("app", {"cpu": {"request": "250m"}, "memory": {"request": "192Mi"}})
    sidecar = container_profile("sidecar", {"cpu": {"request": "20m"}}, measured=["cpu", "memory"])
    reader.add(profile(DEFAULT_PROFILE, [app, sidecar], meets_threshold=False))
    original = pod(containers=[container("app", {"cpu": "100m"}), container("sidecar", {"cpu": "5m"})])
    applied = delta(APPLY_APPLIED, **APPLY_LABELS)
    result = patched_pod(original, mutator(reader)(review(original)))
    assert result["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "250m", "memory": "192Mi"}
    assert result["spec"]["containers"][1]["resources"]["requests"] == {"cpu": "5m"}  # half-ready: untouched
    assert applied() == 1


# -------------------------------------------------------------------------------- request ≤ limit (difference 4)


def test_a_limit_the_policy_does_not_manage_is_scaled_to_keep_the_ratio_and_counted(reader: MemoryReader) -> None:
    reader.add(ready_profile(cpu={"request": "600m"}))
    original = pod(containers=[container("app", {"cpu": "100m"}, {"cpu": "500m"})])
    scaled = delta(APPLY_LIMIT_SCALED, **APPLY_LABELS, resource="cpu")
    response = mutator(reader)(review(original))
    result = patched_pod(original, response)
    assert result["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "600m"}, "limits": {"cpu": "3"}}
    assert result["metadata"]["annotations"]["ballast.tightlinesoftware.com/applied-cpu-limit"] == "3"
    assert scaled() == 1


def test_a_recommended_limit_below_the_request_is_raised_to_it(reader: MemoryReader) -> None:
    reader.add(ready_profile(memory={"request": "512Mi", "limit": "256Mi"}))
    scaled = delta(APPLY_LIMIT_SCALED, **APPLY_LABELS, resource="memory")
    original = pod()
    result = patched_pod(original, mutator(reader)(review(original)))
    resources = result["spec"]["containers"][0]["resources"]
    assert (resources["requests"]["memory"], resources["limits"]["memory"]) == ("512Mi", "512Mi")
    assert scaled() == 1


def test_a_request_within_the_limit_leaves_it_alone(reader: MemoryReader) -> None:
    original = pod(containers=[container("app", {"cpu": "100m"}, {"cpu": "2"})])
    scaled = delta(APPLY_LIMIT_SCALED, **APPLY_LABELS, resource="cpu")
    result = patched_pod(original, mutator(reader)(review(original)))
    assert result["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "2", "memory": "256Mi"}
    assert scaled() == 0


# ----------------------------------------------------------------------------------- dry-run (cascading)


@pytest.mark.parametrize(
    "dry_run", [DryRun.cascade(apply=True), DryRun.cascade(measure=True), DryRun(measure=True)], ids=str
)
def test_dry_run_allows_without_a_patch(reader: MemoryReader, dry_run: DryRun) -> None:
    reader.add(ready_profile(cpu={"request": "600m"}))
    skipped = delta(APPLY_SKIPPED, **APPLY_LABELS, reason="dry_run")
    counted = delta(WEBHOOK_MUTATIONS, **PROFILE_ATTRS, result="dry_run", namespace=NAMESPACE)
    scaled = delta(APPLY_LIMIT_SCALED, **APPLY_LABELS, resource="cpu")
    response = mutator(reader, dry_run=dry_run)(
        review(pod(containers=[container("app", {"cpu": "1m"}, {"cpu": "2m"})]))
    )
    assert (response.allowed, response.message, response.patch) == (True, "dry-run: apply suppressed", None)
    assert (skipped(), counted(), scaled()) == (1, 1, 0)


def test_dry_run_with_no_matching_container_counts_no_change(reader: MemoryReader) -> None:
    skipped = delta(APPLY_SKIPPED, **APPLY_LABELS, reason="no_change")
    response = mutator(reader, dry_run=DryRun.cascade(apply=True))(review(pod(containers=[container("x")])))
    assert (response.message, response.patch, skipped()) == ("dry-run: apply suppressed", None, 1)


def test_dry_run_resize_alone_still_applies(reader: MemoryReader) -> None:
    response = mutator(reader, dry_run=DryRun.cascade(resize=True))(review(pod()))
    assert response.patch


# ------------------------------------------------------------------------- owner chain (difference 9)


@pytest.fixture
def owners() -> MemoryReader:
    replica_set = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "web-7d9", "namespace": NAMESPACE, "uid": "rs-1",
                     "ownerReferences": [owner("Deployment", "web", "dep-1")]},
    }  # fmt: skip
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": NAMESPACE, "uid": "dep-1"}}  # fmt: skip
    return MemoryReader(replica_set, deployment)


def _deployments_profile() -> Any:
    name = profile_name(
        tuple_labels(APP_LABELS, IDENTITY), IDENTITY, policy_discriminator("ClusterResourcePolicy", "", "deployments")
    )
    return ready_profile(name, cpu={"request": "700m"})


def test_kinds_deployment_matches_a_deployments_pod_through_its_replica_set(
    reader: MemoryReader, owners: MemoryReader
) -> None:
    reader.add(crp("deployments", 10, {"kinds": ["Deployment"]}, rv="1"))
    reader.add(_deployments_profile())
    original = pod(owners=[owner("ReplicaSet", "web-7d9", "rs-1")])
    result = patched_pod(original, mutator(reader, owner_reader=owners)(review(original)))
    assert result["metadata"]["annotations"]["ballast.tightlinesoftware.com/policy-ref"] == "deployments"
    assert result["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "700m"
    assert [call[1] for call in owners.calls] == ["ReplicaSet", "Deployment"]
    assert not reader.reads_of("ReplicaSet")  # owners go through the owner reader only


def test_owners_are_not_read_when_no_policy_lists_kinds(reader: MemoryReader, owners: MemoryReader) -> None:
    original = pod(owners=[owner("ReplicaSet", "web-7d9", "rs-1")])
    response = mutator(reader, owner_reader=owners)(review(original))
    assert response.patch
    assert owners.calls == []


def test_an_owner_read_failure_is_policy_not_available(reader: MemoryReader, owners: MemoryReader) -> None:
    reader.add(crp("deployments", 10, {"kinds": ["Deployment"]}, rv="1"))
    owners.fail["ReplicaSet"] = ServerTimeoutError(504, "Timeout", "slow")
    response = mutator(reader, owner_reader=owners)(review(pod(owners=[owner("ReplicaSet", "web-7d9", "rs-1")])))
    assert (response.allowed, response.message, response.patch) == (True, "policy not available", None)


def test_a_missing_owner_ends_the_chain_at_the_direct_controller(reader: MemoryReader) -> None:
    reader.add(crp("deployments", 10, {"kinds": ["Deployment"]}, rv="1"))
    original = pod(owners=[owner("ReplicaSet", "web-7d9", "rs-1")])
    result = patched_pod(original, mutator(reader, owner_reader=MemoryReader())(review(original)))
    assert result["metadata"]["annotations"]["ballast.tightlinesoftware.com/policy-ref"] == "default"


# ------------------------------------------------------------------------------------- never raises


@pytest.fixture
def broken_reader() -> MemoryReader:
    reader = MemoryReader(ballast_config(), crp("default"), ready_profile())
    for kind in ("ClusterResourcePolicy", "ResourcePolicy", "BallastConfig", "WorkloadProfile"):
        reader.fail[kind] = RuntimeError("boom")
    return reader


def test_read_failures_of_any_kind_are_answered_not_raised(broken_reader: MemoryReader) -> None:
    response = mutator(broken_reader)(review(pod()))
    assert (response.allowed, response.message) == (True, "policy not available")
    broken_reader.fail.pop("ClusterResourcePolicy")
    broken_reader.fail.pop("ResourcePolicy")
    assert mutator(broken_reader)(review(pod())).message == "profile not available"
    broken_reader.fail.pop("BallastConfig")
    assert mutator(broken_reader)(review(pod())).message == "profile not available"
    broken_reader.fail.pop("WorkloadProfile")
    assert mutator(broken_reader)(review(pod())).message != "profile not available"


def test_the_patch_is_base64_json_in_the_review(reader: MemoryReader) -> None:
    answer = orjson.loads(encode_review("admission.k8s.io/v1", "uid-1", mutator(reader)(review(pod()))))
    assert answer["response"]["patchType"] == "JSONPatch"
    operations = orjson.loads(base64.b64decode(answer["response"]["patch"]))
    assert {"op": "replace", "path": "/spec/containers/0/resources/requests/cpu", "value": "250m"} in operations
