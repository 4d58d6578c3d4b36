"""`ballast balancer status`: its flags, what it reads on the fake API server (the Balancer, each target's scale
and the pods of its scale selector), the placement with its reasons in text and JSON, the conditions, and the
errors — a missing Balancer, a target whose scale or pods cannot be read — as exit 1 naming what is wrong."""

from __future__ import annotations

import copy
import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.internal.cmd import balancer as status_cmd
from ballast.internal.cmd import ballast as cli
from ballast.internal.cmd.ballast import ConnectError
from ballast.runtime import FakeAPI, FakeClock
from ballast.runtime.apierrors import ForbiddenError
from tests.unit.api.balancer_samples import balancer, documents
from tests.unit.support import register_our_kinds

JSON = dict[str, Any]
NS = "shop"
BALANCER_REF = {
    "apiVersion": "balancer.x-k8s.io/v1alpha1",
    "kind": "Balancer",
    "metadata": {"name": "nginx", "namespace": NS},
}
HOUR_AGO = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    """The fake API server as the CLI's cluster. Objects created here are an hour old, so a Pending pod is late
    for the examples' startupTimeoutSeconds (180)."""
    fake = register_our_kinds(FakeAPI(clock=FakeClock(HOUR_AGO)))
    monkeypatch.setattr(status_cmd, "connect", lambda *_, **__: fake.client())
    yield fake
    fake.close()


def example(api: FakeAPI, name: str = "nginx-priority", **spec: Any) -> None:
    """The upstream example's Deployments (3 replicas each) and its Balancer `nginx`, `spec` merged in."""
    for document in documents(name):
        if document["kind"] == "Deployment":
            api.client().create({**copy.deepcopy(document), "metadata": {**document["metadata"], "namespace": NS}})
    body = copy.deepcopy(balancer(name))
    body["metadata"] = {"name": "nginx", "namespace": NS}
    body["spec"].update(spec)
    api.client().create(body)


def patch_spec(api: FakeAPI, **spec: Any) -> None:
    api.client().patch(BALANCER_REF, {"spec": spec})


def pod(api: FakeAPI, name: str, target: str, phase: str, **labels: str) -> None:
    created: JSON = api.client().create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": target, "srv": "nginx", **labels}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
    })  # fmt: skip
    api.client().status().patch(created, {"status": {"phase": phase}})


def conditions(api: FakeAPI, *items: tuple[str, str, str, str]) -> None:
    written = [{"type": t, "status": s, "reason": r, "message": m, "lastTransitionTime": "2026-12-01T00:00:00Z"}
               for t, s, r, m in items]  # fmt: skip
    api.client().status().patch(BALANCER_REF, {"status": {"conditions": written}})


def status(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["balancer", "status", "nginx", "-n", NS, *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ------------------------------------------------------------------------------------------------- flags


def test_flags_and_global_flags_on_either_side() -> None:
    args = cli.parser().parse_args(["--context", "c", "balancer", "status", "nginx", "-n", "shop", "-o", "json"])
    assert (args.command, args.action, args.name, args.namespace, args.output, args.context) == (
        "balancer", "status", "nginx", "shop", "json", "c",
    )  # fmt: skip
    args = cli.parser().parse_args(["balancer", "status", "nginx", "--kubeconfig", "/k"])
    assert (args.namespace, args.output, args.kubeconfig) == (None, "text", "/k")


@pytest.mark.parametrize(
    "argv", [["balancer"], ["balancer", "status"], ["balancer", "status", "nginx", "-o", "yaml"], ["balancer", "get"]]
)
def test_usage_errors_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 1
    assert "error:" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------ output


def test_the_priority_example_as_placed_with_late_pods_falling_back(
    api: FakeAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    example(api)
    pod(api, "a", "nginx-1", "Running")
    pod(api, "b", "nginx-1", "Pending")  # an hour old: late
    pod(api, "c", "nginx-1", "Pending")
    pod(api, "d", "nginx-2", "Running")
    pod(api, "e", "nginx-2", "Succeeded")  # not counted
    pod(api, "f", "other", "Running")  # selected by no target
    conditions(api, ("Balancing", "True", "Completed", "Balancer running OK"))
    before = api.resource_version

    code, out, err = status(capsys)

    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Balancer shop/nginx: spec.replicas 5, placement total 8; policy priority (targetOrder nginx-1, nginx-2), "
        "fallback after 180s Pending",
        "",
        "TARGET    SCALES               MIN   MAX   REPLICAS   PLACEMENT   RUNNING   PENDING   LATE",
        "nginx-1   Deployment/nginx-1   1     7     3          4           1         2         2",
        "nginx-2   Deployment/nginx-2   1     -     3          4           1         0         0",
        "",
        "Why:",
        "  nginx-1: 2 pods Pending past the startup timeout: 3 replicas placed on other targets as well",
        "  nginx-1: has 3 now: the controller sets 4 at its next run",
        "  nginx-2: 3 replicas on behalf of targets with late pods",
        "  nginx-2: has 3 now: the controller sets 4 at its next run",
        "",
        "Problems:",
        "  none",
        "",
        "Conditions:",
        "  TYPE        STATUS   REASON      MESSAGE",
        "  Balancing   True     Completed   Balancer running OK",
    ]
    assert api.resource_version == before  # read only


def test_json_has_the_same_facts_in_the_specs_field_names(api: FakeAPI, capsys: pytest.CaptureFixture[str]) -> None:
    example(api, "nginx-proportional")
    pod(api, "a", "nginx-2", "Pending")
    code, out, _ = status(capsys, "-o", "json")
    assert code == 0
    document = json.loads(out)
    assert document["policy"] == {"policyName": "proportional", "targetProportions": {"nginx-1": 50, "nginx-2": 50}}
    assert (document["replicas"], document["placed"], document["missing"], document["overflow"]) == (10, 12, 0, 3)
    assert document["startupTimeoutSeconds"] == 180
    assert document["conditions"] == []
    first, second = document["targets"]
    assert {k: first[k] for k in ("name", "minReplicas", "maxReplicas", "replicas", "placement", "fallback")} == {
        "name": "nginx-1", "minReplicas": 1, "maxReplicas": 7, "replicas": 3, "placement": 7, "fallback": 0,
    }  # fmt: skip
    assert first["selector"] == "app=nginx-1,srv=nginx"
    assert first["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "nginx-1"}
    assert [r["code"] for r in first["reasons"]] == ["fallback", "full", "scaled"]
    assert second["pods"] == {"total": 1, "running": 0, "pending": 1, "late": 1}
    assert (second["placement"], second["fallback"]) == (5, 5)  # nginx-1 took 2 of the 5 before it was full
    assert [r["code"] for r in second["reasons"]] == ["late", "blocked", "scaled"]
    assert [p["code"] for p in document["problems"]] == ["overflow"]


def test_missing_and_overflow_are_the_problems(api: FakeAPI, capsys: pytest.CaptureFixture[str]) -> None:
    example(api, replicas=1)
    _, out, _ = status(capsys)
    assert "  missing 1: the minimums add up to 2, more than the 1 replicas asked for" in out.splitlines()

    bounded = [{**target, "maxReplicas": 7} for target in balancer("nginx-priority")["spec"]["targets"]]
    patch_spec(api, replicas=20, targets=bounded)
    code, out, _ = status(capsys, "-o", "json")
    document = json.loads(out)
    assert (code, document["placed"], document["overflow"]) == (0, 14, 6)
    assert [p["code"] for p in document["problems"]] == ["overflow"]
    assert [t["placement"] for t in document["targets"]] == [7, 7]


def test_mislabeled_pods_and_a_conflict_are_noted(api: FakeAPI, capsys: pytest.CaptureFixture[str]) -> None:
    example(api)
    patch_spec(api, selector={"matchLabels": {"srv": "nginx", "tier": "web"}})
    pod(api, "a", "nginx-1", "Running")
    conditions(api, ("TargetConflict", "True", "Conflict", "target nginx-1 is not scaled, also scaled by X"))
    _, out, _ = status(capsys)
    assert "  nginx-1: has 3 now: the controller sets 4 at its next run (unless TargetConflict names it)" in out
    assert ("  nginx-1: 1 of its pods do not match spec.selector: the controller stops at PodLabelsChecking and "
            "scales nothing") in out  # fmt: skip
    assert "  TargetConflict   True     Conflict   target nginx-1 is not scaled, also scaled by X" in out


# ------------------------------------------------------------------------------------------------ errors


def test_a_missing_balancer_exits_1_naming_it(api: FakeAPI, capsys: pytest.CaptureFixture[str]) -> None:
    assert status(capsys) == (1, "", 'ballast: balancer "nginx" not found in namespace "shop"\n')


def test_a_target_whose_object_is_missing_exits_1_naming_the_target(
    api: FakeAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    example(api)
    api.client().delete(
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nginx-2", "namespace": NS}}
    )
    code, out, err = status(capsys)
    assert (code, out) == (1, "")
    assert err.startswith("ballast: target nginx-2 (Deployment/nginx-2 in namespace shop): scale subresource not "
                          "readable: NotFound: ")  # fmt: skip


def test_a_target_of_a_kind_not_served_exits_1_naming_the_target(
    api: FakeAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    targets = balancer("nginx-priority")["spec"]["targets"]
    targets[1]["scaleTargetRef"] = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w"}
    example(api, targets=targets)
    code, out, err = status(capsys)
    assert (code, out) == (1, "")
    assert err.startswith("ballast: target nginx-2 (Widget/w in namespace shop): ")
    assert "Widget" in err.split(": ", 2)[2]


def test_pods_that_cannot_be_listed_exit_1_naming_the_target(
    api: FakeAPI, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    example(api)
    client = api.client()
    real = client.list_all

    def refuse_pods(kind: Any, *args: Any, **kwargs: Any) -> Any:
        if kind == "v1/Pod":
            raise ForbiddenError(403, "Forbidden", 'pods is forbidden: User "dev" cannot list resource "pods"')
        return real(kind, *args, **kwargs)

    monkeypatch.setattr(client, "list_all", refuse_pods)
    monkeypatch.setattr(status_cmd, "connect", lambda *_, **__: client)
    assert status(capsys) == (
        1, "", 'ballast: target nginx-1: pods not readable: Forbidden: pods is forbidden: User "dev" cannot list '
               'resource "pods"\n',
    )  # fmt: skip


def test_an_unreachable_cluster_exits_1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def unreachable(*_: Any, **__: Any) -> Any:
        raise ConnectError("connection refused")  # what `connect` raises for whatever the loader raised

    monkeypatch.setattr(status_cmd, "connect", unreachable)
    assert status(capsys) == (1, "", "ballast: connection refused\n")


def test_a_negative_proportion_exits_1_naming_the_wire_field(api: FakeAPI, capsys: pytest.CaptureFixture[str]) -> None:
    # Stored before the CRD refused it (the fake has no CEL): named as written (docs/design.md, difference 59).
    example(api, "nginx-proportional")
    patch_spec(api, policy={"policyName": "proportional", "proportions": {
        "targetProportions": {"nginx-1": 1, "nginx-2": -1}}})  # fmt: skip
    code, out, err = status(capsys)
    assert (code, out) == (1, "")
    assert err == (
        "ballast: balancer shop/nginx: spec.policy.proportions.targetProportions[nginx-2]: must not be negative, "
        "is -1\n"
    )
