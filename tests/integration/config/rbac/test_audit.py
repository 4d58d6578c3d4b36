"""Least privilege, proven from the API server's audit log.

One scenario on its own control plane (audit level Metadata) drives every lane and feature that `config/rbac/`
grants rights for, with `ballastd` running as its ServiceAccount and the CRD installer as its own: CRDs applied
by `ballastd apply-crds` (created, then updated), the Go finalizer migrated, pods owned by every workload kind
enrolled and admitted, samples from metrics.k8s.io and from a fake kubelet through `nodes/<n>/proxy`, an in-place
resize with its events, policy statuses, the kill switch, an orphaned profile deleted, the consolidation advisor's
report (with its price list and a stand-in for Karpenter's NodePool CRD), leader election on Redis,
and the self-signed webhook certificate created and then renewed; last, `ballastd uninstall --deployment=ballast`
as the uninstall hook's ServiceAccount (the operator's Deployment scaled to 0 and its last pod awaited, then the
profiles' cleanup finalizer removed, one of them after a conflict). Then, per identity: every granted
(group, resource, subresource, verb) was used at least once, nothing was refused, and nothing was allowed by a
grant outside `config/rbac/`.
"""

from __future__ import annotations

import base64
import contextlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.cmd import ballastd
from ballast.internal.enrollment import (
    LEADER_ELECTION_ID,
    LEGACY_POD_FINALIZER,
    MODE_LABEL,
    POLICY_REF,
    PROFILE_CLEANUP_FINALIZER,
    PROFILE_REF,
)
from ballast.internal.manifests.rbac import (
    consolidation_catalogue_name,
    crd_names,
    operator_deployment_name,
    webhook_secret_name,
)
from ballast.internal.manifests.webhooks import all_webhook_configurations
from ballast.internal.quantity import format_bytes
from ballast.runtime import Client, RESTConfig, new_client
from ballast.runtime.envtest import APIError, Environment, json_handler, network
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rbacgen import Grant
from tests.integration.internal.cmd.ballastd.conftest import (
    GROUP_VERSION,
    OPERATOR_NAMESPACE,
    Ballastd,
    MetricsBackend,
    fast_policy,
    pod,
)
from tests.integration.redis_server import RedisServer

from .config_rbac import (
    audit_problems,
    documents,
    grants,
    read_audit_log,
    service_account_kubeconfig,
    used,
    user_of,
)

OPERATOR = user_of(OPERATOR_NAMESPACE, "ballast")
INSTALLER = user_of(OPERATOR_NAMESPACE, "ballast-crd-installer")
UNINSTALLER = user_of(OPERATOR_NAMESPACE, "ballast-uninstall")
_SECURE_METRICS = (
    "the metrics-auth Component, used only with --metrics-secure: this scenario scrapes plain HTTP (its metric() "
    "polls), and tests/integration/internal/runtime/test_metrics_secure.py reviews tokens on the real API server"
)
UNEXERCISED: dict[Grant, str] = {
    Grant("authentication.k8s.io", "tokenreviews", "", "create"): _SECURE_METRICS,
    Grant("authorization.k8s.io", "subjectaccessreviews", "", "create"): _SECURE_METRICS,
}
"""Grants this scenario does not exercise, each with the reason; every other grant of config/rbac/ is used below."""

SERVICE = "ballast-webhook"
NODE = "node-a"
NAMESPACE = "shop"
QUIET = "quiet"
PROFILE = "shop--api--default-a9696153"
ORPHAN = "ghost--api--default-a9696153"
EPHEMERAL_BYTES = 4096
BALLAST = f"/apis/{GROUP_VERSION}"
WEBHOOK_CONFIGURATIONS = "/apis/admissionregistration.k8s.io/v1"
KUPID = "/apis/kupid.gardener.cloud/v1alpha1"
BALANCERS = f"/apis/balancer.x-k8s.io/v1alpha1/namespaces/{NAMESPACE}/balancers"
REPORT = f"{BALLAST}/consolidationreports/cluster"
ELECTION = ["--leader-elect-lease-duration=4", "--leader-elect-renew-deadline=3", "--leader-elect-retry-period=1"]
IMAGE = "registry.k8s.io/pause:3.10"
DEPLOYMENT = operator_deployment_name()
OPERATOR_LABELS = {"app.kubernetes.io/name": "ballast", "app.kubernetes.io/component": "operator"}
CHANGED_MEANWHILE = {"audit.ballast.tightlinesoftware.com/changed": "meanwhile"}


@pytest.fixture
def audited(private_network: None) -> Iterator[Environment]:
    """A control plane of its own, writing an audit log, so the log holds this scenario only."""
    with Environment(audit_log=True) as env:
        yield env


# --------------------------------------------------------------------------------------------- the world


def _template(owner: str, restart: str = "Always") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"owner": owner}},
        "spec": {"restartPolicy": restart, "containers": [{"name": "app", "image": IMAGE}]},
    }


def _owner_reference(owner: dict[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": True}  # fmt: skip


class World:
    """What the scenario runs against, created as admin."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.rest = env.rest

    def namespace(self, name: str) -> None:
        with contextlib.suppress(APIError):
            self.make("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    def make(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = self.rest.create(path, body)
        return created

    def consolidation_inputs(self) -> None:
        """The advisor's price list (its default ConfigMap) and a stand-in for Karpenter's NodePool CRD with one
        NodePool, so that every read the advisor's roles grant is made."""
        self.make(f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": consolidation_catalogue_name()},
            "data": {"catalogue.yaml": "offerings: []\n"},
        })  # fmt: skip
        self.make("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "nodepools.karpenter.sh"},
            "spec": {"group": "karpenter.sh", "scope": "Cluster",
                     "names": {"plural": "nodepools", "singular": "nodepool", "kind": "NodePool"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
        })  # fmt: skip
        poll_until(lambda: established(self.env, "nodepools.karpenter.sh"), timeout=20, what="NodePools served")
        self.make("/apis/karpenter.sh/v1/nodepools", {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                                                      "metadata": {"name": "general"}, "spec": {}})  # fmt: skip

    def advised(self) -> bool:
        """Whether the advisor wrote its report (Ready, having read the NodePools)."""
        try:
            status = self.rest.get(REPORT).get("status") or {}
        except APIError:
            return False
        ready = [c for c in status.get("conditions") or () if c["type"] == "Ready" and c["status"] == "True"]
        return bool(ready) and (status.get("observed") or {}).get("karpenter") is True

    def configuration(self) -> None:
        """BallastConfig (short orphanTTL), both MetricsSources, the default policy with a kubelet-fed resource,
        a policy naming owner kinds (so admission walks owner chains too), and a ResourcePolicy."""
        self.rest.apply(f"{BALLAST}/ballastconfigs/ballast", {
            "apiVersion": GROUP_VERSION, "kind": "BallastConfig", "metadata": {"name": "ballast"},
            "spec": {"identityLabels": ["app.kubernetes.io/name", "app.kubernetes.io/component"], "orphanTTL": "2s"},
        })  # fmt: skip
        for name, type_ in (("kubernetes-metrics", "kubernetesMetrics"), ("kubelet-summary", "kubeletSummary")):
            self.rest.apply(f"{BALLAST}/metricssources/{name}", {
                "apiVersion": GROUP_VERSION, "kind": "MetricsSource", "metadata": {"name": name},
                "spec": {"type": type_, "config": {"pollInterval": "1s", "reservoirSize": 1000}},
            })  # fmt: skip
        default = fast_policy()
        storage = {"resource": "ephemeral-storage", "field": "request", "source": "kubelet-summary"}
        default["spec"]["metrics"].append({**storage, "aggregation": "max", "headroom": "1.0"})
        self.rest.apply(f"{BALLAST}/clusterresourcepolicies/default", default)
        by_kind = fast_policy("rollouts", priority=10, selector={"kinds": ["Rollout"]})
        self.rest.apply(f"{BALLAST}/clusterresourcepolicies/rollouts", by_kind)
        quiet = fast_policy("quiet")
        quiet.update(kind="ResourcePolicy", metadata={"name": "quiet", "namespace": QUIET})
        self.rest.apply(f"{BALLAST}/namespaces/{QUIET}/resourcepolicies/quiet", quiet)

    def owners(self) -> dict[str, dict[str, Any]]:
        """One controller of every kind the manager may read, chained as controllers chain them."""
        ns = NAMESPACE
        apps, batch = f"/apis/apps/v1/namespaces/{ns}", f"/apis/batch/v1/namespaces/{ns}"

        def selector(owner: str) -> dict[str, Any]:
            return {"matchLabels": {"owner": owner}}

        deployment = self.make(f"{apps}/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": selector("web"), "template": _template("web")}})  # fmt: skip
        replica_set = self.make(f"{apps}/replicasets", {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "ownerReferences": [_owner_reference(deployment)]},
            "spec": {"selector": selector("web"), "template": _template("web")}})  # fmt: skip
        stateful_set = self.make(f"{apps}/statefulsets", {
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": {"serviceName": "db", "selector": selector("db"), "template": _template("db")}})  # fmt: skip
        daemon_set = self.make(f"{apps}/daemonsets", {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": selector("agent"), "template": _template("agent")}})  # fmt: skip
        nightly = {"template": _template("nightly", "Never")}
        cron_job = self.make(f"{batch}/cronjobs", {
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": nightly}}})  # fmt: skip
        job = self.make(f"{batch}/jobs", {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "nightly-1", "ownerReferences": [_owner_reference(cron_job)]},
            "spec": nightly})  # fmt: skip
        controller = self.make(f"/api/v1/namespaces/{ns}/replicationcontrollers", {
            "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "classic"},
            "spec": {"selector": {"owner": "classic"}, "template": _template("classic")}})  # fmt: skip
        return {"ReplicaSet": replica_set, "StatefulSet": stateful_set, "DaemonSet": daemon_set, "Job": job,
                "ReplicationController": controller}  # fmt: skip

    def enrolled_pod(
        self, name: str, owner: dict[str, Any] | None = None, *, mode: str = "apply", cpu: str = "1000m"
    ) -> dict[str, Any]:
        body = pod(name, NAMESPACE, "shop", mode, cpu=cpu, memory="100Mi")
        if owner is not None:
            body["metadata"]["ownerReferences"] = [_owner_reference(owner)]
            body["spec"]["nodeName"] = NODE
        return self.make(f"/api/v1/namespaces/{NAMESPACE}/pods", body)

    def kubelet_summary(self) -> dict[str, Any]:
        """The fake kubelet's Summary: ephemeral-storage of every pod bound to the node."""
        pods = self.rest.get("/api/v1/pods", params={"fieldSelector": f"spec.nodeName={NODE}"})["items"]
        return {"node": {"nodeName": NODE}, "pods": [
            {"podRef": {"name": p["metadata"]["name"], "namespace": p["metadata"]["namespace"],
                        "uid": p["metadata"]["uid"]},
             "containers": [{"name": c["name"]} for c in p["spec"]["containers"]],
             "ephemeral-storage": {"usedBytes": EPHEMERAL_BYTES}}
            for p in pods
        ]}  # fmt: skip

    def webhook_service(self, address: str) -> None:
        """Service ballast-webhook with one endpoint, the address the serving replica listens on."""
        base = f"/api/v1/namespaces/{OPERATOR_NAMESPACE}"
        self.rest.apply(f"{base}/services/{SERVICE}", {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": SERVICE, "namespace": OPERATOR_NAMESPACE},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443, "protocol": "TCP"}]}})  # fmt: skip
        self.rest.apply(f"/apis/discovery.k8s.io/v1/namespaces/{OPERATOR_NAMESPACE}/endpointslices/{SERVICE}", {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": SERVICE, "namespace": OPERATOR_NAMESPACE,
                         "labels": {"kubernetes.io/service-name": SERVICE}},
            "addressType": "IPv4", "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": 9443, "protocol": "TCP"}]})  # fmt: skip

    def secret_ca(self) -> str:
        secret = self.rest.get(f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/secrets/{webhook_secret_name()}")
        return str(secret.get("data", {}).get("ca.crt", ""))

    def ca_bundles(self) -> set[str]:
        return {
            str(webhook["clientConfig"].get("caBundle", ""))
            for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations")
            for name in ("ballast", "ballast-scheduling")
            for webhook in self.rest.get(f"{WEBHOOK_CONFIGURATIONS}/{plural}/{name}")["webhooks"]
        }

    def profile(self, name: str = PROFILE) -> dict[str, Any]:
        try:
            return dict(self.rest.get(f"{BALLAST}/workloadprofiles/{name}"))
        except APIError:
            return {}

    def balancer(self) -> None:
        """A Balancer over the Deployment, its ReplicaSet and the StatefulSet of `owners()` (each at 1 replica),
        placing 2 on each: every scale kind read and patched."""

        def target(name: str, kind: str) -> dict[str, Any]:
            return {"name": name, "minReplicas": 2, "maxReplicas": 2,
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": name}}  # fmt: skip

        self.make(BALANCERS, {
            "apiVersion": "balancer.x-k8s.io/v1alpha1", "kind": "Balancer", "metadata": {"name": "spread"},
            "spec": {"replicas": 6, "selector": {"matchExpressions": [{"key": "owner", "operator": "In",
                                                                       "values": ["web", "db"]}]},
                     "targets": [target("web", "Deployment"), target("web-1", "ReplicaSet"),
                                 target("db", "StatefulSet")],
                     "policy": {"policyName": "priority",
                                "priorities": {"targetOrder": ["web", "web-1", "db"]}}}})  # fmt: skip

    def balanced(self) -> bool:
        apps = f"/apis/apps/v1/namespaces/{NAMESPACE}"
        scaled = [self.rest.get(f"{apps}/{path}")["spec"].get("replicas")
                  for path in ("deployments/web", "replicasets/web-1", "statefulsets/db")]  # fmt: skip
        conditions = self.rest.get(f"{BALANCERS}/spread").get("status", {}).get("conditions", [])
        completed = any(c["type"] == "Balancing" and c["status"] == "True" for c in conditions)
        return scaled == [2, 2, 2] and completed

    def scheduled_pod(self, name: str) -> bool:
        """After a ClusterPodSchedulingPolicy for app `zoned` exists: whether a new such pod is admitted with it
        (the scheduling webhook reads policies and namespaces from ballastd's cache)."""
        made = self.make(f"/api/v1/namespaces/{NAMESPACE}/pods", pod(name, NAMESPACE, "zoned", None))
        return bool(made["spec"].get("nodeSelector") == {"zone": "a"})

    def pod_of(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.rest.get(f"/api/v1/namespaces/{NAMESPACE}/pods/{name}")
        return found

    def label(self, name: str, mode: str | None) -> None:
        patch = {"metadata": {"labels": {MODE_LABEL: mode}}}
        path = f"/api/v1/namespaces/{NAMESPACE}/pods/{name}"
        self.rest.request("PATCH", path, patch, content_type="application/merge-patch+json")

    def annotations(self, name: str) -> dict[str, str]:
        return dict(self.pod_of(name)["metadata"].get("annotations") or {})

    def cpu_request(self, name: str) -> str:
        return str(self.pod_of(name)["spec"]["containers"][0]["resources"]["requests"]["cpu"])

    def events(self, selector: str) -> list[dict[str, Any]]:
        found = self.rest.get(f"/api/v1/namespaces/{NAMESPACE}/events", params={"fieldSelector": selector})
        return list(found["items"])

    def operator_deployment(self) -> str:
        """The operator's Deployment as the chart and config/ name it, and one pod of it left to go (no
        kube-controller-manager here: nothing else creates or removes its pods). Returns the pod's path."""
        base = f"/api/v1/namespaces/{OPERATOR_NAMESPACE}"
        self.make(f"/apis/apps/v1/namespaces/{OPERATOR_NAMESPACE}/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": DEPLOYMENT},
            "spec": {"replicas": 2, "selector": {"matchLabels": OPERATOR_LABELS},
                     "template": {"metadata": {"labels": OPERATOR_LABELS},
                                  "spec": {"containers": [{"name": "manager", "image": IMAGE}]}}},
        })  # fmt: skip
        self.make(f"{base}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{DEPLOYMENT}-0", "labels": OPERATOR_LABELS},
            "spec": {"containers": [{"name": "manager", "image": IMAGE}]},
        })  # fmt: skip
        return f"{base}/pods/{DEPLOYMENT}-0"

    def replicas(self) -> int:
        return int(self.rest.get(f"/apis/apps/v1/namespaces/{OPERATOR_NAMESPACE}/deployments/{DEPLOYMENT}")["spec"]
                   ["replicas"])  # fmt: skip

    def profiles(self) -> list[dict[str, Any]]:
        return list(self.rest.get(f"{BALLAST}/workloadprofiles")["items"])

    def change(self, profile: str) -> None:
        """Label a profile, as a concurrent writer would: its resourceVersion moves on."""
        patch = {"metadata": {"labels": CHANGED_MEANWHILE}}
        path = f"{BALLAST}/workloadprofiles/{profile}"
        self.rest.request("PATCH", path, patch, content_type="application/merge-patch+json")


class ChangedMeanwhile:
    """`ballastd uninstall`'s client, with a concurrent writer: just before the first profile patch, that profile
    is changed (as admin), so the patch conflicts and the command re-reads the profile (its `get`)."""

    def __init__(self, client: Client, world: World) -> None:
        self.client = client
        self.world = world
        self.changed: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def patch(self, obj: dict[str, Any], patch: Any, **options: Any) -> Any:
        if obj.get("kind") == "WorkloadProfile" and not self.changed:
            self.changed.append(obj["metadata"]["name"])
            self.world.change(obj["metadata"]["name"])
        return self.client.patch(obj, patch, **options)


def run_apply_crds(kubeconfig: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ballast.internal.cmd.ballastd", "apply-crds", f"--kubeconfig={kubeconfig}"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def established(env: Environment, name: str) -> bool:
    crd = env.rest.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    conditions = crd.get("status", {}).get("conditions", [])
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def all_established(env: Environment) -> bool:
    return all(established(env, name) for name in crd_names())


def wait_admitting(world: World, prefix: str, process: Ballastd) -> None:
    """Pod CREATEs fail (failurePolicy Fail) until the replica serves with the CA the configurations trust."""
    counter = iter(range(1000))

    def mutated() -> bool:
        body = pod(f"{prefix}-{next(counter)}", NAMESPACE, "probe", "apply")
        made = world.make(f"/api/v1/namespaces/{NAMESPACE}/pods", body)
        return POLICY_REF in (made["metadata"].get("annotations") or {})

    poll_until(mutated, timeout=40, interval=0.5, what="admission through the Service", last_error=process.output)


def operator(env: Environment, work: Path, name: str, address: str, redis: RedisServer) -> Ballastd:
    process = Ballastd(env, work, [
        "--leader-elect", *ELECTION, f"--store={redis.url}", "--webhook-self-signed", "--controllers=*,consolidation",
        f"--webhook-bind-address={address}:9443", f"--webhook-cert-path={work / name / 'certs'}",
    ], name=name)  # fmt: skip
    process.wait_ready()
    return process


def is_leader(process: Ballastd) -> bool:
    return process.metric("leader_election_master_status", name=LEADER_ELECTION_ID) == 1.0


# ----------------------------------------------------------------------------------------------- the test


def uninstall(env: Environment, world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """The chart's pre-delete hook command, in-process (`ballastd.uninstall`, what `ballastd uninstall` runs) so a
    concurrent writer can be placed between its list and its patch, as ServiceAccount ballast-uninstall."""
    pod_path = world.operator_deployment()
    removed = threading.Event()

    def remove_last_pod() -> None:  # an unscheduled pod goes at once
        env.rest.request("DELETE", pod_path, params={"gracePeriodSeconds": "0"})
        removed.set()

    remover = threading.Timer(2.0, remove_last_pod)  # a while after the scale-down: the command must wait
    kubeconfig = service_account_kubeconfig(env, "ballast-uninstall")
    client = ChangedMeanwhile(new_client(RESTConfig.load(str(kubeconfig))), world)
    args = ballastd.build_parser().parse_args([
        "uninstall", f"--deployment={DEPLOYMENT}", f"--operator-namespace={OPERATOR_NAMESPACE}",
        "--uninstall-timeout=30", "--uninstall-quiet-period=3",
    ])  # fmt: skip
    finalized = [p["metadata"]["name"] for p in world.profiles() if PROFILE_CLEANUP_FINALIZER in
                 (p["metadata"].get("finalizers") or [])]  # fmt: skip
    assert PROFILE in finalized
    capsys.readouterr()
    remover.start()
    try:
        assert ballastd.uninstall(args, client) == 0, capsys.readouterr().err
    finally:
        remover.cancel()
    out = capsys.readouterr().out
    assert removed.is_set()  # the command returned only after the last pod had gone
    assert f"deployment.apps/{DEPLOYMENT} scaled to 0; no operator pod left" in out
    assert f"removed finalizer {PROFILE_CLEANUP_FINALIZER} from {len(finalized)} WorkloadProfiles" in out
    assert "the CRDs can be deleted" in out  # no finalizer came back, the Lease released
    assert world.replicas() == 0
    profiles = {p["metadata"]["name"]: p["metadata"] for p in world.profiles()}
    assert not [name for name, meta in profiles.items() if PROFILE_CLEANUP_FINALIZER in (meta.get("finalizers") or [])]
    (changed,) = client.changed
    assert profiles[changed]["labels"].items() >= CHANGED_MEANWHILE.items()  # re-read, not overwritten


@pytest.mark.private_network
@pytest.mark.timeout(600)
def test_the_operator_uses_every_grant_and_is_refused_nothing(
    audited: Environment, redis_server: RedisServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env, world = audited, World(audited)

    # The CRD installer: created through server-side apply, then applied again (an update).
    installer = service_account_kubeconfig(env, "ballast-crd-installer")  # applies config/rbac/ first
    assert "serverside-applied" in run_apply_crds(installer)
    run_apply_crds(installer)
    poll_until(lambda: all_established(env), timeout=20, what="our CRDs established")
    poll_until(lambda: env.rest.get(BALLAST), timeout=20, what="our API group served")

    for name in (NAMESPACE, QUIET):
        world.namespace(name)
    world.configuration()
    world.consolidation_inputs()
    world.make(f"{BALLAST}/workloadprofiles", {"apiVersion": GROUP_VERSION, "kind": "WorkloadProfile",
                                               "metadata": {"name": ORPHAN}})  # fmt: skip
    legacy = pod("legacy", NAMESPACE, "legacy", None)
    legacy["metadata"]["finalizers"] = [LEGACY_POD_FINALIZER]
    world.make(f"/api/v1/namespaces/{NAMESPACE}/pods", legacy)
    owners = world.owners()
    addresses = [network.allocate_address(), network.allocate_address()]
    world.webhook_service(addresses[0])
    for config in all_webhook_configurations(service_name=SERVICE, service_namespace=OPERATOR_NAMESPACE):
        env.rest.apply(f"{WEBHOOK_CONFIGURATIONS}/{config['kind'].lower()}s/{config['metadata']['name']}", config)
    metrics = MetricsBackend(env)
    summaries = json_handler({"/stats/summary": world.kubelet_summary})
    kubelet = env.serve_kubelet(NODE, summaries)
    processes: list[Ballastd] = []
    try:
        first = operator(env, tmp_path, "first", addresses[0], redis_server)
        processes.append(first)
        poll_until(lambda: is_leader(first), timeout=20, what="the Lease")
        wait_admitting(world, "probe", first)

        # A scheduling policy: the schedulingpolicy lane renders it into matchConditions, the webhook applies it.
        world.make(f"{KUPID}/clusterpodschedulingpolicies", {
            "apiVersion": "kupid.gardener.cloud/v1alpha1", "kind": "ClusterPodSchedulingPolicy",
            "metadata": {"name": "zoned"},
            "spec": {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "zoned"}},
                     "nodeSelector": {"zone": "a"}}})  # fmt: skip
        counter = iter(range(1000))
        poll_until(lambda: world.scheduled_pod(f"zoned-{next(counter)}"), timeout=30, interval=0.5,
                   what="the scheduling policy applied at admission", last_error=first.output)  # fmt: skip
        # A Balancer: its targets' scale subresources read and patched, its status applied.
        world.balancer()
        poll_until(world.balanced, timeout=30, what="the Balancer to place 2 replicas on each target",
                   last_error=first.output)  # fmt: skip
        # The consolidation advisor: its report created, the inputs listed, the status applied, an event.
        poll_until(world.advised, timeout=30, what="the ConsolidationReport", last_error=first.output)
        ca = world.secret_ca()
        assert ca
        assert world.ca_bundles() == {ca}  # the self-signed CA, set on every webhook

        # Pods under every owner kind, on the fake kubelet's node, and a standalone pod to resize later.
        for kind, owner in owners.items():
            world.enrolled_pod(kind.lower(), owner)
        world.enrolled_pod("resizing", mode="measure")
        poll_until(lambda: world.profile().get("status", {}).get("state") == "Sufficient", timeout=90,
                   what="a Sufficient profile", last_error=first.output)  # fmt: skip
        (app,) = world.profile()["status"]["containers"]
        assert app["recommendations"]["cpu"]["request"] == "287m"
        assert app["recommendations"]["ephemeral-storage"]["request"] == format_bytes(EPHEMERAL_BYTES)
        assert ("GET", "/stats/summary") in summaries.requests  # through nodes/<node>/proxy

        # In-place resize, step by step, with a Resized event created and then counted up.
        world.label("resizing", "resize")
        poll_until(lambda: world.cpu_request("resizing") == "287m", timeout=60, what="the resize to converge",
                   last_error=first.output)  # fmt: skip
        poll_until(lambda: [e["count"] for e in world.events("involvedObject.name=resizing,reason=Resized")] == [5],
                   timeout=15, what="one Resized event, counted up at each of the 5 steps")  # fmt: skip

        # Unenrolling drops the refs; the Go finalizer is gone; the orphaned profile expired; policies have status.
        world.label("replicationcontroller", None)
        poll_until(lambda: PROFILE_REF not in world.annotations("replicationcontroller"), timeout=30,
                   what="the refs of an unenrolled pod to go")  # fmt: skip
        assert not world.pod_of("legacy")["metadata"].get("finalizers")
        poll_until(lambda: not world.profile(ORPHAN), timeout=30, what="the orphaned profile to be deleted")
        poll_until(lambda: env.rest.get(f"{BALLAST}/namespaces/{QUIET}/resourcepolicies/quiet").get("status"),
                   timeout=30, what="the ResourcePolicy's status")  # fmt: skip
        assert env.rest.get(f"{BALLAST}/clusterresourcepolicies/rollouts")["status"]["profileDiscriminator"]

        # The kill switch, seen through the name-scoped watch.
        switch = f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/configmaps"
        world.make(switch, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ballast-kill-switch"}})
        poll_until(lambda: first.metric("ballast_kill_switch_transitions_total", transition="activated") >= 1,
                   timeout=20, what="the kill switch")  # fmt: skip
        env.rest.delete(f"{switch}/ballast-kill-switch")
        poll_until(lambda: first.metric("ballast_kill_switch_transitions_total", transition="deactivated") >= 1,
                   timeout=20, what="the kill switch released")  # fmt: skip

        # Renewal: a replica starting on an unusable Secret replaces it and the caBundles follow.
        first.stop()
        secret_path = f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/secrets/{webhook_secret_name()}"
        secret = env.rest.get(secret_path)
        secret["data"]["tls.crt"] = base64.b64encode(b"not a certificate").decode()
        env.rest.request("PUT", secret_path, secret)
        world.webhook_service(addresses[1])
        second = operator(env, tmp_path, "second", addresses[1], redis_server)
        processes.append(second)
        poll_until(lambda: world.secret_ca() != ca and world.ca_bundles() == {world.secret_ca()}, timeout=20,
                   what="a renewed certificate and caBundles", last_error=second.output)  # fmt: skip
        poll_until(lambda: is_leader(second), timeout=20, what="the released Lease to be taken")
        wait_admitting(world, "after-renewal", second)
    finally:
        for process in processes:
            process.stop()
        kubelet.stop()
        metrics.stop()

    # The operator stopped, its profiles keep their cleanup finalizer: the uninstall hook frees them.
    uninstall(env, world, capsys)

    records = list(read_audit_log(env.audit_log_path))
    granted = grants(documents())
    assert set(granted) == {OPERATOR, INSTALLER, UNINSTALLER}
    problems: list[str] = []
    for user in (OPERATOR, INSTALLER, UNINSTALLER):
        problems += audit_problems(records, user, granted[user], granted[user] - set(UNEXERCISED))
    assert not problems, "\n".join(problems)
    assert used(records, OPERATOR) >= {Grant("", "nodes", "proxy", "get"), Grant("", "pods", "resize", "patch")}
    stopping = [r for r in records if r.user == UNINSTALLER and r.resource in ("deployments", "pods")]
    assert {(r.verb, r.namespace) for r in stopping} == {("patch", OPERATOR_NAMESPACE), ("list", OPERATOR_NAMESPACE)}
    assert len([r for r in stopping if r.resource == "pods"]) >= 2  # listed until its last pod was gone
