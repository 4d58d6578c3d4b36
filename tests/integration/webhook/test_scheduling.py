"""`/mutate-kupid` behind the real API server, with kube-controller-manager and kube-scheduler: the generated
mutating configuration installed (service reference rewritten to the local server), the handler reading
policies and Namespaces through a cache, as in `ballastd` (whose informers say when the policies changed)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy
from ballast.api.scheme import add_to_scheme
from ballast.internal.manifests.scheduling_webhooks import scheduling_webhook_configurations
from ballast.internal.scheduling import ENFORCE_ANNOTATION, POLICIES_ANNOTATION
from ballast.runtime import (
    APIStatusError,
    Cache,
    CacheScope,
    Projection,
    RESTConfig,
    Scheme,
    WebhookServer,
)
from ballast.runtime.cache import DelegatingClient
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rest import Transport
from ballast.webhook import scheduling
from tests.integration.webhook_server import serve
from tests.paths import CRD_DIR

ETCD = {"app": "etcd"}
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "etcd", "effect": "NoSchedule"}
ZONES = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
CONTAINERS = [{"name": "etcd", "image": "registry.k8s.io/pause:3.10"}]
NODE = "worker-1"


@dataclass
class Cluster:
    env: Environment
    client: APIServerClient
    reader: DelegatingClient
    server: WebhookServer


def _ready_node(env: Environment, name: str) -> None:
    env.rest.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    env.rest.patch_status(
        f"/api/v1/nodes/{name}",
        {"status": {"capacity": capacity, "allocatable": capacity,
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "test"}]}},
    )  # fmt: skip


@pytest.fixture(scope="module")
def cluster(envtest: Environment) -> Iterator[Cluster]:
    components = ["kube-scheduler", "kube-controller-manager"]
    with Environment(
        assets=envtest.assets, components=components, crd_paths=[CRD_DIR], network_mode=envtest.network_mode
    ) as env:
        client = APIServerClient(
            Transport(RESTConfig(env.client_configuration())),
            scheme=add_to_scheme(Scheme()),
            field_owner="scheduling-tests",
        )
        cache = Cache(client, by_kind={"v1/Namespace": CacheScope(projection=Projection)})
        cache.start()
        reader = DelegatingClient(cache, client)
        server = WebhookServer(host="127.0.0.1", port=0, cert_dir=env.webhook_cert_dir())
        scheduling.register(server, reader=reader, cache=cache)  # as ballastd: unchanged policies are not listed
        shutdown = serve(server)
        mutating, _ = scheduling_webhook_configurations(service_name="ballast-webhook", service_namespace="ballast-op")
        env.install_webhooks([mutating], host="127.0.0.1", port=server.port, ca_bundle=env.ca.cert_pem)
        _ready_node(env, NODE)
        try:
            yield Cluster(env, client, reader, server)
        finally:
            shutdown()
            cache.stop()
            client.close()


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    """A namespace labelled role=etcd, and the ClusterPodSchedulingPolicy `etcd-<ns>` selecting it (app=etcd)."""
    name = f"etcd-{uuid.uuid4().hex[:8]}"
    client = cluster.client
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"role": "etcd"}}})
    policy = _policy(cluster, f"etcd-{name}", name)
    try:
        yield name
    finally:
        with contextlib.suppress(APIStatusError):
            client.delete(policy)
        with contextlib.suppress(APIStatusError):
            client.delete({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def _policy(cluster: Cluster, name: str, namespace: str, *, enforced: bool = False, **spec: Any) -> Any:
    metadata: dict[str, Any] = {"name": name}
    if enforced:
        metadata["annotations"] = {ENFORCE_ANNOTATION: "true"}
    body = {
        "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                                                    "values": [namespace]}]},
        "podSelector": {"matchLabels": ETCD},
        "nodeSelector": {"pool": "etcd"},
        "tolerations": [TOLERATION],
        "affinity": {"nodeAffinity": {REQUIRED: ZONES}},
        **spec,
    }  # fmt: skip
    made = cluster.client.create(ClusterPodSchedulingPolicy.model_validate({"metadata": metadata, "spec": body}))
    version = made.metadata.resource_version
    poll_until(
        lambda: any(
            p.metadata.name == name and p.metadata.resource_version == version
            for p in cluster.reader.list(ClusterPodSchedulingPolicy)
        ),
        timeout=10,
        what=f"the cache to hold policy {name}",
    )
    return made


def _pod(name: str, namespace: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(ETCD if labels is None else labels)},
            "spec": {"containers": CONTAINERS, **spec}}  # fmt: skip


def _template(labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"labels": dict(ETCD if labels is None else labels)}, "spec": {"containers": CONTAINERS}}


def _assert_injected(spec: dict[str, Any]) -> None:
    assert spec["nodeSelector"] == {"pool": "etcd"}
    assert TOLERATION in spec["tolerations"]
    assert spec["affinity"]["nodeAffinity"][REQUIRED] == ZONES


# ------------------------------------------------------------------------------------------------- tests


def test_a_daemonset_pod_recreated_under_a_new_policy_stays_schedulable_on_its_node(cluster: Cluster) -> None:
    # First in the module: the test node has no kubelet, and its Ready condition is trusted only for a while.
    client = cluster.client
    name = f"ds-{uuid.uuid4().hex[:8]}"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"role": "etcd"}}})
    client.create({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": name},
                   "spec": {"selector": {"matchLabels": ETCD}, "template": _template()}})  # fmt: skip

    def scheduled_pod() -> dict[str, Any] | None:
        pods = [p for p in client.list("v1/Pod", name) if not p["metadata"].get("deletionTimestamp")]
        return pods[0] if len(pods) == 1 and pods[0]["spec"].get("nodeName") == NODE else None

    first = poll_until(scheduled_pod, timeout=30, what="the DaemonSet pod to be scheduled")
    policy = _policy(cluster, f"etcd-{name}", name)  # a nodeSelector the node lacks, created after the DaemonSet
    try:
        client.delete(first, grace_period_seconds=0)
        recreated = poll_until(
            lambda: (p := scheduled_pod()) is not None and p["metadata"]["uid"] != first["metadata"]["uid"] and p,
            timeout=30,
            what="the DaemonSet controller to recreate its pod and the scheduler to bind it",
        )
        assert "nodeSelector" not in recreated["spec"]
        assert POLICIES_ANNOTATION not in (recreated["metadata"].get("annotations") or {})
    finally:
        client.delete(policy)
        client.delete({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def test_a_statefulset_template_and_a_bare_pod_get_the_policy(cluster: Cluster, namespace: str) -> None:
    client = cluster.client
    made: dict[str, Any] = client.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "etcd",
                          "namespace": namespace}, "spec": {"selector": {"matchLabels": ETCD},
                          "serviceName": "etcd", "replicas": 1, "template": _template()}})  # fmt: skip
    template = made["spec"]["template"]
    _assert_injected(template["spec"])
    assert POLICIES_ANNOTATION not in (template["metadata"].get("annotations") or {})
    bare = client.create(_pod("bare", namespace))
    _assert_injected(bare["spec"])
    assert bare["metadata"]["annotations"][POLICIES_ANNOTATION] == f"ClusterPodSchedulingPolicy/etcd-{namespace}"
    # the StatefulSet's own pod: criteria already in its template, the annotation added at its CREATE
    selector = "app=etcd,apps.kubernetes.io/pod-index"
    pod = poll_until(
        lambda: next(iter(client.list("v1/Pod", namespace, label_selector=selector)), None),
        timeout=30,
        what="the StatefulSet controller to create etcd-0",
    )
    _assert_injected(pod["spec"])
    assert pod["metadata"]["annotations"][POLICIES_ANNOTATION] == f"ClusterPodSchedulingPolicy/etcd-{namespace}"


def test_a_non_matching_pod_is_left_alone(cluster: Cluster, namespace: str) -> None:
    made = cluster.client.create(_pod("other", namespace, labels={"app": "web"}))
    assert "nodeSelector" not in made["spec"]
    assert POLICIES_ANNOTATION not in (made["metadata"].get("annotations") or {})


def test_a_pods_own_node_selector_wins_and_an_enforced_policy_denies_it_naming_the_field(
    cluster: Cluster, namespace: str
) -> None:
    client = cluster.client
    kept = client.create(_pod("mine", namespace, nodeSelector={"pool": "mine"}))
    assert kept["spec"]["nodeSelector"] == {"pool": "mine"}
    assert TOLERATION in kept["spec"]["tolerations"]  # the rest of the policy still applies
    enforced = _policy(
        cluster, f"strict-{namespace}", namespace, enforced=True, podSelector={"matchLabels": {"tier": "db"}}
    )
    try:
        with pytest.raises(APIStatusError) as refused:
            client.create(_pod("strict", namespace, labels={"tier": "db"}, nodeSelector={"pool": "mine"}))
        assert (
            f"ClusterPodSchedulingPolicy/strict-{namespace} is enforced and cannot be applied" in refused.value.message
        )
        assert "spec.nodeSelector[pool]: is 'mine', the policy's is 'etcd'" in refused.value.message
    finally:
        client.delete(enforced)


def _job_template() -> dict[str, Any]:
    return {**_template(), "spec": {"containers": CONTAINERS, "restartPolicy": "Never"}}


def _change_policy(cluster: Cluster, name: str, spec: dict[str, Any]) -> None:
    """Patch the policy and wait until the webhook's cache sees the new nodeSelector."""
    policy = cluster.client.patch(cluster.client.get(ClusterPodSchedulingPolicy, name), {"spec": spec})
    poll_until(
        lambda: cluster.reader.get(ClusterPodSchedulingPolicy, name).spec.node_selector == policy.spec.node_selector,
        timeout=10,
        what="the cache to see the policy change",
    )


def test_a_cronjob_template_is_mutated_at_batch_v1(cluster: Cluster, namespace: str) -> None:
    spec = {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": _job_template()}}}
    made: dict[str, Any] = cluster.client.create(
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": {"name": "backup", "namespace": namespace},
            "spec": spec,
        }
    )
    _assert_injected(made["spec"]["jobTemplate"]["spec"]["template"]["spec"])


def test_a_changed_policy_never_makes_a_job_undeletable(cluster: Cluster, namespace: str) -> None:
    client = cluster.client
    job: dict[str, Any] = client.create(
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": namespace},
         "spec": {"template": _job_template()}}
    )  # fmt: skip
    _assert_injected(job["spec"]["template"]["spec"])
    selector = {"matchLabels": ETCD, "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}
    # a new selector, and a key that re-injecting would add to the immutable template
    _change_policy(
        cluster, f"etcd-{namespace}", {"nodeSelector": {"pool": "etcd", "disk": "ssd"}, "podSelector": selector}
    )
    labelled = client.patch(job, {"metadata": {"labels": {"touched": "yes"}}})  # an UPDATE through the webhook
    assert labelled["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "etcd"}
    client.delete(labelled, propagation_policy="Foreground")
    poll_until(
        lambda: not [j for j in client.list("batch/v1/Job", namespace) if j["metadata"]["name"] == "once"],
        timeout=30,
        what="the Job to be deleted with foreground propagation",
    )


def test_replicas_and_label_patches_never_roll_a_deployment(cluster: Cluster, namespace: str) -> None:
    client = cluster.client
    spec = {"replicas": 1, "selector": {"matchLabels": ETCD}, "template": _template()}
    deployment: dict[str, Any] = client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": spec,
        }
    )
    _assert_injected(deployment["spec"]["template"]["spec"])

    def replica_sets() -> list[dict[str, Any]]:
        return list(client.list("apps/v1/ReplicaSet", namespace))

    poll_until(lambda: len(replica_sets()) == 1, timeout=30, what="the Deployment's ReplicaSet")
    _change_policy(cluster, f"etcd-{namespace}", {"nodeSelector": {"pool": "etcd", "disk": "ssd"}})  # would add disk
    client.patch(deployment, {"spec": {"replicas": 2}})
    client.patch(deployment, {"metadata": {"labels": {"team": "storage"}}})
    after = client.get("apps/v1/Deployment", "web", namespace)
    assert after["spec"]["template"] == deployment["spec"]["template"]
    poll_until(
        lambda: (
            (d := client.get("apps/v1/Deployment", "web", namespace))["status"].get("observedGeneration", 0)
            >= d["metadata"]["generation"]
        ),
        timeout=30,
        what="the Deployment controller to observe the patches",
    )
    assert len(replica_sets()) == 1
    assert "collisionCount" not in client.get("apps/v1/Deployment", "web", namespace)["status"]
