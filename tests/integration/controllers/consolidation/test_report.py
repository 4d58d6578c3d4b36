"""The consolidation advisor on the real API server: Nodes (labels, allocatable, taints) with pods bound to them, a
catalogue ConfigMap with one malformed entry, and a WorkloadProfile with recommendations → the ConsolidationReport
`cluster` (created by the controller) shows the nodes the recommended requests free and rejects the marginal move
that WhenEmptyOrUnderutilized would take; the refresh annotation recomputes it (and nothing else does within the
interval); `ConsolidationAdvised` is an event on the report, and nothing is an event on the nodes; the malformed
entry is named in `CatalogueValid`; a Karpenter NodePool that does not parse is named in `InputsValid`, its pool
advised as `consolidateAfter: Never`, and the refresh still succeeds.

The scenario is `tests/unit/controllers/consolidation/scenario.py`, its nodes renamed `<name>-<suffix>` and its
pool `general-<suffix>`, so nodes other tests of the session leave behind change nothing asserted here.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from ballast.api.scheme import add_to_scheme
from ballast.controllers.consolidation import AdvisorSettings, setup
from ballast.internal.consolidation import WHEN_EMPTY_OR_UNDERUTILIZED
from ballast.internal.consolidation.inputs import ReadSettings, advise, read_inputs
from ballast.runtime import Manager, RESTConfig, Scheme
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rest import Transport
from tests.unit.controllers.consolidation import scenario
from tests.unit.internal.runtime.support import running

JSON = dict[str, Any]
REPORT = "/apis/ballast.tightlinesoftware.com/v1/consolidationreports/cluster"
PROFILES = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"
NODEPOOL_CRD = "nodepools.karpenter.sh"
TIMEOUT = 60.0
SUFFIX = uuid.uuid4().hex[:6]
POOL = f"general-{SUFFIX}"
PROFILE = f"web-{SUFFIX}"


def _name(node: str) -> str:
    return f"{node}-{SUFFIX}"


def wait(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> Any:
    return poll_until(condition, timeout=timeout, what=what, interval=0.2)


def report(env: Environment) -> JSON:
    try:
        return env.rest.get(REPORT)
    except APIError:
        return {}


def by_type(found: JSON) -> dict[str, JSON]:
    return {c["type"]: c for c in (found.get("status") or {}).get("conditions") or ()}


def ours(requests: JSON) -> JSON:
    """The scenario's pool in one RequestsReport, with its freed nodes and moves."""
    names = {_name(n) for n in scenario.NODES}
    pool = next(p for p in requests["pools"] if p["name"] == POOL)
    return {
        "pool": pool,
        "freed": sorted(n for n in requests["freed"]["nodes"] or () if n in names),
        "moves": {tuple(m["nodes"]): m for m in requests["moves"] if set(m["nodes"]) <= names},
    }


@pytest.fixture(scope="module")
def namespace(envtest: Environment) -> Iterator[str]:
    """The scenario on the API server: the catalogue ConfigMap, the nodes, the profile and the pods."""
    name = f"consolidation-{SUFFIX}"
    rest = envtest.rest
    rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    rest.create(f"/api/v1/namespaces/{name}/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "catalogue"},
        "data": {"catalogue.yaml": yaml.safe_dump(scenario.CATALOGUE)},
    })  # fmt: skip
    for node in scenario.nodes():
        body = copy.deepcopy(node)
        body["metadata"]["name"] = _name(node["metadata"]["name"])
        body["metadata"]["labels"].update({"kubernetes.io/hostname": body["metadata"]["name"],
                                           "karpenter.sh/nodepool": POOL})  # fmt: skip
        status = body.pop("status")
        path = f"/api/v1/nodes/{body['metadata']['name']}"
        rest.create("/api/v1/nodes", body)
        # The API server taints a new node not-ready (TaintNodesByCondition); no node controller lifts it here.
        rest.request("PATCH", path, {"spec": {"taints": body["spec"]["taints"]}},
                     content_type="application/merge-patch+json")  # fmt: skip
        rest.patch_status(path, {"status": status})
    rest.create(PROFILES, {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile",
                           "metadata": {"name": PROFILE}})  # fmt: skip
    rest.patch_status(f"{PROFILES}/{PROFILE}", {"status": scenario.PROFILE_STATUS})
    for pod in scenario.pods(name):
        pod["spec"]["nodeName"] = _name(pod["spec"]["nodeName"])
        annotations = pod["metadata"]["annotations"]
        if annotations:
            annotations["ballast.tightlinesoftware.com/profile-ref"] = PROFILE
        rest.create(f"/api/v1/namespaces/{name}/pods", pod)
    try:
        yield name
    finally:
        with contextlib.suppress(APIError):
            rest.delete(f"/api/v1/namespaces/{name}")
        for short in scenario.NODES:
            with contextlib.suppress(APIError):
                rest.delete(f"/api/v1/nodes/{_name(short)}")
        with contextlib.suppress(APIError):
            rest.delete(f"{PROFILES}/{PROFILE}")


@pytest.fixture(scope="module")
def settings(namespace: str) -> AdvisorSettings:
    # A long interval: within a test, only the refresh annotation may recompute the report.
    return AdvisorSettings(read=ReadSettings(catalogue=(namespace, "catalogue"), page_size=5), interval=3600.0)


@pytest.fixture(scope="module")
def manager(envtest: Environment, settings: AdvisorSettings) -> Iterator[Manager]:
    with contextlib.suppress(APIError):
        envtest.rest.delete(REPORT)  # another module's report: this one must be created by the controller
    made = Manager(RESTConfig(envtest.client_configuration()), scheme=add_to_scheme(Scheme()),
                   field_owner="consolidation-tests")  # fmt: skip
    setup(made, settings=settings)
    with running(made):
        yield made
    with contextlib.suppress(APIError):
        envtest.rest.delete(REPORT)


def refreshed(env: Environment, after: str | None = None) -> JSON:
    """The report once Ready and refreshed (after `after`, a lastRefreshTime, when given) with the scenario's pool."""

    def ready() -> JSON | None:
        found = report(env)
        status = found.get("status") or {}
        if by_type(found).get("Ready", {}).get("status") != "True" or status.get("lastRefreshTime") == after:
            return None
        pools = {p["name"] for p in (status.get("current") or {}).get("pools") or ()}
        return found if POOL in pools else None

    found: JSON = wait(ready, "a refreshed report with the scenario's pool")
    return found


def refresh(env: Environment, value: str) -> None:
    env.rest.request("PATCH", REPORT, {"metadata": {"annotations": {"ballast.tightlinesoftware.com/refresh": value}}},
                     content_type="application/merge-patch+json")  # fmt: skip


def test_the_report_shows_the_nodes_the_recommended_requests_free(envtest: Environment, manager: Manager) -> None:
    found = refreshed(envtest)
    status = found["status"]
    current, recommended = ours(status["current"]), ours(status["recommended"])

    assert current["pool"]["nodes"] == 4
    assert current["pool"]["costPerMonth"] == "511.00"  # (3 × 0.20 + 0.10) × 730
    assert current["freed"] == []
    assert len(recommended["freed"]) >= 2
    assert set(recommended["freed"]) <= {_name(n) for n in ("a", "b", "c")}  # d's pods have no recommendation
    assert status["observed"]["podsWithRecommendations"] >= 6
    assert status["observed"]["karpenter"] is False
    # With today's requests, moving d's pods saves 14 % of the pool for about half its disruption: refused.
    marginal = current["moves"][(_name("d"),)]
    assert (marginal["approved"], marginal["decision"]) == (False, "no-op")
    assert float(marginal["score"]) < 0.5
    assert marginal["reason"].endswith("< threshold 0.50 (k: 2), even as a delete")


def test_when_empty_or_underutilized_would_take_the_marginal_move(
    envtest: Environment, manager: Manager, settings: AdvisorSettings
) -> None:
    """The same inputs, read as the controller reads them (paged), planned with the policy that has no score."""
    client = APIServerClient(Transport(RESTConfig(envtest.client_configuration())))
    inputs = read_inputs(client, settings.read)
    plain = advise(inputs, default_policy=WHEN_EMPTY_OR_UNDERUTILIZED)
    taken = {m.nodes: m for m in plain.current.moves}[(_name("d"),)]
    assert (taken.decision, taken.approved) == ("delete", True)
    assert _name("d") in plain.current.freed.nodes


def test_the_refresh_annotation_recomputes_and_nothing_else_does(envtest: Environment, manager: Manager) -> None:
    before = refreshed(envtest)["status"]["lastRefreshTime"]
    time.sleep(2.0)  # the controller's own status write must not start another refresh
    assert report(envtest)["status"]["lastRefreshTime"] == before

    time.sleep(1.0)  # lastRefreshTime has a resolution of one second
    value = uuid.uuid4().hex
    refresh(envtest, value)
    after = refreshed(envtest, after=before)
    assert after["status"]["observedRefresh"] == value
    assert after["status"]["lastRefreshTime"] > before


def test_consolidation_advised_is_an_event_on_the_report_only(envtest: Environment, manager: Manager) -> None:
    found = refreshed(envtest)

    def advised() -> list[JSON]:
        events = envtest.rest.get("/api/v1/namespaces/default/events")["items"]
        return [e for e in events if e.get("reason") == "ConsolidationAdvised"]

    events = wait(advised, "a ConsolidationAdvised event")
    involved = events[0]["involvedObject"]
    assert (involved["kind"], involved["name"], involved["uid"]) == ("ConsolidationReport", "cluster",
                                                                    found["metadata"]["uid"])  # fmt: skip
    assert events[0]["type"] == "Normal"
    assert events[0]["message"].startswith("recommended requests free ")
    everywhere = envtest.rest.get("/api/v1/events")["items"]
    assert not [e for e in everywhere if e.get("reason") == "ConsolidationApproved"]
    assert not [e for e in everywhere if e["involvedObject"].get("kind") == "Node"
                and e["involvedObject"].get("name", "").endswith(SUFFIX)]  # fmt: skip


def test_a_malformed_catalogue_entry_is_named_and_skipped(envtest: Environment, manager: Manager) -> None:
    conditions = by_type(refreshed(envtest))
    catalogue = conditions["CatalogueValid"]
    assert (catalogue["status"], catalogue["reason"]) == ("False", "EntriesSkipped")
    assert catalogue["message"].startswith(f"{scenario.BROKEN_ENTRY}: ")
    assert catalogue["message"].endswith("; skipped")
    assert conditions["Ready"]["status"] == "True"


NODEPOOL_CRD_BODY: JSON = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": NODEPOOL_CRD},
    "spec": {"group": "karpenter.sh", "scope": "Cluster",
             "names": {"plural": "nodepools", "singular": "nodepool", "kind": "NodePool", "listKind": "NodePoolList"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]},
}  # fmt: skip
"""A stand-in for Karpenter's NodePool CRD: the same group, version and names, any content (so a NodePool the real
CRD would refuse can be stored, as one written before a schema change could be)."""


@pytest.fixture
def nodepool_crd(envtest: Environment) -> Iterator[None]:
    envtest.rest.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", NODEPOOL_CRD_BODY)
    path = "/apis/karpenter.sh/v1/nodepools"
    wait(lambda: _served(envtest, path), "NodePools served")
    try:
        yield
    finally:
        with contextlib.suppress(APIError):
            envtest.rest.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{NODEPOOL_CRD}")
        wait(lambda: not _served(envtest, path), "NodePools no longer served")


def _served(env: Environment, path: str) -> bool:
    try:
        env.rest.get(path)
    except APIError:
        return False
    return True


def test_a_nodepool_that_does_not_parse_is_named_and_its_pool_left_alone(
    envtest: Environment, manager: Manager, nodepool_crd: None
) -> None:
    envtest.rest.create("/apis/karpenter.sh/v1/nodepools", {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": POOL},
        "spec": {"disruption": {"consolidationPolicy": "Sometimes"}, "template": {"spec": {"requirements": []}}},
    })  # fmt: skip
    before = refreshed(envtest)["status"]["lastRefreshTime"]
    time.sleep(1.0)
    refresh(envtest, uuid.uuid4().hex)
    found = refreshed(envtest, after=before)
    status = found["status"]

    inputs_valid = by_type(found)["InputsValid"]
    assert (inputs_valid["status"], inputs_valid["reason"]) == ("False", "ObjectsSkipped")
    assert f"NodePool {POOL}: nodepools['{POOL}'].consolidationPolicy: 'Sometimes'" in inputs_valid["message"]
    assert "planned as consolidateAfter: Never" in inputs_valid["message"]
    assert status["observed"]["karpenter"] is True
    recommended = ours(status["recommended"])
    assert recommended["freed"] == []  # its pool is advised as consolidateAfter: Never
    assert all(not m["approved"] for m in recommended["moves"].values())


def _refresh_now(env: Environment) -> JSON:
    before = refreshed(env)["status"]["lastRefreshTime"]
    time.sleep(1.0)  # lastRefreshTime has a resolution of one second
    refresh(env, uuid.uuid4().hex)
    return refreshed(env, after=before)


def test_a_nodepool_freeze_window_blocks_consolidation_only_while_open(
    envtest: Environment, manager: Manager, nodepool_crd: None
) -> None:
    """A budget of 0 nodes on a cron window: while the window covers the controller's clock, every move is held
    with Karpenter's blocking-budget reason; a window that closed hours ago holds nothing."""
    path = "/apis/karpenter.sh/v1/nodepools"
    freeze = {"nodes": "0", "schedule": "* * * * *", "duration": "1h"}  # opened this minute: open now
    envtest.rest.create(path, {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": POOL},
        "spec": {"disruption": {"consolidationPolicy": "Balanced", "budgets": [{"nodes": "100%"}, freeze]},
                 "template": {"spec": {"requirements": []}}},
    })  # fmt: skip
    try:
        frozen = ours(_refresh_now(envtest)["status"]["recommended"])
        assert frozen["freed"] == []
        assert {m["reason"] for m in frozen["moves"].values()} == {
            "No allowed disruptions for disruption reason Underutilized due to blocking budget"
        }
        # The window opens daily two hours from now, for an hour: it closed 21 hours ago.
        later = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=2)).hour
        closed = {**freeze, "schedule": f"0 {later} * * *"}
        budgets = {"spec": {"disruption": {"budgets": [{"nodes": "100%"}, closed]}}}
        envtest.rest.request("PATCH", f"{path}/{POOL}", budgets, content_type="application/merge-patch+json")
        thawed = ours(_refresh_now(envtest)["status"]["recommended"])
        assert len(thawed["freed"]) >= 2
    finally:
        with contextlib.suppress(APIError):
            envtest.rest.delete(f"{path}/{POOL}")
