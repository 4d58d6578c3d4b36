"""The `schedulingpolicy` controller and its CEL on the real API server: the scheduling webhook's configuration
(`internal/manifests/scheduling_webhooks.py`) pointed at a local WebhookServer whose handlers only record the calls and
allow, the controller on a manager of its own, and the API server as the CEL evaluator (it compiles the
expressions on write and evaluates them on every request; no Python CEL evaluator is installed).

Objects are created with `dryRun=All`: admission, matchConditions included, runs as for a real create, and
nothing is left behind. A configuration change reaches the API server's admission asynchronously, so after
every write the tests `sync()`: they change a token on a probe webhook of the same configuration and wait until
a probe pod reaches it — from then on the API server admits with everything written before."""

from __future__ import annotations

import contextlib
import copy
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ballast.api.kupid.v1alpha1 import PodSchedulingPolicy
from ballast.api.scheme import add_to_scheme
from ballast.controllers.schedulingpolicy import FIELD_MANAGER, RENDERED_ANNOTATION, STATE_ANNOTATION, setup
from ballast.internal.manifests.scheduling_webhooks import MUTATE_WEBHOOK, scheduling_webhook_configurations
from ballast.internal.scheduling import ENFORCE_ANNOTATION, policy_matches
from ballast.internal.scheduling.match_conditions import (
    CONDITION_NAME,
    MAX_EXPRESSION_LENGTH,
    RENDERED,
    TOO_LONG,
    cel_string,
    render_match_conditions,
)
from ballast.runtime import (
    JSON_PATCH,
    AdmissionRequest,
    AdmissionResponse,
    APIStatusError,
    Manager,
    RESTConfig,
    Scheme,
    WebhookServer,
    allowed,
)
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rest import Transport
from ballast.webhook.scheduling import MUTATE_PATH
from tests.integration.webhook_server import serving
from tests.paths import CRD_DIR
from tests.unit.internal.runtime.support import running

ADMISSION = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
KUPID = "kupid.gardener.cloud/v1alpha1"
PROBE_PATH = "/probe"
PROPERTY_PATH = "/property"
PROBE_WEBHOOK = "probe.scheduling.test.ballast.tightlinesoftware.com"
PROPERTY_WEBHOOK = "property.scheduling.test.ballast.tightlinesoftware.com"
PROBE_ANNOTATION = "scheduling-test/probe"
SELECTED_LABEL = "scheduling-test/run"
"""Namespaces labelled with the run's id are the only ones the test configurations select."""
IMAGE = "example/app:1"


# --------------------------------------------------------------------------------------------- webhook


@dataclass
class Calls:
    """Every request the local webhooks saw: (path, kind, namespace, name, probe annotation)."""

    seen: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handler(self, path: str) -> Callable[[AdmissionRequest], AdmissionResponse]:
        def record(request: AdmissionRequest) -> AdmissionResponse:
            metadata = (request.object or {}).get("metadata") or {}
            probe = (metadata.get("annotations") or {}).get(PROBE_ANNOTATION, "")
            name = request.name or str(metadata.get("name") or "")
            with self.lock:
                self.seen.append((path, str(request.kind.get("kind")), request.namespace, name, probe))
            return allowed()

        return record

    def called(self, path: str, kind: str, namespace: str, name: str) -> bool:
        with self.lock:
            return any(call[:4] == (path, kind, namespace, name) for call in self.seen)

    def probed(self, path: str, token: str) -> bool:
        with self.lock:
            return any(call[0] == path and call[4] == token for call in self.seen)


@pytest.fixture(scope="module")
def client(envtest: Environment) -> Iterator[APIServerClient]:
    envtest.install_crds([CRD_DIR])
    made = APIServerClient(Transport(RESTConfig(envtest.client_configuration())), scheme=add_to_scheme(Scheme()),
                              field_owner="scheduling-tests")  # fmt: skip
    yield made
    made.close()


@pytest.fixture(scope="module")
def calls(envtest: Environment) -> Iterator[tuple[Calls, WebhookServer]]:
    recorded = Calls()
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=envtest.webhook_cert_dir())
    for path in (MUTATE_PATH, PROBE_PATH, PROPERTY_PATH):
        server.register(path, recorded.handler(path))
    with serving(server):
        yield recorded, server


def _namespace(client: APIServerClient, run: str) -> str:
    name = f"sched-{uuid.uuid4().hex[:8]}"
    client.create({"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": name, "labels": {SELECTED_LABEL: run}}})  # fmt: skip
    return name


def _probe_webhook(token: str) -> dict[str, Any]:
    annotations = "object.metadata.annotations"
    expression = (f"has({annotations}) && {cel_string(PROBE_ANNOTATION)} in {annotations} && "
                  f"{annotations}[{cel_string(PROBE_ANNOTATION)}] == {cel_string(token)}")  # fmt: skip
    return {
        "name": PROBE_WEBHOOK, "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Fail",
        "clientConfig": {"service": {"name": "unused", "namespace": "default", "path": PROBE_PATH}},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
        "matchConditions": [{"name": "token", "expression": expression}],
    }  # fmt: skip


class Cluster:
    """One configuration (`ballast-<run>-scheduling`, or another made by `configure`), its probe, and helpers
    for writing policies and objects in the run's namespaces."""

    def __init__(
        self, envtest: Environment, client: APIServerClient, calls: Calls, server: WebhookServer, run: str
    ) -> None:
        self.envtest = envtest
        self.client = client
        self.calls = calls
        self.server = server
        self.run = run
        self.namespaces = [_namespace(client, run), _namespace(client, run)]
        self.name = f"ballast-{run}-scheduling"
        self.policies: list[dict[str, Any]] = []
        self._tokens = iter(range(1_000_000))

    # ----------------------------------------------------------------------------- configurations

    def scheduling_webhook(self, failure_policy: str) -> dict[str, Any]:
        """The product's mutating scheduling webhook, limited to the run's namespaces."""
        (mutating, _) = scheduling_webhook_configurations(
            service_name="ballast-webhook", service_namespace="ballast-system", name=f"ballast-{self.run}",
            failure_policy=failure_policy,
        )  # fmt: skip
        (webhook,) = mutating["webhooks"]
        webhook["namespaceSelector"] = {"matchLabels": {SELECTED_LABEL: self.run}}
        return dict(webhook)

    def configure(self, name: str, webhooks: list[dict[str, Any]]) -> dict[str, Any]:
        """Install (server-side apply, as the installer's field manager) `name` with `webhooks` plus the probe,
        then wait until the API server admits with it."""
        token = f"t{next(self._tokens)}"
        for webhook in webhooks:
            webhook.setdefault("namespaceSelector", {"matchLabels": {SELECTED_LABEL: self.run}})
        probe = _probe_webhook(token)
        probe["namespaceSelector"] = {"matchLabels": {SELECTED_LABEL: self.run}}
        config = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                  "metadata": {"name": name}, "webhooks": [*webhooks, probe]}  # fmt: skip
        self.envtest.install_webhooks([config], host="127.0.0.1", port=self.server.port,
                                      ca_bundle=self.envtest.ca.cert_pem)  # fmt: skip
        self._wait_for(token)
        return self.configuration(name)

    def sync(self, name: str | None = None) -> None:
        """Wait until the API server admits with every write to configuration `name` made so far: change the
        probe's token (a JSON patch, so no field manager changes) and wait for a probe pod to reach it."""
        name = name or self.name
        config = self.configuration(name)
        position = next(i for i, w in enumerate(config["webhooks"]) if w["name"] == PROBE_WEBHOOK)
        token = f"t{next(self._tokens)}"
        expression = _probe_webhook(token)["matchConditions"][0]["expression"]
        patch = [{"op": "replace", "path": f"/webhooks/{position}/matchConditions/0/expression", "value": expression}]
        self.client.patch(config, patch, patch_type=JSON_PATCH)
        self._wait_for(token)

    def _wait_for(self, token: str) -> None:
        attempt = iter(range(1_000_000))

        def reached() -> bool:
            probe = pod(f"probe-{next(attempt)}", annotations={PROBE_ANNOTATION: token})
            self.create(probe, self.namespaces[0])
            return self.calls.probed(PROBE_PATH, token)

        poll_until(reached, timeout=20, interval=0.02, what=f"the API server to admit with token {token}")

    def configuration(self, name: str | None = None) -> dict[str, Any]:
        found: dict[str, Any] = self.envtest.rest.get(f"{ADMISSION}/{name or self.name}")
        return found

    def ours(self, name: str | None = None) -> list[dict[str, str]]:
        """The conditions of the scheduling webhook named ours."""
        webhook = next(w for w in self.configuration(name)["webhooks"] if w["name"] == MUTATE_WEBHOOK)
        return [c for c in webhook.get("matchConditions") or () if c["name"] == CONDITION_NAME]

    def annotations(self) -> dict[str, str]:
        return dict(self.configuration()["metadata"].get("annotations") or {})

    # ---------------------------------------------------------------------------------------- writes

    def policy(self, name: str, namespace: str, pod_selector: dict[str, Any] | None, **annotations: str) -> str:
        """Create or replace a PodSchedulingPolicy; returns the `ref=resourceVersion` the record will show."""
        metadata: dict[str, Any] = {"name": name, "namespace": namespace}
        if annotations:
            metadata["annotations"] = annotations
        spec: dict[str, Any] = {"nodeSelector": {"pool": "test"}}
        if pod_selector is not None:
            spec["podSelector"] = pod_selector
        body = {"apiVersion": KUPID, "kind": PodSchedulingPolicy.KIND, "metadata": metadata, "spec": spec}
        written = self.client.patch(body, body, patch_type="apply", field_manager="scheduling-tests", force=True)
        self.policies.append(body)
        return f"PodSchedulingPolicy/{namespace}/{name}={written['metadata']['resourceVersion']}"

    def recorded(self, entry: str) -> None:
        """Wait until the controller recorded a rendering made from the policy version `entry`."""
        poll_until(lambda: entry in self.annotations().get(RENDERED_ANNOTATION, "").split(","), timeout=20,
                   interval=0.005, what=f"the rendering of {entry}")  # fmt: skip

    def create(self, obj: dict[str, Any], namespace: str) -> Any:
        """A dry-run create: admission runs (matchConditions, webhooks), nothing is stored."""
        return self.client.create(obj, namespace=namespace, dry_run=True)

    def refusal(self, obj: dict[str, Any], namespace: str | None) -> str:
        """A dry-run create: "" when admitted and valid, else the refusal's reason and the start of its
        message (`422 Invalid: Deployment.apps is invalid`), so admission errors cannot pass for validation."""
        try:
            self.client.create(obj, namespace=namespace, dry_run=True)
        except APIStatusError as error:
            if error.status == 422 and "admission" not in error.message and "matchCondition" not in error.message:
                return (
                    error.message.split(" ", 1)[0] + " is invalid" if " is invalid" in error.message else error.message
                )
            return f"{error.status}: {error.message}"
        return ""

    def cleanup(self) -> None:
        for body in self.policies:
            with contextlib.suppress(APIStatusError):
                self.client.delete(body)
        for namespace in self.namespaces:
            with contextlib.suppress(APIStatusError):
                self.client.delete({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})


def pod(name: str, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": [{"name": "app", "image": IMAGE}]}}  # fmt: skip


def _template(labels: dict[str, str] | None, restart: str = "Always") -> dict[str, Any]:
    template: dict[str, Any] = {"spec": {"containers": [{"name": "app", "image": IMAGE}], "restartPolicy": restart}}
    if labels is not None:
        template["metadata"] = {"labels": labels}
    return template


def deployment(name: str, labels: dict[str, str] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": _template(labels)}
    if labels:
        spec["selector"] = {"matchLabels": labels}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def job(name: str, labels: dict[str, str] | None) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": _template(labels, "Never")}}  # fmt: skip


def cronjob(name: str, labels: dict[str, str] | None) -> dict[str, Any]:
    spec = {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": _template(labels, "Never")}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": spec}


BUILDERS: dict[str, Callable[[str, dict[str, str] | None], dict[str, Any]]] = {
    "Pod": pod, "Deployment": deployment, "Job": job, "CronJob": cronjob,
}  # fmt: skip


@pytest.fixture(scope="module")
def cluster(envtest: Environment, client: APIServerClient, calls: tuple[Calls, WebhookServer]) -> Iterator[Cluster]:
    recorded, server = calls
    made = Cluster(envtest, client, recorded, server, uuid.uuid4().hex[:8])
    try:
        yield made
    finally:
        made.cleanup()


@pytest.fixture(scope="module")
def controlled(envtest: Environment, cluster: Cluster) -> Iterator[Cluster]:
    """The scheduling configuration installed (failurePolicy Fail) and the controller running on it."""
    cluster.configure(cluster.name, [cluster.scheduling_webhook("Fail")])
    client = APIServerClient(Transport(RESTConfig(envtest.client_configuration())), scheme=add_to_scheme(Scheme()),
                                field_owner="ballastd")  # fmt: skip
    manager = Manager(client=client)
    setup(manager, configuration=cluster.name, webhook=MUTATE_WEBHOOK)
    try:
        with running(manager):
            poll_until(lambda: RENDERED_ANNOTATION in cluster.annotations(), timeout=20, what="a first rendering")
            yield cluster
    finally:
        with contextlib.suppress(APIStatusError):
            envtest.rest.delete(f"{ADMISSION}/{cluster.name}")
        client.close()


# ------------------------------------------------------------------------------------------ the controller


def test_a_policy_write_is_recorded_and_only_the_pods_it_selects_reach_the_webhook(controlled: Cluster) -> None:
    cluster = controlled
    home, other = cluster.namespaces
    before = cluster.configuration()
    cluster.recorded(cluster.policy("web", home, {"matchLabels": {"app": "web"}}))
    cluster.sync()
    (condition,) = cluster.ours()
    assert 'request.namespace == "' + home + '"' in condition["expression"]
    assert cluster.annotations()[STATE_ANNOTATION] == "rendered"
    after = cluster.configuration()
    for old, new in zip(before["webhooks"], after["webhooks"], strict=True):
        # the CA bundle, the rules, the selectors: untouched
        assert {k: v for k, v in new.items() if k != "matchConditions"} == {
            k: v for k, v in old.items() if k != "matchConditions"
        }
    (ours,) = [entry for entry in after["metadata"]["managedFields"] if entry["manager"] == FIELD_MANAGER]
    assert ours["operation"] == "Apply"
    owned = ours["fieldsV1"]
    assert set(owned) == {"f:metadata", "f:webhooks"}
    assert set(owned["f:metadata"]["f:annotations"]) == {f"f:{RENDERED_ANNOTATION}", f"f:{STATE_ANNOTATION}"}
    (item,) = owned["f:webhooks"].values()
    assert set(item) == {".", "f:matchConditions", "f:name"}

    cluster.create(pod("api-0", {"app": "api"}), home)
    cluster.create(pod("web-0", {"app": "web"}), home)
    cluster.create(pod("web-elsewhere", {"app": "web"}), other)
    assert not cluster.calls.called(MUTATE_PATH, "Pod", home, "api-0")
    assert cluster.calls.called(MUTATE_PATH, "Pod", home, "web-0")
    assert not cluster.calls.called(MUTATE_PATH, "Pod", other, "web-elsewhere")  # a namespaced policy


@pytest.mark.parametrize("failure_policy", ["Ignore", "Fail"])
def test_objects_without_labels_are_admitted_whatever_the_failure_policy(
    controlled: Cluster, failure_policy: str
) -> None:
    """Unlabelled objects evaluated on both sides of the expression: a selector they fail (`app=web`), then one
    they pass (`DoesNotExist`). An error would refuse them under Fail, and skip the webhook under Ignore — where
    the second half would then see no call."""
    cluster = controlled
    home = cluster.namespaces[0]
    cluster.configure(cluster.name, [cluster.scheduling_webhook(failure_policy)])
    assert cluster.configuration()["webhooks"][0]["failurePolicy"] == failure_policy
    assert cluster.ours(), "the installer's re-apply left the controller's condition in place"
    cluster.recorded(cluster.policy("web", home, {"matchLabels": {"app": "web"}}))
    cluster.recorded(cluster.policy("absent", home, None))
    cluster.sync()
    prefix = f"{failure_policy.lower()}-{uuid.uuid4().hex[:4]}"

    def admit_all(phase: str) -> list[tuple[str, str]]:
        names = []
        for kind, build in BUILDERS.items():
            for variant, labels in (("none", None), ("empty", {})):
                name = f"{prefix}-{phase}-{kind.lower()}-{variant}"
                refusal = cluster.refusal(build(name, labels), home)
                # A Deployment needs template labels, but that is validation, after admission.
                assert refusal == ("" if kind != "Deployment" else "Deployment.apps is invalid"), refusal
                names.append((kind, name))
        return names

    skipped = admit_all("skipped")
    assert [n for kind, n in skipped if cluster.calls.called(MUTATE_PATH, kind, home, n)] == []

    cluster.recorded(
        cluster.policy("absent", home, {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]})
    )
    cluster.sync()
    called = admit_all("called")
    assert [n for kind, n in called if not cluster.calls.called(MUTATE_PATH, kind, home, n)] == []


def test_an_enforced_policy_turns_the_conditions_off_until_it_is_no_longer_enforced(controlled: Cluster) -> None:
    cluster = controlled
    home = cluster.namespaces[0]
    cluster.recorded(cluster.policy("absent", home, None))  # the previous test's selects every unlabelled pod
    cluster.recorded(cluster.policy("web", home, {"matchLabels": {"app": "web"}}))
    assert cluster.ours()
    cluster.recorded(cluster.policy("strict", home, {"matchLabels": {"app": "db"}}, **{ENFORCE_ANNOTATION: "true"}))
    assert cluster.ours() == []
    state = cluster.annotations()[STATE_ANNOTATION]
    assert state == f"disabled: enforced: PodSchedulingPolicy/{home}/strict is enforced: every request is sent"
    cluster.sync()
    cluster.create(pod("api-enforced", {"app": "api"}), home)
    assert cluster.calls.called(MUTATE_PATH, "Pod", home, "api-enforced")  # every request is sent

    cluster.recorded(cluster.policy("strict", home, {"matchLabels": {"app": "db"}}))
    assert cluster.ours()
    assert cluster.annotations()[STATE_ANNOTATION] == "rendered"
    cluster.sync()
    cluster.create(pod("api-relaxed", {"app": "api"}), home)
    assert not cluster.calls.called(MUTATE_PATH, "Pod", home, "api-relaxed")


@pytest.mark.alone  # a median in seconds: a busy neighbour would stretch it
def test_the_time_from_a_policy_write_to_its_recorded_rendering(controlled: Cluster) -> None:
    cluster = controlled
    home = cluster.namespaces[0]
    cluster.recorded(cluster.policy("timed", home, {"matchLabels": {"app": "v0"}}))
    durations = []
    for run in range(1, 11):
        started = time.perf_counter()
        cluster.recorded(cluster.policy("timed", home, {"matchLabels": {"app": f"v{run}"}}))
        durations.append(time.perf_counter() - started)
    median = statistics.median(durations)
    print(f"\npolicy write to recorded rendering: median {median * 1000:.0f} ms, "
          f"max {max(durations) * 1000:.0f} ms over {len(durations)}")  # fmt: skip
    assert median < 2.0


# ------------------------------------------------------------------------------ the CEL, evaluated by the server


_KEYS = st.sampled_from(["app", "tier", "example.com/team"])
_VALUES = st.sampled_from(["web", "db", "", "a.b-c_d"])
_EXPRESSION = st.one_of(
    st.builds(lambda k, op, vs: {"key": k, "operator": op, "values": vs}, _KEYS, st.sampled_from(["In", "NotIn"]),
              st.lists(_VALUES, min_size=1, max_size=3)),
    st.builds(lambda k, op: {"key": k, "operator": op}, _KEYS, st.sampled_from(["Exists", "DoesNotExist"])),
)  # fmt: skip
_SELECTOR = st.fixed_dictionaries({}, optional={
    "matchLabels": st.dictionaries(_KEYS, _VALUES, max_size=2),
    "matchExpressions": st.lists(_EXPRESSION, max_size=3),
})  # fmt: skip
_LABELS = st.one_of(st.none(), st.dictionaries(_KEYS, _VALUES, max_size=3))


@st.composite
def _policies(draw: st.DrawFn) -> list[dict[str, Any]]:
    policies = []
    for index in range(draw(st.integers(0, 4))):
        spec: dict[str, Any] = {}
        if draw(st.booleans()) or index == 0:
            spec["podSelector"] = draw(_SELECTOR)
        if draw(st.booleans()):
            spec["namespaceSelector"] = {}
            policies.append({"apiVersion": KUPID, "kind": "ClusterPodSchedulingPolicy",
                             "metadata": {"name": f"p{index}"}, "spec": spec})  # fmt: skip
        else:
            namespace = draw(st.sampled_from(["HOME", "OTHER"]))
            policies.append({"apiVersion": KUPID, "kind": "PodSchedulingPolicy",
                             "metadata": {"name": f"p{index}", "namespace": namespace}, "spec": spec})  # fmt: skip
    return policies


def _in(policies: list[dict[str, Any]], home: str, other: str) -> list[dict[str, Any]]:
    placed = copy.deepcopy(policies)
    for policy in placed:
        if "namespace" in policy["metadata"]:
            policy["metadata"]["namespace"] = home if policy["metadata"]["namespace"] == "HOME" else other
    return placed


def _property_webhook(cluster: Cluster, conditions: Sequence[Mapping[str, str]], failure_policy: str) -> dict[str, Any]:
    webhook = cluster.scheduling_webhook(failure_policy)
    webhook["name"] = PROPERTY_WEBHOOK
    webhook["clientConfig"] = {"service": {"name": "unused", "namespace": "default", "path": PROPERTY_PATH}}
    webhook["matchConditions"] = [dict(condition) for condition in conditions]
    return webhook


def _expected(policies: list[dict[str, Any]], namespace: str, labels: dict[str, str] | None) -> bool:
    """`policy_matches` as the webhook applies it: cluster policies (their namespaceSelector is `{}` here) and
    the object's namespace's policies."""
    return any(policy_matches(p, {}, labels) for p in policies
               if p["metadata"].get("namespace", namespace) == namespace)  # fmt: skip


@pytest.fixture(scope="module")
def property_configuration(cluster: Cluster, envtest: Environment) -> Iterator[str]:
    name = f"ballast-{cluster.run}-property"
    yield name
    with contextlib.suppress(APIStatusError):
        envtest.rest.delete(f"{ADMISSION}/{name}")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(policies=_policies(), objects=st.lists(st.tuples(st.sampled_from(sorted(BUILDERS)), _LABELS), min_size=1,
                                             max_size=6))  # fmt: skip
def test_the_expression_agrees_with_policy_matches(
    cluster: Cluster, property_configuration: str, policies: list[dict[str, Any]],
    objects: list[tuple[str, dict[str, str] | None]],
) -> None:  # fmt: skip
    """Random selectors and labels, Pods and templates, in the policies' namespace or another: the webhook is
    called exactly for the objects `policy_matches` selects (failurePolicy Fail, so an error would refuse)."""
    home, other = cluster.namespaces
    placed = _in(policies, home, other)
    rendering = render_match_conditions(placed)
    assert rendering.reason == RENDERED
    assert rendering.conditions is not None
    cluster.configure(property_configuration, [_property_webhook(cluster, rendering.conditions, "Fail")])
    for position, (kind, labels) in enumerate(objects):
        namespace = home if position % 3 else other
        name = f"{kind.lower()}-{uuid.uuid4().hex[:10]}"
        refusal = cluster.refusal(BUILDERS[kind](name, labels), namespace)
        assert refusal in ("", "Deployment.apps is invalid"), refusal  # without template labels: validation
        expected = _expected(placed, namespace, labels)
        called = cluster.calls.called(PROPERTY_PATH, kind, namespace, name)
        event(f"{kind} {'selected' if expected else 'not selected'}")
        assert called == expected, (rendering.expression, kind, namespace == home, labels)


@pytest.mark.alone  # the API server compiles CEL at the cost limit: beside a worker it hit its request timeout
def test_an_expression_at_the_length_limit_is_accepted_and_evaluates(
    cluster: Cluster, property_configuration: str
) -> None:
    """The limits the renderer holds to are the server's: `MAX_EXPRESSION_LENGTH` code points compile, one more
    is refused; a rendering just under the limit (hundreds of selectors) evaluates within the cost budget under
    Fail, for a pod that matches the last selector and one that matches none."""
    home = cluster.namespaces[0]
    policies = [{"apiVersion": KUPID, "kind": "PodSchedulingPolicy",
                 "metadata": {"name": f"p{index}", "namespace": home},
                 "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/name": f"service-{index:05d}"},
                                          "matchExpressions": [{"key": "tier", "operator": "NotIn",
                                                                "values": ["db", "cache"]}]}}}
                for index in range(2_000)]  # fmt: skip
    count = 1
    while render_match_conditions(policies[: count * 2]).reason == RENDERED:
        count *= 2
    low, high = count, count * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if render_match_conditions(policies[:middle]).reason == RENDERED else (low, middle)
    largest = render_match_conditions(policies[:low])
    assert render_match_conditions(policies[:high]).reason == TOO_LONG
    assert largest.conditions is not None
    assert len(largest.expression) > MAX_EXPRESSION_LENGTH - 200
    cluster.configure(property_configuration, [_property_webhook(cluster, largest.conditions, "Fail")])
    many = {f"example.com/label-{index}": "x" for index in range(60)}
    last = f"service-{low - 1:05d}"
    cluster.create(pod("limit-last", {**many, "app.kubernetes.io/name": last}), home)
    cluster.create(pod("limit-none", {**many, "app.kubernetes.io/name": "unknown"}), home)
    assert cluster.calls.called(PROPERTY_PATH, "Pod", home, "limit-last")
    assert not cluster.calls.called(PROPERTY_PATH, "Pod", home, "limit-none")

    for length, accepted in ((MAX_EXPRESSION_LENGTH, True), (MAX_EXPRESSION_LENGTH + 1, False)):
        padded = '"' + "a" * (length - 8) + '" != ""'  # code points count, not surrounding whitespace
        webhook = _property_webhook(cluster, [{"name": "padded", "expression": padded}], "Ignore")
        webhook["clientConfig"] = {"url": "https://127.0.0.1:1/unused"}
        body = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": f"{property_configuration}-length"},
            "webhooks": [webhook],
        }
        refusal = cluster.refusal(body, None)
        assert (refusal == "") == accepted, refusal


STRINGS = ['plain', 'a"b', "back\\slash", "new\nline", "tab\t", "nul\x00", "é", "日本", "😀", '" || true || "',
           "\\u0041", "'single'", "`tick`", "\x7f", "\u2028"]  # fmt: skip


def test_string_literals_read_back_as_the_strings_they_escape(cluster: Cluster, property_configuration: str) -> None:
    """`cel_string` against the server's CEL: annotation values (any string) equal to the literals of a
    condition reach the webhook, a near miss does not."""
    home = cluster.namespaces[0]
    value = "object.metadata.annotations"
    expression = (f'has({value}) && "v" in {value} && '
                  f'{value}["v"] in [{", ".join(cel_string(text) for text in STRINGS)}]')  # fmt: skip
    condition = [{"name": "strings", "expression": expression}]
    cluster.configure(property_configuration, [_property_webhook(cluster, condition, "Fail")])
    for index, text in enumerate([*STRINGS, 'a\\"b', "plain "]):
        name = f"string-{index}"
        cluster.create(pod(name, annotations={"v": text}), home)
        assert cluster.calls.called(PROPERTY_PATH, "Pod", home, name) == (text in STRINGS), repr(text)
