"""Counts near int32 on the real API server (docs/design.md, difference 59), without kube-controller-manager (a
Deployment scaled to 2,147,483,647 must not start pods): the Balancer of issue 30's example — `replicas: 0`,
targets `a` (`minReplicas: 2147483647`) and `b` (`minReplicas: 1`), priority `[a, b]` — stored before the CRD's
rule on the minimums' sum (the rule taken out of the CRD, the object created, the rule put back) is run: `a` is
set to 2,147,483,647 replicas with a `LargeReplicaCount` Warning event, `ReplicasMissing` says 2,147,483,648,
`Valid=False` with reason `StoredSpecInvalid` names the field, and every status write succeeds — also once a
late pod of `a` would give `b` 2,147,483,648 replicas, which is refused in `ApplyingBalancerPolicy`. A negative
proportion stored the same way is named by its wire path. The current CRD refuses both (their refusals are
tests/integration/api/test_balancer_validation.py's)."""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.api.scheme import add_to_scheme
from ballast.controllers.balancer import LARGE_REPLICA_COUNT, setup
from ballast.runtime import Manager, RESTConfig, Scheme
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.paths import CRD_DIR
from tests.unit.internal.runtime.support import running

JSON = dict[str, Any]
BALANCERS = "/apis/balancer.x-k8s.io/v1alpha1/namespaces/{ns}/balancers"
CRD_FILE = Path(CRD_DIR) / "balancer.x-k8s.io_balancers.yaml"
INT32_MAX = 2147483647
TIMEOUT = 60.0


def _crd(with_rules: bool) -> JSON:
    crd: JSON = yaml.safe_load(CRD_FILE.read_text())
    if not with_rules:  # the CRD as it was before the rules on the minimums' sum and on negative proportions
        [version] = crd["spec"]["versions"]
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        spec["x-kubernetes-validations"] = [
            rule for rule in spec["x-kubernetes-validations"] if "minReplicas" not in rule["rule"]
        ]
        proportions = spec["properties"]["policy"]["properties"]["proportions"]["properties"]["targetProportions"]
        del proportions["additionalProperties"]["minimum"]
    return crd


@pytest.fixture(scope="module")
def crds(envtest: Environment) -> Iterator[None]:
    envtest.install_crds([CRD_DIR])
    yield
    envtest.install_crds([_crd(with_rules=True)])


@pytest.fixture(scope="module")
def manager(envtest: Environment, crds: None) -> Iterator[Manager]:
    made = Manager(RESTConfig(envtest.client_configuration()), scheme=add_to_scheme(Scheme()),
                   field_owner="balancer-large-tests")  # fmt: skip
    setup(made, reprocess_period=1.0)
    with running(made):
        yield made


@pytest.fixture
def ns(envtest: Environment, manager: Manager) -> Iterator[str]:
    name = f"large-{uuid.uuid4().hex[:8]}"
    envtest.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        with contextlib.suppress(APIError):
            envtest.rest.delete(f"/api/v1/namespaces/{name}")


def _deployment(ns: str, name: str) -> JSON:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name, "srv": "large"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }  # fmt: skip


def _target(name: str, minimum: int) -> JSON:
    return {"name": name, "minReplicas": minimum,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}}  # fmt: skip


def _balancer(ns: str, policy: JSON, *targets: JSON) -> JSON:
    return {
        "apiVersion": "balancer.x-k8s.io/v1alpha1", "kind": "Balancer", "metadata": {"name": "big", "namespace": ns},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"srv": "large"}}, "targets": list(targets),
                 "policy": policy},
    }  # fmt: skip


def _accepted(envtest: Environment, body: JSON) -> bool:
    """Whether the API server would store `body` under another name now (a dry run)."""
    probe = copy.deepcopy(body)
    probe["metadata"]["name"] = f"probe-{uuid.uuid4().hex[:8]}"
    path = BALANCERS.format(ns=body["metadata"]["namespace"])
    try:
        envtest.rest.request("POST", path, probe, params={"dryRun": "All"})
    except APIError as refused:
        if refused.status != 422:
            raise
        return False
    return True


def _stored_before_the_rules(envtest: Environment, body: JSON) -> None:
    """Create `body` while the CRD lacks the rules it breaks, then put them back.

    An updated CRD is Established at once, but the API server serves its new schema a moment later, so each
    step waits until a dry run of `body` is answered as the step expects."""
    envtest.install_crds([_crd(with_rules=False)])
    try:
        _wait(lambda: _accepted(envtest, body), "the CRD without the rules to be served")
        envtest.rest.create(BALANCERS.format(ns=body["metadata"]["namespace"]), copy.deepcopy(body))
    finally:
        envtest.install_crds([_crd(with_rules=True)])
        _wait(lambda: not _accepted(envtest, body), "the CRD with the rules to be served again")


def _refused_now(envtest: Environment, body: JSON) -> str:
    again = copy.deepcopy(body)
    again["metadata"]["name"] = "again"
    with pytest.raises(APIError) as refused:
        envtest.rest.create(BALANCERS.format(ns=body["metadata"]["namespace"]), again)
    return str(refused.value)


def _wait(condition: Callable[[], object], what: str) -> Any:
    return poll_until(condition, timeout=TIMEOUT, what=what, interval=0.2)


def _status(envtest: Environment, ns: str) -> JSON:
    return envtest.rest.get(f"{BALANCERS.format(ns=ns)}/big").get("status") or {}


def _cond(envtest: Environment, ns: str, type_: str) -> JSON:
    return next((c for c in _status(envtest, ns).get("conditions") or () if c["type"] == type_), {})


def _replicas(envtest: Environment, ns: str, name: str) -> int:
    return int(envtest.rest.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{name}")["spec"]["replicas"])


def _events(envtest: Environment, ns: str, reason: str) -> list[JSON]:
    return [e for e in envtest.rest.get(f"/api/v1/namespaces/{ns}/events")["items"] if e.get("reason") == reason]


def test_the_issues_example_stored_before_the_rule_is_run_and_its_status_written(envtest: Environment, ns: str) -> None:
    for name in ("a", "b"):
        envtest.rest.create(f"/apis/apps/v1/namespaces/{ns}/deployments", _deployment(ns, name))
    priority = {"policyName": "priority", "priorities": {"targetOrder": ["a", "b"]},
                "fallback": {"startupTimeoutSeconds": 0}}  # fmt: skip
    body = _balancer(ns, priority, _target("a", INT32_MAX), _target("b", 1))
    _stored_before_the_rules(envtest, body)

    _wait(lambda: _replicas(envtest, ns, "a") == INT32_MAX, "a set to 2147483647 replicas")
    _wait(lambda: _cond(envtest, ns, "Valid").get("reason") == "StoredSpecInvalid", "Valid=False, StoredSpecInvalid")
    assert _replicas(envtest, ns, "b") == 1
    assert _cond(envtest, ns, "Valid")["status"] == "False"
    assert _cond(envtest, ns, "Valid")["message"].startswith(
        "spec.targets: the targets' minReplicas add up to 2147483648, more than 2147483647"
    )
    _wait(lambda: _cond(envtest, ns, "ReplicasMissing").get("status") == "True", "ReplicasMissing=True")
    assert _cond(envtest, ns, "ReplicasMissing")["message"].startswith("2147483648 replicas added")
    assert _cond(envtest, ns, "Balancing")["status"] == "True"
    assert {t["name"]: t["desired"] for t in _status(envtest, ns)["targets"]} == {"a": INT32_MAX, "b": 1}
    (event,) = _wait(lambda: _events(envtest, ns, LARGE_REPLICA_COUNT), "a LargeReplicaCount event")
    assert event["type"] == "Warning"
    assert event["message"].startswith(f"set Deployment/{ns}/a to 2147483647 replicas")
    assert "must not add up to more than 2147483647" in _refused_now(envtest, body)

    # A late pod of `a` (fallback after 0 s) would pass its 2147483647 replicas on to `b` on top of b's 1.
    envtest.rest.create(f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a-late", "labels": {"app": "a", "srv": "large"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    })  # fmt: skip
    _wait(lambda: _cond(envtest, ns, "Balancing").get("status") == "False", "Balancing=False")
    assert _cond(envtest, ns, "Balancing")["message"] == (
        "ApplyingBalancerPolicy: placement for b is 2147483648, more than 2147483647"
    )
    assert _replicas(envtest, ns, "b") == 1
    assert _status(envtest, ns)["replicas"] == 1


def test_a_negative_proportion_stored_before_the_rule_is_named_by_its_wire_path(envtest: Environment, ns: str) -> None:
    for name in ("a", "b"):
        envtest.rest.create(f"/apis/apps/v1/namespaces/{ns}/deployments", _deployment(ns, name))
    proportional = {"policyName": "proportional", "proportions": {"targetProportions": {"a": 1, "b": -1}}}
    body = _balancer(ns, proportional, _target("a", 0), _target("b", 0))
    body["spec"]["replicas"] = 3
    _stored_before_the_rules(envtest, body)

    _wait(lambda: _cond(envtest, ns, "Balancing").get("status") == "False", "Balancing=False")
    assert _cond(envtest, ns, "Balancing")["message"] == (
        "ApplyingBalancerPolicy: spec.policy.proportions.targetProportions[b]: must not be negative, is -1"
    )
    assert _cond(envtest, ns, "Valid")["reason"] == "StoredSpecInvalid"
    assert _cond(envtest, ns, "Valid")["message"].startswith(
        "spec.policy.proportions.targetProportions[b]: -1 is negative"
    )
    assert "should be greater than or equal to 0" in _refused_now(envtest, body)
