"""The `schedulingpolicy` controller on the in-memory API server: conditions and the record written on policy
changes, off for an enforced policy, nothing written while current, a missing configuration waited for, an
expression the server refuses replaced by none. The fake models server-side apply as a merge, so what apply
keeps of other managers' fields (the CA bundle, others' conditions) is shown on the real API server
(tests/integration/controllers/test_schedulingpolicy.py)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.controllers.schedulingpolicy import (
    CONFIGURATION_KIND,
    MISSING_REQUEUE,
    NAME,
    RENDERED_ANNOTATION,
    STATE_ANNOTATION,
    apply_configuration,
    setup,
)
from ballast.internal.scheduling import ENFORCE_ANNOTATION
from ballast.internal.scheduling.match_conditions import CONDITION_NAME
from ballast.runtime import (
    Context,
    FakeAPI,
    GroupVersionKind,
    Manager,
    RealClock,
    Request,
    Result,
    Scheme,
)
from ballast.runtime.apierrors import UnprocessableEntityError
from ballast.runtime.log import get_logger
from tests.unit.internal.runtime.support import eventually, running, sample
from tests.unit.internal.scheduling.builders import namespaced

CONFIGURATION = "ballast-scheduling"
WEBHOOK = "mscheduling.ballast.tightlinesoftware.com"
KUPID = "kupid.gardener.cloud/v1alpha1/PodSchedulingPolicy"
MWC = GroupVersionKind("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration")


def configuration() -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": CONFIGURATION},
        "webhooks": [{"name": WEBHOOK, "clientConfig": {"caBundle": "Q0E="}, "sideEffects": "None"}],
    }  # fmt: skip


@pytest.fixture
def served(api: FakeAPI) -> FakeAPI:
    api.register(MWC, "mutatingwebhookconfigurations", namespaced=False, status=False)
    return api


@pytest.fixture
def manager(served: FakeAPI) -> Iterator[Manager]:
    made = Manager(client=served.client(scheme=add_to_scheme(Scheme())))
    controller = setup(made, configuration=CONFIGURATION, webhook=WEBHOOK)
    assert controller.name == NAME
    assert controller.need_leader_election()
    with running(made):
        yield made


def stored(api: FakeAPI) -> dict[str, Any]:
    (config,) = api.objects(CONFIGURATION_KIND)
    return config


def ours(api: FakeAPI) -> list[dict[str, str]]:
    webhook = next(w for w in stored(api)["webhooks"] if w["name"] == WEBHOOK)
    return [c for c in webhook.get("matchConditions") or () if c["name"] == CONDITION_NAME]


def policy(api: FakeAPI, name: str, selector: dict[str, Any], **annotations: str) -> str:
    """Create or update a policy in `team-a`; returns the `ref=resourceVersion` the record will name."""
    body = namespaced("team-a", name, podSelector=selector)
    if annotations:
        body["metadata"]["annotations"] = annotations
    written = api.client().patch(body, body, patch_type="apply", field_manager="tests")
    return f"PodSchedulingPolicy/team-a/{name}={written['metadata']['resourceVersion']}"


def recorded(api: FakeAPI, entry: str) -> dict[str, str]:
    def annotations() -> dict[str, str] | None:
        found = dict(stored(api)["metadata"].get("annotations") or {})
        return found if entry in found.get(RENDERED_ANNOTATION, "").split(",") else None

    return eventually(annotations, f"the record of {entry}")


def gauge_settles(name: str, value: float, **labels: str) -> None:
    """The lane sets its gauges (and logs) just after its apply, which `recorded` waits for: wait for them too."""
    eventually(lambda: sample(name, **labels) == value, f"{name}{labels} == {value}")


def test_the_apply_configuration_names_only_the_webhooks_conditions_and_the_annotations() -> None:
    condition = {"name": CONDITION_NAME, "expression": "false"}
    assert apply_configuration(CONFIGURATION, WEBHOOK, [condition], {RENDERED_ANNOTATION: ""}) == {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": CONFIGURATION, "annotations": {RENDERED_ANNOTATION: ""}},
        "webhooks": [{"name": WEBHOOK, "matchConditions": [condition]}],
    }  # fmt: skip


def test_a_policy_write_is_rendered_and_recorded(served: FakeAPI, manager: Manager) -> None:
    entry = policy(served, "web", {"matchLabels": {"app": "web"}})
    served.client().create(configuration())  # after the policy: its watch, not the requeue, brings it in
    annotations = recorded(served, entry)
    assert annotations[STATE_ANNOTATION] == "rendered"
    (condition,) = ours(served)
    assert 'request.namespace == "team-a" && ("app" in labels && labels["app"] == "web")' in condition["expression"]
    gauge_settles("ballast_scheduling_match_conditions", 1, state="rendered", reason="rendered")
    gauge_settles("ballast_scheduling_match_condition_characters", len(condition["expression"]))

    entry = policy(served, "web", {"matchLabels": {"app": "api"}})
    recorded(served, entry)
    (condition,) = ours(served)
    assert 'labels["app"] == "api"' in condition["expression"]


def test_an_enforced_policy_removes_the_condition_and_says_why(
    served: FakeAPI, manager: Manager, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    served.client().create(configuration())
    recorded(served, policy(served, "web", {"matchLabels": {"app": "web"}}))
    assert ours(served)
    annotations = recorded(served, policy(served, "strict", {}, **{ENFORCE_ANNOTATION: "true"}))
    assert ours(served) == []
    assert annotations[STATE_ANNOTATION] == (
        "disabled: enforced: PodSchedulingPolicy/team-a/strict is enforced: every request is sent"
    )
    gauge_settles("ballast_scheduling_match_conditions", 1, state="disabled", reason="enforced")
    gauge_settles("ballast_scheduling_match_conditions", 0, state="rendered", reason="rendered")
    gauge_settles("ballast_scheduling_match_condition_characters", 0)
    assert any("matchConditions are off: every request is sent" in r.getMessage() for r in caplog.records)


class Direct:
    """The controller's reconciler called directly, on a cache that runs (no workers)."""

    def __init__(self, api: FakeAPI) -> None:
        self.api = api
        self.manager = Manager(client=api.client(scheme=add_to_scheme(Scheme())))
        self.controller = setup(self.manager, configuration=CONFIGURATION, webhook=WEBHOOK)
        self.manager.cache.start()

    def reconcile(self) -> Result | None:
        request = Request("", CONFIGURATION)
        logger = get_logger("ballast.runtime.controller", controller=NAME)
        return self.controller.reconciler.reconcile(Context(NAME, request, "test", logger, RealClock()), request)


@pytest.fixture
def direct(served: FakeAPI) -> Iterator[Direct]:
    made = Direct(served)
    yield made
    made.manager.cache.stop()


def test_nothing_is_written_while_the_conditions_are_current(served: FakeAPI, direct: Direct) -> None:
    served.client().create(configuration())
    policy(served, "web", {"matchLabels": {"app": "web"}})
    eventually(lambda: direct.manager.client.list(KUPID), "the cache to hold the policy")
    assert direct.reconcile() is None
    version = stored(served)["metadata"]["resourceVersion"]
    assert ours(served)
    writes = len(served.requests)
    assert direct.reconcile() is None
    assert stored(served)["metadata"]["resourceVersion"] == version
    assert [r for r in served.requests[writes:] if r[0] != "GET"] == []


def test_a_missing_configuration_is_waited_for_and_logged_once(
    served: FakeAPI, direct: Direct, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    assert direct.reconcile() == Result(requeue_after=MISSING_REQUEUE)
    assert direct.reconcile() == Result(requeue_after=MISSING_REQUEUE)
    missing = [r for r in caplog.records if "not found" in r.getMessage()]
    assert len(missing) == 1
    assert missing[0].getMessage() == (
        "MutatingWebhookConfiguration ballast-scheduling not found: the scheduling webhook's matchConditions are "
        "written once it is there"
    )
    assert served.objects(CONFIGURATION_KIND) == []  # nothing is created
    without = configuration()
    without["webhooks"][0]["name"] = "other.example.com"
    served.client().create(without)
    assert direct.reconcile() == Result(requeue_after=MISSING_REQUEUE)
    assert served.objects(CONFIGURATION_KIND)[0]["webhooks"] == without["webhooks"]


def test_an_expression_the_server_refuses_is_replaced_by_none(
    served: FakeAPI, direct: Direct, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse_conditions(operation: str, gvk: GroupVersionKind, obj: dict[str, Any], old: Any) -> None:
        if gvk == MWC and any(w.get("matchConditions") for w in obj.get("webhooks") or ()):
            raise UnprocessableEntityError(
                422, "Invalid", "webhooks[0].matchConditions[0].expression: compilation failed"
            )

    served.admission(refuse_conditions)
    served.client().create(configuration())
    policy(served, "web", {"matchLabels": {"app": "web"}})
    eventually(lambda: direct.manager.client.list(KUPID), "the cache to hold the policy")
    assert direct.reconcile() is None
    assert ours(served) == []
    state = stored(served)["metadata"]["annotations"][STATE_ANNOTATION]
    assert state.startswith("disabled: refused: the API server refused the expression: ")
    assert sample("ballast_scheduling_match_conditions", state="disabled", reason="refused") == 1
    assert any(r.levelno == logging.ERROR and "refused" in r.getMessage() for r in caplog.records)
