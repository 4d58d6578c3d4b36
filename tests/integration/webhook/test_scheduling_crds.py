"""kupid's CRDs missing, deleted and reinstalled under a running operator, on the real API server
(docs/design.md, difference 61): the scheduling webhook installed with `failurePolicy: Fail`, the `schedulingpolicy`
lane writing its matchConditions, both reading what `watch_scheduling_crds` knows of the CRDs — as in `ballastd`.

(a) With the CRDs missing the operator starts, and a pod in an unrelated namespace is admitted.
(b) Each time the CRDs and an enforced policy come back — from missing at start, reinstalled within the grace
    period, reinstalled after it — no pod created once the operator has read the policy is admitted without the
    policy's fields (the lane's conditions and the API server's view of them included).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy
from ballast.api.scheme import add_to_scheme
from ballast.controllers import schedulingpolicy
from ballast.internal.cmd.wiring import new_manager, watch_scheduling_crds
from ballast.internal.manifests.scheduling_webhooks import (
    MUTATE_WEBHOOK,
    configuration_name,
    scheduling_webhook_configurations,
)
from ballast.internal.scheduling import ENFORCE_ANNOTATION
from ballast.internal.scheduling.availability import ABSENT, CRD_NAMES, SchedulingAvailability
from ballast.runtime import APIStatusError, NotFoundError, RESTConfig, Scheme, WebhookServer
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.manifests import CRD_PATH
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rest import Transport
from ballast.webhook import scheduling
from tests.figures import write_figures
from tests.integration.webhook_server import serving
from tests.paths import CRD_DIR
from tests.unit.internal.runtime.support import running

OPERATOR_NAMESPACE = "ballast-system"
NAME = "ballast"
GRACE = 3.0
"""The reinstall grace, shortened from 30 s so the test can wait it out."""
KUPID_CRDS = sorted(CRD_DIR.glob("kupid.gardener.cloud_*.yaml"))
PODS_PER_ROUND = 4
POOL = {"pool": "etcd"}


@dataclass
class Cluster:
    env: Environment
    client: APIServerClient
    availability: SchedulingAvailability
    reader: Any  # the operator's cache-backed client
    outcomes: dict[str, list[str]] = field(default_factory=dict)


@pytest.fixture(scope="module")
def cluster(envtest: Environment) -> Iterator[Cluster]:
    others = [path for path in sorted(CRD_DIR.glob("*.yaml")) if path not in KUPID_CRDS]
    with Environment(assets=envtest.assets, crd_paths=others, network_mode=envtest.network_mode) as env:
        client = APIServerClient(
            Transport(RESTConfig(env.client_configuration())), scheme=add_to_scheme(Scheme()), field_owner="tests"
        )
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NAMESPACE}})
        mutating, _ = scheduling_webhook_configurations(
            service_name=f"{NAME}-webhook", service_namespace=OPERATOR_NAMESPACE, name=NAME, failure_policy="Fail"
        )
        operator = APIServerClient(
            Transport(RESTConfig(env.client_configuration())), scheme=add_to_scheme(Scheme()), field_owner="ballastd"
        )
        manager = new_manager(operator, namespace=OPERATOR_NAMESPACE)
        availability = watch_scheduling_crds(manager, grace=GRACE)
        schedulingpolicy.setup(
            manager, configuration=configuration_name(NAME), webhook=MUTATE_WEBHOOK, availability=availability
        )
        server = WebhookServer(host="127.0.0.1", port=0, cert_dir=env.webhook_cert_dir())
        scheduling.register(server, reader=manager.client, availability=availability)
        with serving(server):
            env.install_webhooks([mutating], host="127.0.0.1", port=server.port, ca_bundle=env.ca.cert_pem)
            with running(manager, stop_timeout=40):
                made = Cluster(env, client, availability, manager.client)
                yield made
        write_figures(
            "scheduling-crds",
            {round_: f"{len(pods)} pods, {pods.count('slipped')} admitted without the policy"
             for round_, pods in made.outcomes.items()},
            source="pytest tests/integration/webhook/test_scheduling_crds.py",
        )  # fmt: skip
        operator.close()
        client.close()


def _namespace(client: APIServerClient) -> str:
    name = f"crds-{uuid.uuid4().hex[:6]}"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def _pod(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "etcd"}},
            "spec": {"containers": [{"name": "etcd", "image": "registry.k8s.io/pause:3.10"}]}}  # fmt: skip


def _enforced_policy(cluster: Cluster, namespace: str) -> None:
    """Create it, and wait until the operator has read it and the lane has applied conditions made from it, as a
    caller that wrote a policy does (`rendered_record`): from then on no admission may miss it. Before, a pod
    races the policy's watch event, the lane's apply and the API server's view of it, CRDs or not (the lag the
    controller's docstring names).
    """
    client = cluster.client
    selector = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": [namespace]}]}
    policy = {"metadata": {"name": f"etcd-{namespace}", "annotations": {ENFORCE_ANNOTATION: "true"}},
              "spec": {"namespaceSelector": selector, "podSelector": {"matchLabels": {"app": "etcd"}},
                       "nodeSelector": POOL}}  # fmt: skip
    made = client.create(ClusterPodSchedulingPolicy.model_validate(policy))
    version = made.metadata.resource_version
    poll_until(
        lambda: any(p.metadata.resource_version == version for p in cluster.reader.list(ClusterPodSchedulingPolicy)),
        timeout=30,
        what="the operator to read the policy",
    )
    ref = f"{ClusterPodSchedulingPolicy.KIND}/{made.metadata.name}={version}"
    poll_until(lambda: ref in _configuration_annotation(cluster, schedulingpolicy.RENDERED_ANNOTATION).split(","),
               timeout=30, what=f"the lane to render from {ref}")  # fmt: skip
    # The API server reads webhook configurations through its own informer: a dry-run admission shows them in force.
    probe = _pod("probe", namespace)
    poll_until(lambda: client.create(probe, dry_run=True)["spec"].get("nodeSelector") == POOL, timeout=30,
               what="the API server to send the namespace's pods to the webhook")  # fmt: skip


def _delete_crds(env: Environment) -> None:
    for name in CRD_NAMES.values():
        env.rest.delete(f"{CRD_PATH}/{name}")
    for name in CRD_NAMES.values():

        def gone(name: str = name) -> bool:
            try:
                env.rest.get(f"{CRD_PATH}/{name}")
            except Exception:  # the envtest client's 404: gone
                return True
            return False

        poll_until(gone, timeout=60, what=f"CRD {name} to be gone")


def _create_pods(cluster: Cluster, round_: str) -> list[str]:
    """Right after the CRDs and an enforced policy came back: pods selected by it, each `applied` (carries the
    policy's nodeSelector), `refused` (the failurePolicy decided) or `slipped` (admitted without it)."""
    namespace = _namespace(cluster.client)
    _enforced_policy(cluster, namespace)
    outcomes = []
    for index in range(PODS_PER_ROUND):
        try:
            made = cluster.client.create(_pod(f"etcd-{index}", namespace))
        except APIStatusError:
            outcomes.append("refused")
            continue
        outcomes.append("applied" if made["spec"].get("nodeSelector") == POOL else "slipped")
    cluster.outcomes[round_] = outcomes
    return outcomes


def _configuration_annotation(cluster: Cluster, key: str) -> str:
    path = f"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/{configuration_name(NAME)}"
    annotations = cluster.env.rest.get(path)["metadata"].get("annotations") or {}
    return str(annotations.get(key, ""))


def _configuration_state(cluster: Cluster) -> str:
    return _configuration_annotation(cluster, schedulingpolicy.STATE_ANNOTATION)


def test_a_with_the_crds_missing_the_operator_starts_and_a_pod_elsewhere_is_admitted(cluster: Cluster) -> None:
    poll_until(lambda: all(cluster.availability.state(kind) == ABSENT for kind in CRD_NAMES), timeout=30,
               what="both kupid CRDs known to be missing")  # fmt: skip
    poll_until(lambda: _configuration_state(cluster) == "rendered", timeout=30,
               what="the lane to keep its conditions")  # fmt: skip
    namespace = _namespace(cluster.client)
    made = cluster.client.create(_pod("unrelated", namespace))  # failurePolicy Fail: refused if the webhook failed
    assert made["metadata"]["name"] == "unrelated"
    assert "nodeSelector" not in made["spec"]


def test_b_after_the_crds_and_an_enforced_policy_come_back_no_pod_slips_past_it(cluster: Cluster) -> None:
    cluster.env.install_crds(list[Path | dict[str, Any]](KUPID_CRDS))  # missing since the operator started
    _create_pods(cluster, "missing at start, installed")

    _delete_crds(cluster.env)  # reinstalled at once: within the grace period
    cluster.env.install_crds(list[Path | dict[str, Any]](KUPID_CRDS))
    _create_pods(cluster, "deleted, reinstalled within the grace")

    _delete_crds(cluster.env)  # reinstalled once the lane has rendered its conditions without the kinds
    poll_until(lambda: not any(cluster.availability.reinstalling(kind) for kind in CRD_NAMES), timeout=30,
               what="the reinstall grace to end")  # fmt: skip
    poll_until(lambda: _configuration_state(cluster) == "rendered", timeout=30,
               what="the lane to render its conditions without the kinds")  # fmt: skip
    cluster.env.install_crds(list[Path | dict[str, Any]](KUPID_CRDS))
    _create_pods(cluster, "deleted, reinstalled after the grace")

    slipped = {round_: pods for round_, pods in cluster.outcomes.items() if "slipped" in pods}
    assert slipped == {}
    assert all(pods == ["applied"] * PODS_PER_ROUND for pods in cluster.outcomes.values()), cluster.outcomes


def test_while_a_crd_is_away_no_policy_of_its_kind_is_read(cluster: Cluster) -> None:
    with contextlib.suppress(NotFoundError):
        _delete_crds(cluster.env)
    poll_until(lambda: all(cluster.availability.state(kind) == ABSENT for kind in CRD_NAMES), timeout=30,
               what="both kupid CRDs known to be missing")  # fmt: skip
    namespace = _namespace(cluster.client)
    made = cluster.client.create(_pod("without-crds", namespace))
    assert "nodeSelector" not in made["spec"]
