"""`ballast balancer status` on a real API server with kube-controller-manager and the Balancer controller running:
upstream's `nginx-priority` example applied unchanged with kubectl, its pods made Running by the stand-in kubelet.
The table shows what the controller did (nginx-1 = 4, nginx-2 = 1 both as replicas and as placement, the pods
Running) and its Balancing condition; a missing Balancer and a target whose Deployment is gone exit 1 naming it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.controllers.balancer import setup
from ballast.internal.cmd import ballast as cli
from ballast.runtime import Client, Manager, RESTConfig, Scheme
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from tests.unit.api.balancer_samples import EXAMPLES
from tests.unit.internal.runtime.support import running

BALANCERS = "/apis/balancer.x-k8s.io/v1alpha1/namespaces/{ns}/balancers"


@pytest.fixture(scope="module")
def controller(cluster: Environment) -> Iterator[Manager]:
    """The Balancer controller, as ballastd runs it (re-run every second here)."""
    made = Manager(RESTConfig(cluster.client_configuration()), scheme=add_to_scheme(Scheme()), field_owner="tests")
    setup(made, reprocess_period=1.0)
    with running(made):
        yield made


def status(capsys: pytest.CaptureFixture[str], env: Environment, namespace: str, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["balancer", "status", "--kubeconfig", str(env.kubeconfig_path), "-n", namespace, *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def running_pods(client: Client, namespace: str, app: str) -> int:
    pods = client.list("v1/Pod", namespace, label_selector=f"app={app}").items
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")


def test_the_status_shows_the_controllers_placement_pods_and_conditions(
    cluster: Environment, client: Client, namespace: str, controller: Manager, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster.kubectl("apply", "-n", namespace, "-f", "-", input_text=EXAMPLES["nginx-priority"])

    def settled() -> bool:
        balancer = cluster.rest.get(f"{BALANCERS.format(ns=namespace)}/nginx")
        balancing = [c for c in (balancer.get("status") or {}).get("conditions") or () if c["type"] == "Balancing"]
        counts = (running_pods(client, namespace, "nginx-1"), running_pods(client, namespace, "nginx-2"))
        return counts == (4, 1) and bool(balancing) and balancing[0]["status"] == "True"

    poll_until(settled, timeout=90, what="4/1 pods Running and Balancing=True", interval=0.5)

    code, out, err = status(capsys, cluster, namespace, "nginx")
    assert (code, err) == (0, ""), out
    lines = out.splitlines()
    assert lines[0] == (
        f"Balancer {namespace}/nginx: spec.replicas 5, placement total 5; policy priority (targetOrder nginx-1, "
        "nginx-2), fallback after 180s Pending"
    )
    assert lines[2:5] == [
        "TARGET    SCALES               MIN   MAX   REPLICAS   PLACEMENT   RUNNING   PENDING   LATE",
        "nginx-1   Deployment/nginx-1   1     7     4          4           4         0         0",
        "nginx-2   Deployment/nginx-2   1     -     1          1           1         0         0",
    ]
    assert lines[5:] == [
        "",
        "Why:",
        "  nginx-2: at its minimum (1)",
        "",
        "Problems:",
        "  none",
        "",
        "Conditions:",
        "  TYPE               STATUS   REASON       MESSAGE",
        "  Balancing          True     Completed    Balancer running OK",
        "  ReplicasMissing    False    NoProblem    no replicas added on top of spec.replicas to satisfy the targets' "
        "minReplicas",
        "  ReplicasOverflow   False    NoProblem    no replicas that fit in no target (every target that may take them "
        "is at maxReplicas)",
        "  TargetConflict     False    NoConflict   every target is scaled by this Balancer only",
        "  Valid              True     Valid        the spec is valid",
    ]


def test_a_missing_balancer_or_target_exits_1_naming_it(
    cluster: Environment, namespace: str, controller: Manager, capsys: pytest.CaptureFixture[str]
) -> None:
    assert status(capsys, cluster, namespace, "nginx") == (
        1, "", f'ballast: balancer "nginx" not found in namespace "{namespace}"\n',
    )  # fmt: skip
    missing = f"absent-{uuid.uuid4().hex[:6]}"
    assert status(capsys, cluster, missing, "nginx")[0] == 1

    cluster.kubectl("apply", "-n", namespace, "-f", "-", input_text=EXAMPLES["nginx-priority"])
    cluster.rest.delete(f"/apis/apps/v1/namespaces/{namespace}/deployments/nginx-2")
    code, out, err = status(capsys, cluster, namespace, "nginx")
    assert (code, out) == (1, "")
    assert err == (
        f"ballast: target nginx-2 (Deployment/nginx-2 in namespace {namespace}): scale subresource not readable: "
        'NotFound: deployments.apps "nginx-2" not found\n'
    )
