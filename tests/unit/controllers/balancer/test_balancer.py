"""The Balancer controller on the in-memory API server: upstream's examples placed (priority 4/1, proportional
5/5), the status (replicas, selector, targets[], the five conditions) written once and not again while unchanged,
each phase's failure as `"<phase>: <error>"` with an `UnableToBalance` event, fallback for late pods,
missing/overflow as conditions and metrics, conflicts with an HPA or another Balancer (the target left alone),
one pod informer per distinct (namespace, selector) whose pod events requeue at once. The fake's scale
subresource carries the workload's selector as the real one does; the real API server with
kube-controller-manager is tests/integration/controllers/balancer."""

from __future__ import annotations

import copy
import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.scheme import add_to_scheme
from ballast.controllers.balancer import (
    LARGE_REPLICA_COUNT,
    LARGE_REPLICAS,
    NAME,
    STATUS_NOT_UPDATED,
    UNABLE_TO_BALANCE,
    BalancerReconciler,
    setup,
)
from ballast.internal.balancer.metrics import BALANCER_PROBLEM_REPLICAS, BALANCER_REPLICAS
from ballast.internal.balancer.status import selector_string
from ballast.runtime import FakeAPI, FakeClock, GroupVersionKind, Manager, Request, Scheme
from ballast.runtime.apierrors import ForbiddenError
from tests.unit.api.balancer_samples import balancer, documents
from tests.unit.controllers.balancer.support import context
from tests.unit.internal.runtime.support import eventually, running
from tests.unit.support import register_our_kinds

JSON = dict[str, Any]
NS = "shop"
HPA = GroupVersionKind("autoscaling", "v2", "HorizontalPodAutoscaler")
HOUR_AGO = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    """Objects created here are an hour old (creationTimestamp from the fake's clock), so a Pending pod is late
    for any startupTimeoutSeconds below 3600."""
    fake = register_our_kinds(FakeAPI(clock=FakeClock(HOUR_AGO)))
    fake.register(HPA, "horizontalpodautoscalers", namespaced=True, status=True)
    yield fake
    fake.close()


@pytest.fixture
def manager(api: FakeAPI) -> Iterator[Manager]:
    made = Manager(client=api.client(scheme=add_to_scheme(Scheme())))
    controller = setup(made, reprocess_period=3600.0)
    assert controller.name == NAME
    assert controller.need_leader_election()
    with running(made):
        yield made


def deployments(api: FakeAPI, example: str = "nginx-priority") -> None:
    for document in documents(example):
        if document["kind"] == "Deployment":
            api.client().create({**copy.deepcopy(document), "metadata": {**document["metadata"], "namespace": NS}})


def create_balancer(api: FakeAPI, body: JSON, name: str = "nginx") -> None:
    body = copy.deepcopy(body)
    body["metadata"] = {"name": name, "namespace": NS}
    api.client().create(body)


def pod(api: FakeAPI, name: str, target: str, phase: str = "Running", **labels: str) -> None:
    created: JSON = api.client().create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": target, "srv": "nginx", **labels}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
    })  # fmt: skip
    set_phase(api, created["metadata"]["name"], phase)


def set_phase(api: FakeAPI, name: str, phase: str) -> None:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}}
    api.client().status().patch(body, {"status": {"phase": phase}})


def replicas(api: FakeAPI, name: str) -> int:
    return int(api.client().get("apps/v1/Deployment", name, NS)["spec"]["replicas"])


def status(api: FakeAPI, name: str = "nginx") -> JSON:
    return api.client().get("balancer.x-k8s.io/v1alpha1/Balancer", name, NS).get("status") or {}


def cond(api: FakeAPI, type_: str, name: str = "nginx") -> JSON:
    return next((c for c in status(api, name).get("conditions") or () if c["type"] == type_), {})


def events(api: FakeAPI, reason: str) -> list[JSON]:
    return [e for e in api.objects("v1/Event") if e.get("reason") == reason]


def placed(api: FakeAPI) -> tuple[int, int]:
    return replicas(api, "nginx-1"), replicas(api, "nginx-2")


def test_the_priority_example_fills_nginx_1_first(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    create_balancer(api, balancer("nginx-priority"))

    eventually(lambda: placed(api) == (4, 1), "nginx-1 = 4, nginx-2 = 1")
    eventually(lambda: cond(api, "Balancing").get("reason") == "Completed", "Balancing=True")
    got = status(api)
    assert got["selector"] == "srv=nginx"
    assert got["replicas"] == 0
    assert {c["type"]: (c["status"], c["reason"]) for c in got["conditions"]} == {
        "Balancing": ("True", "Completed"), "ReplicasMissing": ("False", "NoProblem"),
        "ReplicasOverflow": ("False", "NoProblem"), "TargetConflict": ("False", "NoConflict"),
        "Valid": ("True", "Valid"),
    }  # fmt: skip
    assert cond(api, "Balancing")["message"] == "Balancer running OK"
    assert sorted(got["targets"], key=lambda t: t["name"]) == [
        {"name": "nginx-1", "desired": 4, "placed": 4, "running": 0, "notStarted": 0},
        {"name": "nginx-2", "desired": 1, "placed": 1, "running": 0, "notStarted": 0},
    ]


def test_the_proportional_example_splits_evenly_and_follows_spec_replicas(api: FakeAPI, manager: Manager) -> None:
    deployments(api, "nginx-proportional")
    create_balancer(api, balancer("nginx-proportional"))
    eventually(lambda: placed(api) == (5, 5), "5/5")

    scaled = {"apiVersion": "balancer.x-k8s.io/v1alpha1", "kind": "Balancer",
              "metadata": {"name": "nginx", "namespace": NS}}  # fmt: skip
    api.client().patch(scaled, {"spec": {"replicas": 4}})
    eventually(lambda: placed(api) == (2, 2), "2/2 after spec.replicas = 4")


def test_pods_are_counted_and_a_pod_event_requeues_at_once(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    create_balancer(api, balancer("nginx-priority"))
    eventually(lambda: placed(api) == (4, 1), "placed")
    pod(api, "a", "nginx-1")
    pod(api, "b", "nginx-1", phase="Succeeded")
    pod(api, "c", "nginx-2", phase="Pending")

    def counted() -> bool:
        got = status(api)
        by_name = {t["name"]: t for t in got.get("targets") or ()}
        return got.get("replicas") == 2 and by_name["nginx-1"].get("running") == 1

    eventually(counted, "pods counted without waiting for the hour-long reprocess period")


def test_late_pods_make_the_next_target_start_replicas_and_recovery_scales_back(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    body = balancer("nginx-priority")
    create_balancer(api, body)
    eventually(lambda: placed(api) == (4, 1), "placed")
    for index in range(4):  # an hour old: past startupTimeoutSeconds 180
        pod(api, f"late-{index}", "nginx-1", phase="Pending")

    eventually(lambda: placed(api) == (4, 5), "nginx-2 takes the 4 late replicas as well")
    for index in range(4):
        set_phase(api, f"late-{index}", "Running")
    eventually(lambda: placed(api) == (4, 1), "back to 4/1 once they run")


def test_missing_and_overflow_are_conditions_and_metrics(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    body = balancer("nginx-priority")
    body["spec"]["replicas"] = 1
    create_balancer(api, body)
    eventually(lambda: cond(api, "ReplicasMissing").get("status") == "True", "ReplicasMissing=True")
    assert cond(api, "ReplicasMissing")["message"].startswith("1 replicas added")
    assert placed(api) == (1, 1)
    assert BALANCER_PROBLEM_REPLICAS.value(namespace=NS, balancer="nginx", problem="missing") == 1
    assert BALANCER_REPLICAS.value(namespace=NS, balancer="nginx", target="nginx-1", kind="desired") == 1

    body = api.client().get("balancer.x-k8s.io/v1alpha1/Balancer", "nginx", NS)
    body["spec"]["replicas"] = 20
    body["spec"]["targets"][1]["maxReplicas"] = 3
    api.client().update(body)
    eventually(lambda: cond(api, "ReplicasOverflow").get("status") == "True", "ReplicasOverflow=True")
    assert cond(api, "ReplicasOverflow")["message"].startswith("10 replicas")
    assert cond(api, "ReplicasMissing")["status"] == "False"
    assert placed(api) == (7, 3)
    assert BALANCER_PROBLEM_REPLICAS.value(namespace=NS, balancer="nginx", problem="overflow") == 10

    api.client().delete(body)
    eventually(lambda: BALANCER_PROBLEM_REPLICAS.value(namespace=NS, balancer="nginx", problem="overflow") == 0,
               "series removed with the Balancer")  # fmt: skip


def test_a_mislabeled_pod_fails_pod_labels_checking(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    create_balancer(api, balancer("nginx-priority"))
    eventually(lambda: placed(api) == (4, 1), "placed")
    pod(api, "odd", "nginx-2")  # selected by nginx-2's scale selector, not by the new spec.selector
    body = api.client().get("balancer.x-k8s.io/v1alpha1/Balancer", "nginx", NS)
    body["spec"]["selector"] = {"matchLabels": {"srv": "nginx", "tier": "web"}}
    api.client().update(body)

    eventually(lambda: cond(api, "Balancing").get("reason") == "PodLabelsChecking", "PodLabelsChecking")
    assert cond(api, "Balancing")["status"] == "False"
    assert cond(api, "Balancing")["message"] == "PodLabelsChecking: incorrect labeling for pods in target nginx-2"
    eventually(lambda: events(api, UNABLE_TO_BALANCE), "UnableToBalance event")
    (event,) = events(api, UNABLE_TO_BALANCE)
    assert event["type"] == "Warning"
    assert event["source"]["component"] == "balancer-controller"
    assert event["message"].startswith("PodLabelsChecking: ")


def test_an_unknown_kind_fails_scale_subresource_polling(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    body = balancer("nginx-priority")
    body["spec"]["targets"][1]["scaleTargetRef"] = {"apiVersion": "example.com/v1", "kind": "Zone", "name": "z"}
    create_balancer(api, body)
    eventually(lambda: cond(api, "Balancing").get("reason") == "ScaleSubresourcePolling", "phase 1 failed")
    assert cond(api, "Balancing")["message"].startswith(
        "ScaleSubresourcePolling: unable to determine resource for scale target reference: "
    )
    assert placed(api) == (3, 3)  # nothing written


def test_a_missing_target_fails_to_query_its_scale(api: FakeAPI, manager: Manager) -> None:
    create_balancer(api, balancer("nginx-priority"))
    eventually(lambda: cond(api, "Balancing").get("reason") == "ScaleSubresourcePolling", "phase 1 failed")
    assert cond(api, "Balancing")["message"].startswith(
        "ScaleSubresourcePolling: failed to query scale subresource for Deployment/shop/nginx-1: "
    )
    assert "replicas" not in status(api)
    assert status(api)["selector"] == "srv=nginx"


def test_a_target_scaled_by_an_hpa_is_left_alone(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    api.client().create({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx-2"},
                 "minReplicas": 1, "maxReplicas": 5},
    })  # fmt: skip
    create_balancer(api, balancer("nginx-priority"))

    eventually(lambda: cond(api, "TargetConflict").get("status") == "True", "TargetConflict=True")
    assert "HorizontalPodAutoscaler web" in cond(api, "TargetConflict")["message"]
    eventually(lambda: replicas(api, "nginx-1") == 4, "nginx-1 still written")
    assert replicas(api, "nginx-2") == 3
    eventually(lambda: events(api, "TargetConflict"), "TargetConflict event")

    api.client().delete({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                         "metadata": {"name": "web", "namespace": NS}})  # fmt: skip
    eventually(lambda: cond(api, "TargetConflict").get("status") == "False", "conflict gone with the HPA")
    eventually(lambda: placed(api) == (4, 1), "nginx-2 written again")


def test_a_target_claimed_by_two_balancers_is_written_by_neither(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    create_balancer(api, balancer("nginx-priority"), "first")
    eventually(lambda: placed(api) == (4, 1), "placed by the first")
    second = balancer("nginx-proportional")
    second["spec"]["targets"][0]["scaleTargetRef"]["name"] = "nginx-3"
    create_balancer(api, second, "second")

    eventually(lambda: cond(api, "TargetConflict", "second").get("status") == "True", "second in conflict")
    eventually(lambda: cond(api, "TargetConflict", "first").get("status") == "True", "first in conflict")
    assert "Balancer second (target nginx-2)" in cond(api, "TargetConflict", "first")["message"]
    assert "Balancer first (target nginx-2)" in cond(api, "TargetConflict", "second")["message"]


def test_unknown_proportion_targets_are_named_in_valid(api: FakeAPI, manager: Manager) -> None:
    deployments(api, "nginx-proportional")
    body = balancer("nginx-proportional")
    body["spec"]["policy"]["proportions"]["targetProportions"]["nginx-9"] = 5
    create_balancer(api, body)
    eventually(lambda: cond(api, "Valid").get("reason") == "UnknownProportionTargets", "Valid reason")
    assert cond(api, "Valid")["status"] == "True"
    assert "'nginx-9'" in cond(api, "Valid")["message"]
    eventually(lambda: placed(api) == (5, 5), "placed as if it were absent")


def test_the_status_is_not_rewritten_while_unchanged(api: FakeAPI) -> None:
    made = Manager(client=api.client(scheme=add_to_scheme(Scheme())))
    reconciler = BalancerReconciler(made, reprocess_period=15.0)
    deployments(api)
    create_balancer(api, balancer("nginx-priority"))
    with running(made):
        assert reconciler.reconcile(context(), Request(NS, "nginx")).requeue_after == 15.0  # type: ignore[union-attr]
        first = api.client().get("balancer.x-k8s.io/v1alpha1/Balancer", "nginx", NS)
        reconciler.reconcile(context(), Request(NS, "nginx"))
        again = api.client().get("balancer.x-k8s.io/v1alpha1/Balancer", "nginx", NS)
        assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        assert reconciler.pods.selectors() == {
            (NS, "app=nginx-1,srv=nginx"): [Request(NS, "nginx")],
            (NS, "app=nginx-2,srv=nginx"): [Request(NS, "nginx")],
        }
        api.client().delete(first)
        eventually(lambda: not made.client.list(Balancer, NS), "the delete seen by the cache")
        pod_informers = [i for i in made.cache.informers() if i.name.startswith("pod.core")]
        assert sorted(i.name for i in pod_informers) == [
            f"pod.core,ns={NS},labels=app=nginx-1,srv=nginx", f"pod.core,ns={NS},labels=app=nginx-2,srv=nginx",
        ]  # fmt: skip
        assert reconciler.reconcile(context(), Request(NS, "nginx")) is None
        assert reconciler.pods.selectors() == {}
        assert not [i for i in made.cache.informers() if i.name.startswith("pod.core")]
        assert all(informer.stopped for informer in pod_informers)


def test_selector_string_is_the_query_parameter_form() -> None:
    assert selector_string({"matchLabels": {"srv": "nginx", "app": "a"}}) == "app=a,srv=nginx"
    assert selector_string({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b", "a"]}],
                            "matchLabels": {"app": "x"}}) == "app=x,zone in (a,b)"  # fmt: skip
    assert STATUS_NOT_UPDATED == "StatusNotUpdated"


def test_a_refused_scale_write_fails_replica_count_setting(api: FakeAPI, manager: Manager) -> None:
    def refuse(operation: str, gvk: GroupVersionKind, obj: JSON, old: JSON | None) -> None:
        if operation == "UPDATE" and gvk.kind == "Deployment" and obj["metadata"]["name"] == "nginx-2":
            raise ForbiddenError(403, "Forbidden", "deployments.apps/scale is forbidden")

    api.admission(refuse)
    deployments(api)
    create_balancer(api, balancer("nginx-priority"))
    eventually(lambda: cond(api, "Balancing").get("reason") == "ReplicaCountSetting", "phase 5 failed")
    assert cond(api, "Balancing")["message"] == (
        "ReplicaCountSetting: failed to update scale subresource for Deployment/shop/nginx-2: "
        "deployments.apps/scale is forbidden"
    )
    assert placed(api) == (4, 3)  # nginx-1 was written before
    targets = {t["name"]: t for t in status(api)["targets"]}
    assert (targets["nginx-2"]["desired"], targets["nginx-2"]["placed"]) == (1, 3)
    assert status(api)["replicas"] == 0


def test_a_policy_without_its_block_fails_applying_balancer_policy(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    pod(api, "a", "nginx-1")
    body = balancer("nginx-priority")
    del body["spec"]["policy"]["priorities"]  # the CRD refuses it; the fake does not
    create_balancer(api, body)
    eventually(lambda: cond(api, "Balancing").get("reason") == "ApplyingBalancerPolicy", "phase 4 failed")
    assert cond(api, "Balancing")["message"] == (
        "ApplyingBalancerPolicy: incomplete policy definition: missing priorities"
    )
    assert status(api)["replicas"] == 1  # observed before the policy, as upstream
    assert placed(api) == (3, 3)


class _RefusingStatus:
    """The API reader with status writes refused."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def status(self) -> Any:
        class Refuse:
            def patch(self, *args: Any, **kwargs: Any) -> Any:
                raise ForbiddenError(403, "Forbidden", "balancers/status is forbidden")

        return Refuse()


def test_a_refused_status_write_is_a_status_not_updated_event(api: FakeAPI) -> None:
    made = Manager(client=api.client(scheme=add_to_scheme(Scheme())))
    reconciler = BalancerReconciler(made)
    reconciler.api = _RefusingStatus(reconciler.api)  # type: ignore[assignment]
    deployments(api)
    create_balancer(api, balancer("nginx-priority"))
    with running(made):
        result = reconciler.reconcile(context(), Request(NS, "nginx"))
        assert result is not None
        assert result.requeue_after == 15.0
        (event,) = eventually(lambda: events(api, STATUS_NOT_UPDATED), "StatusNotUpdated event")
    assert event["type"] == "Warning"
    assert event["message"] == "status not updated: balancers/status is forbidden"
    assert placed(api) == (4, 1)


def test_balancers_sharing_a_selector_share_one_informer_until_the_last_goes(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    create_balancer(api, balancer("nginx-priority"), "first")
    second = balancer("nginx-priority")
    second["spec"]["targets"][0]["scaleTargetRef"]["name"] = "nginx-2"  # both of its targets: one selector
    create_balancer(api, second, "second")
    eventually(lambda: cond(api, "TargetConflict", "second").get("status") == "True", "second ran")

    def pod_informers() -> list[str]:
        return sorted(i.name for i in manager.cache.informers() if i.name.startswith("pod.core"))

    assert pod_informers() == [f"pod.core,ns={NS},labels=app=nginx-1,srv=nginx",
                               f"pod.core,ns={NS},labels=app=nginx-2,srv=nginx"]  # fmt: skip
    api.client().delete({"apiVersion": "balancer.x-k8s.io/v1alpha1", "kind": "Balancer",
                         "metadata": {"name": "first", "namespace": NS}})  # fmt: skip
    eventually(lambda: pod_informers() == [f"pod.core,ns={NS},labels=app=nginx-2,srv=nginx"],
               "nginx-1's informer stopped with its last Balancer")  # fmt: skip


def test_a_count_above_150000_is_written_with_a_large_replica_count_event(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    body = balancer("nginx-priority")
    body["spec"]["replicas"] = 2147483647  # valid int32, and valid upstream
    create_balancer(api, body)

    eventually(lambda: placed(api) == (7, 2147483640), "nginx-2 takes all but nginx-1's 7")
    (event,) = eventually(lambda: events(api, LARGE_REPLICA_COUNT), "a LargeReplicaCount event")
    assert event["type"] == "Warning"
    assert event["message"] == (
        f"set Deployment/{NS}/nginx-2 to 2147483640 replicas, more than the 150,000 pods of Kubernetes' largest "
        "tested cluster"
    )
    assert LARGE_REPLICAS == 150_000


def test_a_spec_stored_before_a_crd_rule_is_valid_false_and_still_run(api: FakeAPI, manager: Manager) -> None:
    deployments(api)
    body = balancer("nginx-priority")
    body["spec"]["replicas"] = 0
    for target in body["spec"]["targets"]:
        target.pop("maxReplicas", None)
    body["spec"]["targets"][0]["minReplicas"] = 2147483647  # the fake has no CEL: as if stored before the rule
    body["spec"]["targets"][1]["minReplicas"] = 1
    create_balancer(api, body)

    eventually(lambda: cond(api, "Valid").get("reason") == "StoredSpecInvalid", "Valid=False, StoredSpecInvalid")
    assert cond(api, "Valid")["status"] == "False"
    assert cond(api, "Valid")["message"] == (
        "spec.targets: the targets' minReplicas add up to 2147483648, more than 2147483647 "
        "(the CRD refuses this now; stored before)"
    )
    eventually(lambda: placed(api) == (2147483647, 1), "placed as far as it goes")
    assert cond(api, "Balancing")["status"] == "True"
    assert cond(api, "ReplicasMissing")["message"].startswith("2147483648 replicas added")


def test_a_negative_proportion_is_named_by_its_wire_path(api: FakeAPI, manager: Manager) -> None:
    deployments(api, "nginx-proportional")
    body = balancer("nginx-proportional")
    body["spec"]["policy"]["proportions"]["targetProportions"]["nginx-2"] = -1
    create_balancer(api, body)

    eventually(lambda: cond(api, "Balancing").get("status") == "False", "Balancing=False")
    assert cond(api, "Balancing")["message"] == (
        "ApplyingBalancerPolicy: spec.policy.proportions.targetProportions[nginx-2]: must not be negative, is -1"
    )
    (event,) = eventually(lambda: events(api, UNABLE_TO_BALANCE), "UnableToBalance")
    assert "target_proportions" not in event["message"]
    valid = cond(api, "Valid")["message"]
    assert valid.startswith("spec.policy.proportions.targetProportions[nginx-2]: -1 is negative")
