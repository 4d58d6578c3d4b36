"""`/mutate-kupid`: which requests are mutated, the patch, the pod annotation, enforced policies, invalid and
conflicting policies, and kupid's request counter — against the in-memory API server."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.api.scheme import add_to_scheme
from ballast.internal.scheduling import ENFORCE_ANNOTATION, POLICIES_ANNOTATION
from ballast.internal.scheduling.metrics import KUPID_REQUESTS, SCHEDULING_POLICY_APPLICATIONS
from ballast.runtime import AdmissionRequest, Cache, CacheScope, FakeAPI, Projection, Scheme
from ballast.runtime.cache import DelegatingClient
from ballast.webhook.scheduling import (
    DAEMONSET_POD,
    MIRROR_POD,
    NO_POLICY,
    ONLY_CREATE,
    TEMPLATE_UNCHANGED,
    UNCHANGED,
    SchedulingMutator,
)
from tests.unit.internal.runtime.support import eventually
from tests.unit.internal.scheduling.builders import cluster, namespaced, req, required, term
from tests.unit.internal.scheduling.pod_fields import full_pod_spec

JSON = dict[str, Any]
NAMESPACE = "etcd-main"
ETCD = {"app": "etcd"}
GROUPS = {"Pod": "", "Deployment": "apps", "StatefulSet": "apps", "DaemonSet": "apps", "Job": "batch",
          "CronJob": "batch", "ReplicaSet": "apps", "ReplicationController": ""}  # fmt: skip
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "etcd", "effect": "NoSchedule"}


def etcd_policy(name: str = "etcd", **spec: Any) -> JSON:
    body = {
        "namespaceSelector": {"matchLabels": {"role": "etcd"}},
        "podSelector": {"matchLabels": ETCD},
        "nodeSelector": {"pool": "etcd"},
        "tolerations": [TOLERATION],
        "affinity": required(term(req("zone", "In", "a", "b"))),
    }
    body.update(spec)
    return cluster(name, **body)


def pod(labels: JSON | None = None, **spec: Any) -> JSON:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "etcd-0", "namespace": NAMESPACE, "labels": dict(ETCD if labels is None else labels)},
        "spec": {"containers": [{"name": "etcd", "image": "etcd:3"}], **spec},
    }  # fmt: skip


def workload(kind: str, labels: JSON | None = None, **spec: Any) -> JSON:
    template = {"metadata": {"labels": dict(ETCD if labels is None else labels)},
                "spec": {"containers": [{"name": "etcd", "image": "etcd:3"}], **spec}}  # fmt: skip
    body: JSON = {"template": template}
    if kind == "CronJob":
        body = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}
    group = GROUPS[kind]
    return {"apiVersion": f"{group}/v1" if group else "v1", "kind": kind,
            "metadata": {"name": "etcd", "namespace": NAMESPACE}, "spec": body}  # fmt: skip


def review(obj: JSON, *, operation: str = "CREATE", old: JSON | None = None) -> AdmissionRequest:
    kind = obj["kind"]
    return AdmissionRequest(
        uid="uid-1",
        kind={"group": GROUPS[kind], "version": "v1", "kind": kind},
        resource={"group": GROUPS[kind], "version": "v1", "resource": kind.lower() + "s"},
        operation=operation,
        name=obj["metadata"].get("name", ""),
        namespace=NAMESPACE,
        object=obj,
        old_object=old,
    )


@pytest.fixture
def mutator(api: FakeAPI) -> SchedulingMutator:
    client = api.client(scheme=add_to_scheme(Scheme()))
    namespace = {"name": NAMESPACE, "labels": {"role": "etcd"}}
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": namespace})
    return SchedulingMutator(client)


def create(api: FakeAPI, *policies: JSON) -> None:
    for policy in policies:
        api.client().create(policy)


def applied(request: AdmissionRequest, response: Any) -> JSON:
    assert response.allowed, response.message
    result: JSON = jsonpatch.apply_patch(copy.deepcopy(request.object), response.patch or [])
    return result


def test_a_bare_pod_gets_the_toleration_node_selector_affinity_and_the_annotation(
    api: FakeAPI, mutator: SchedulingMutator
) -> None:
    create(api, etcd_policy())
    request = review(pod())
    result = applied(request, mutator(request))
    spec = result["spec"]
    assert spec["nodeSelector"] == {"pool": "etcd"}
    assert spec["tolerations"] == [TOLERATION]
    assert spec["affinity"] == required(term(req("zone", "In", "a", "b")))
    assert result["metadata"]["annotations"] == {POLICIES_ANNOTATION: "ClusterPodSchedulingPolicy/etcd"}


def test_each_workload_kind_gets_its_template_mutated_and_no_annotation(
    api: FakeAPI, mutator: SchedulingMutator
) -> None:
    create(api, etcd_policy())
    for kind in ("Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicationController", "CronJob"):
        request = review(workload(kind))
        result = applied(request, mutator(request))
        spec = result["spec"]
        template = spec["jobTemplate"]["spec"]["template"] if kind == "CronJob" else spec["template"]
        assert template["spec"]["nodeSelector"] == {"pool": "etcd"}, kind
        assert "annotations" not in template["metadata"], kind
        assert "annotations" not in result["metadata"], kind


def test_replicasets_are_not_mutated(api: FakeAPI, mutator: SchedulingMutator) -> None:
    create(api, etcd_policy())
    response = mutator(review(workload("ReplicaSet")))
    assert (response.allowed, response.code) == (False, 400)
    assert response.patch is None


def test_namespaced_policies_apply_in_their_namespace_after_the_cluster_ones(
    api: FakeAPI, mutator: SchedulingMutator
) -> None:
    create(
        api,
        etcd_policy(nodeSelector={"pool": "etcd"}),
        namespaced(NAMESPACE, "spot", podSelector={}, nodeSelector={"pool": "spot", "lifecycle": "spot"}),
        namespaced("elsewhere", "other", podSelector={}, nodeSelector={"other": "yes"}),
    )
    request = review(pod())
    result = applied(request, mutator(request))
    assert result["spec"]["nodeSelector"] == {"pool": "etcd", "lifecycle": "spot"}
    assert result["metadata"]["annotations"][POLICIES_ANNOTATION] == (
        f"ClusterPodSchedulingPolicy/etcd,PodSchedulingPolicy/{NAMESPACE}/spot"
    )


def test_a_pod_keeps_its_own_node_selector_value(api: FakeAPI, mutator: SchedulingMutator) -> None:
    create(api, etcd_policy())
    request = review(pod(nodeSelector={"pool": "mine"}))
    result = applied(request, mutator(request))
    assert result["spec"]["nodeSelector"] == {"pool": "mine"}


def test_an_enforced_policy_denies_a_conflicting_pod_naming_the_policy_and_the_field(
    api: FakeAPI, mutator: SchedulingMutator
) -> None:
    policy = etcd_policy()
    policy["metadata"]["annotations"] = {ENFORCE_ANNOTATION: "true"}
    create(api, policy)
    before = KUPID_REQUESTS.labels("denied")._value.get()
    response = mutator(review(pod(nodeSelector={"pool": "mine"})))
    assert not response.allowed
    assert response.message == (
        "ClusterPodSchedulingPolicy/etcd is enforced and cannot be applied: "
        "spec.nodeSelector[pool]: is 'mine', the policy's is 'etcd'"
    )
    assert KUPID_REQUESTS.labels("denied")._value.get() == before + 1
    # the same object under the same policy without a conflict is admitted
    assert applied(review(pod()), mutator(review(pod())))["spec"]["nodeSelector"] == {"pool": "etcd"}


def test_an_enforced_policy_whose_every_affinity_term_contradicts_the_object_denies_it(
    api: FakeAPI, mutator: SchedulingMutator
) -> None:
    policy = etcd_policy(nodeSelector=None, tolerations=None)
    policy["metadata"]["annotations"] = {ENFORCE_ANNOTATION: "true"}
    create(api, policy)
    response = mutator(review(workload("StatefulSet", affinity=required(term(req("zone", "In", "c"))))))
    assert not response.allowed
    assert response.message.startswith("ClusterPodSchedulingPolicy/etcd is enforced and cannot be applied: ")
    assert "spec.template.spec.affinity.nodeAffinity" in response.message


def test_a_conflicting_policy_that_is_not_enforced_is_skipped_and_counted(
    api: FakeAPI, mutator: SchedulingMutator
) -> None:
    create(api, etcd_policy(nodeSelector=None, tolerations=None))
    before = SCHEDULING_POLICY_APPLICATIONS.labels("ClusterPodSchedulingPolicy/etcd", "Pod", "conflict")._value.get()
    request = review(pod(affinity=required(term(req("zone", "In", "c")))))
    result = applied(request, mutator(request))
    assert result["spec"]["affinity"] == required(term(req("zone", "In", "c")))
    after = SCHEDULING_POLICY_APPLICATIONS.labels("ClusterPodSchedulingPolicy/etcd", "Pod", "conflict")._value.get()
    assert after == before + 1


def test_a_policy_skipped_as_contradictory_is_not_named_in_the_annotation(
    api: FakeAPI, mutator: SchedulingMutator
) -> None:
    zones = etcd_policy("zones", nodeSelector=None, tolerations=None)  # zone In a,b: contradicts the pod's zone c
    pool = etcd_policy("pool", affinity=None, tolerations=None)
    create(api, zones, pool)
    request = review(pod(affinity=required(term(req("zone", "In", "c")))))
    result = applied(request, mutator(request))
    assert result["spec"]["nodeSelector"] == {"pool": "etcd"}
    assert result["metadata"]["annotations"] == {POLICIES_ANNOTATION: "ClusterPodSchedulingPolicy/pool"}


def test_only_contradictory_policies_leave_no_annotation(api: FakeAPI, mutator: SchedulingMutator) -> None:
    create(api, etcd_policy(nodeSelector=None, tolerations=None))
    request = review(pod(affinity=required(term(req("zone", "In", "c")))))
    response = mutator(request)
    assert response.allowed
    assert POLICIES_ANNOTATION not in (applied(request, response)["metadata"].get("annotations") or {})


def test_an_invalid_stored_policy_disables_only_itself(api: FakeAPI, mutator: SchedulingMutator) -> None:
    broken = etcd_policy("broken", podSelector={"matchExpressions": [{"key": "app", "operator": "In"}]},
                         nodeSelector={"broken": "yes"})  # fmt: skip
    create(api, broken, etcd_policy())
    request = review(pod())
    result = applied(request, mutator(request))
    assert result["spec"]["nodeSelector"] == {"pool": "etcd"}
    assert result["metadata"]["annotations"][POLICIES_ANNOTATION] == "ClusterPodSchedulingPolicy/etcd"
    labels = ("ClusterPodSchedulingPolicy/broken", "Pod", "error")
    assert SCHEDULING_POLICY_APPLICATIONS.labels(*labels)._value.get() >= 1


@pytest.mark.parametrize(
    ("obj", "operation", "old", "message"),
    [
        (pod(), "UPDATE", pod(), ONLY_CREATE),
        (workload("Job"), "UPDATE", workload("Job"), ONLY_CREATE),
        (pod() | {"metadata": {"name": "ds-1", "namespace": NAMESPACE, "labels": ETCD,
                               "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds",
                                                    "uid": "1", "controller": True}]}}, "CREATE", None, DAEMONSET_POD),
        (pod() | {"metadata": {"name": "m", "namespace": NAMESPACE, "labels": ETCD,
                               "annotations": {"kubernetes.io/config.mirror": "x"}}}, "CREATE", None, MIRROR_POD),
    ],
    ids=["pod-update", "job-update", "daemonset-pod", "mirror-pod"],
)  # fmt: skip
def test_requests_left_alone(
    api: FakeAPI, mutator: SchedulingMutator, obj: JSON, operation: str, old: JSON | None, message: str
) -> None:
    create(api, etcd_policy())
    response = mutator(review(obj, operation=operation, old=old))
    assert (response.allowed, response.patch, response.message) == (True, None, message)


def test_an_update_that_leaves_the_template_alone_is_never_patched(api: FakeAPI, mutator: SchedulingMutator) -> None:
    create(api, etcd_policy())
    old = workload("Deployment")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    new["metadata"]["labels"] = {"team": "a"}
    response = mutator(review(new, operation="UPDATE", old=old))
    assert (response.allowed, response.patch, response.message) == (True, None, TEMPLATE_UNCHANGED)


def test_an_update_that_changes_the_template_is_mutated(api: FakeAPI, mutator: SchedulingMutator) -> None:
    create(api, etcd_policy())
    old = workload("Deployment")
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "etcd:4"
    request = review(new, operation="UPDATE", old=old)
    assert applied(request, mutator(request))["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "etcd"}


def test_kupids_counter_follows_its_rules(api: FakeAPI, mutator: SchedulingMutator) -> None:
    def counts() -> dict[str, float]:
        return {t: KUPID_REQUESTS.labels(t)._value.get() for t in ("processed", "allowed", "mutated", "error")}

    create(api, etcd_policy())
    start = counts()
    mutator(review(pod(labels={"app": "other"})))  # no match: processed, allowed
    first = applied(review(pod()), mutator(review(pod())))  # mutated: processed, allowed, mutated
    mutator(review(first))  # matched, nothing changed: processed only
    mutator(review(workload("ReplicaSet")))  # not a target: processed, error
    end = counts()
    assert {t: end[t] - start[t] for t in end} == {"processed": 4, "allowed": 2, "mutated": 1, "error": 1}


def test_reinvocation_changes_nothing(api: FakeAPI, mutator: SchedulingMutator) -> None:
    create(api, etcd_policy(affinity=required(term(req("zone", "In", "a")), term(req("zone", "In", "b")))))
    request = review(pod(affinity=required(term(req("disk", "In", "ssd")))))
    once = applied(request, mutator(request))
    again = mutator(review(once))
    assert (again.allowed, again.patch, again.message) == (True, None, UNCHANGED)


def test_no_policy_means_no_patch(api: FakeAPI, mutator: SchedulingMutator) -> None:
    response = mutator(review(pod()))
    assert (response.allowed, response.patch, response.message) == (True, None, NO_POLICY)


def test_a_read_failure_answers_500_so_the_failure_policy_decides() -> None:
    class Broken:
        def list(self, *args: Any, **kwargs: Any) -> Any:
            raise TimeoutError("cache not synced")

        def get(self, *args: Any, **kwargs: Any) -> Any:
            raise TimeoutError("cache not synced")

    response = SchedulingMutator(Broken())(review(pod()))
    assert (response.allowed, response.code) == (False, 500)
    assert "cache not synced" in response.message


class RecordedEvents:
    """Stands in for the manager's EventRecorder: remembers (policy, type, reason, message)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str, str]] = []

    def event(self, obj: Any, type_: str, reason: str, message: str) -> None:
        self.events.append((obj["metadata"]["name"], type_, reason, message))


def test_invalid_and_conflicting_policies_get_a_warning_event(api: FakeAPI, mutator: SchedulingMutator) -> None:
    recorder = RecordedEvents()
    mutator.recorder = recorder  # type: ignore[assignment]
    broken = etcd_policy("broken", podSelector={"matchExpressions": [{"key": "app", "operator": "In"}]})
    create(api, broken, etcd_policy(nodeSelector=None, tolerations=None))
    mutator(review(pod(affinity=required(term(req("zone", "In", "c"))))))
    assert [(name, kind, reason) for name, kind, reason, _ in recorder.events] == [
        ("broken", "Warning", "InvalidSchedulingPolicy"),
        ("etcd", "Warning", "SchedulingPolicyConflict"),
    ]
    assert recorder.events[0][3].startswith("Policy is invalid and was skipped: spec.podSelector.matchExpressions[0]")
    assert recorder.events[1][3].startswith(f"Policy was not applied to Pod {NAMESPACE}/etcd-0: ")


def test_a_pod_with_every_field_of_the_schema_is_patched_only_where_policies_merge(
    api: FakeAPI, mutator: SchedulingMutator
) -> None:
    # docs/design.md, difference 57: kupid re-encodes the pod from k8s.io/api v0.24.3 types, dropping newer fields.
    create(api, etcd_policy())
    spec = full_pod_spec()
    spec.pop("nodeName")  # a pod with a nodeName bypasses the scheduler, and kupid's policies with it
    request = review(pod(**spec))

    response = mutator(request)
    result = applied(request, response)

    merged = ("/metadata/annotations", "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/",
              "/spec/nodeSelector/pool", "/spec/tolerations/1")  # fmt: skip
    paths = [op["path"] for op in response.patch or []]
    assert paths
    assert all(path.startswith(merged) for path in paths), paths
    assert {k: v for k, v in result["spec"].items() if k not in ("affinity", "nodeSelector", "tolerations")} == {
        k: v for k, v in spec.items() if k not in ("affinity", "nodeSelector", "tolerations")
    }
    assert result["spec"]["schedulingGates"] == spec["schedulingGates"]
    assert result["spec"]["affinity"]["podAffinity"] == spec["affinity"]["podAffinity"]


def test_through_a_cache_a_changed_added_or_deleted_policy_applies_at_the_next_request(api: FakeAPI) -> None:
    # The policy set is not listed again while the cache's policy informers see no change; each change is seen.
    client = api.client(scheme=add_to_scheme(Scheme()))
    client.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": {"role": "etcd"}}}
    )
    created = client.create(etcd_policy())
    cache = Cache(client, by_kind={"v1/Namespace": CacheScope(projection=Projection)})
    for kind in ("v1/Namespace", ClusterPodSchedulingPolicy, PodSchedulingPolicy):
        cache.get_informer(kind)
    mutator = SchedulingMutator(DelegatingClient(cache, client), cache=cache)
    cache.start()
    try:
        assert cache.wait_for_sync(10)

        def node_selector() -> Any:
            request = review(pod())
            return applied(request, mutator(request))["spec"].get("nodeSelector")

        assert node_selector() == {"pool": "etcd"}
        assert node_selector() == {"pool": "etcd"}  # the set as built
        created["spec"]["nodeSelector"] = {"pool": "etcd-2"}
        client.update(created)
        eventually(lambda: node_selector() == {"pool": "etcd-2"}, "the changed policy applied")
        client.create(namespaced(NAMESPACE, "zone", podSelector={}, nodeSelector={"zone": "a"}))
        eventually(lambda: node_selector() == {"pool": "etcd-2", "zone": "a"}, "the added policy applied")
        client.delete(created)
        eventually(lambda: node_selector() == {"zone": "a"}, "the deleted policy gone")
    finally:
        cache.stop()
