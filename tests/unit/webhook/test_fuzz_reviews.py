"""Raw AdmissionReviews fuzzed straight at the operator's admission server (issue 18).

The server is the one `ballastd` builds from its flags (`webhook_server`), with every handler `ballastd` registers
(`register_webhooks`) reading through a running manager's cache, on loopback TLS. Whatever arrives — random bytes
and JSON, truncated bodies, other apiVersions and kinds, null requests and objects, a valid object with a few
fields gone wrong, a 10 MB object, wrong content types and methods, garbage from several threads at once — is
answered with a well-formed AdmissionReview (in the request's apiVersion, with its uid once the review could be
read, `allowed` a bool, a patch that applies to the object) or an HTTP 4xx: never a 500 from a handler that
raised, never a dropped connection, and a well-formed review is answered after each test.

The API server itself only sends well-formed reviews (object fuzzing through it is the e2e suite's); these are
what any client reaching the port can send. The cases tried and the crashes seen go to
`build/figures/fuzz_reviews.json`, which RELIABILITY.md reports.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import logging
import re
import socket
import ssl
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonpatch
import orjson
import pytest
import urllib3
from hypothesis import given, settings
from hypothesis import strategies as st

from ballast.api.scheme import add_to_scheme
from ballast.internal.cmd.ballastd import build_parser, webhook_server
from ballast.internal.cmd.wiring import Dependencies, new_manager, register_webhooks
from ballast.internal.history import SQLiteHistoryStore
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.manifests.webhooks import all_webhook_configurations
from ballast.internal.operator import OperatorOptions
from ballast.runtime import FakeAPI, Scheme, objects
from ballast.runtime.admission import SUPPORTED_VERSIONS
from ballast.runtime.certs import CertificateAuthority
from ballast.webhook import configuration, pods, policies, scheduling, schedulingpolicies
from tests.figures import write_figures
from tests.unit.internal.policy.builders import crp
from tests.unit.internal.runtime.support import running, sample
from tests.unit.internal.scheduling.builders import cluster, req, required, term
from tests.unit.internal.scheduling.kupid_samples import all_samples
from tests.unit.support import register_our_kinds

from .support import DEFAULT_PROFILE, JSON, NAMESPACE, ballast_config, container, container_profile, pod, profile

V1 = "admission.k8s.io/v1"
MAX_BODY_BYTES = build_parser().parse_args([]).webhook_max_body_bytes
PATHS = (
    pods.MUTATE_PATH,
    pods.VALIDATE_PATH,
    policies.VALIDATE_PATH,
    configuration.VALIDATE_PATH,
    scheduling.MUTATE_PATH,
    schedulingpolicies.VALIDATE_PATH,
)
GROUP = "ballast.tightlinesoftware.com"
KUPID = "kupid.gardener.cloud"
ETCD_NAMESPACE = "etcd-main"
ETCD = {"app": "etcd"}
PANICS = "controller_runtime_webhook_panics_total"

# ------------------------------------------------------------------------------------------------ the seeds


def _request(
    obj: JSON | None,
    kind: tuple[str, str, str],
    resource: str,
    *,
    operation: str = "CREATE",
    old: JSON | None = None,
    namespace: str = "",
) -> JSON:
    group, version, kind_name = kind
    name = (obj or {}).get("metadata", {}).get("name", "")
    request: JSON = {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": group, "version": version, "kind": kind_name},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": kind_name},
        "name": name,
        "namespace": namespace,
        "operation": operation,
        "userInfo": {"username": "system:serviceaccount:shop:deployer", "groups": ["system:authenticated"]},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    }
    return request


def _etcd_pod() -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "etcd-0", "namespace": ETCD_NAMESPACE, "labels": dict(ETCD)},
        "spec": {"containers": [{"name": "etcd", "image": "etcd:3"}]},
    }


def _workload(kind: str, group: str) -> JSON:
    template = {"metadata": {"labels": dict(ETCD)}, "spec": {"containers": [{"name": "etcd", "image": "etcd:3"}]}}
    spec: JSON = {"replicas": 3, "selector": {"matchLabels": dict(ETCD)}, "template": template}
    if kind == "CronJob":
        spec = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}
    return {
        "apiVersion": f"{group}/v1",
        "kind": kind,
        "metadata": {"name": "etcd", "namespace": ETCD_NAMESPACE},
        "spec": spec,
    }


def _etcd_policy() -> JSON:
    return cluster(
        "etcd",
        namespaceSelector={"matchLabels": {"role": "etcd"}},
        podSelector={"matchLabels": dict(ETCD)},
        nodeSelector={"pool": "etcd"},
        tolerations=[{"key": "dedicated", "operator": "Equal", "value": "etcd", "effect": "NoSchedule"}],
        affinity=required(term(req("zone", "In", "a", "b"))),
    )


def _seeds() -> dict[str, list[JSON]]:
    """Well-formed requests per path, each one its handler decides on (a patch, an allow, a denial)."""
    pod_kind = ("", "v1", "Pod")
    limited = pod("apply", containers=[container("app", {"cpu": "100m"}, {"cpu": "200m", "memory": "64Mi"})])
    limited["spec"]["initContainers"] = [container("init", {"cpu": "10m"}, restart_policy="Always")]
    owned = pod(
        "apply", owners=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9", "controller": True}]
    )
    policy_metric = {"resource": "cpu", "field": "request", "source": "k", "aggregation": "p95", "headroom": "1.2"}
    crp_body = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterResourcePolicy", "metadata": {"name": "fleet"},
                "spec": {"priority": 10, "selector": {"namespaces": {"include": ["/team-.*/"]}},
                         "metrics": [policy_metric], "readiness": {"minTimeSpan": "24h"}}}  # fmt: skip
    rp_body = {**copy.deepcopy(crp_body), "kind": "ResourcePolicy", "metadata": {"name": "team", "namespace": "shop"}}
    config_body = {"apiVersion": f"{GROUP}/v1", "kind": "BallastConfig", "metadata": {"name": "ballast"},
                   "spec": {"identityLabels": ["app.kubernetes.io/name", "app.kubernetes.io/component"]}}  # fmt: skip
    source_body = {"apiVersion": f"{GROUP}/v1", "kind": "MetricsSource", "metadata": {"name": "kubernetes-metrics"},
                   "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "60s"}}}  # fmt: skip
    kupid = [
        _request(
            sample,
            (KUPID, "v1alpha1", sample["kind"]),
            sample["kind"].lower().replace("policy", "policies"),
            namespace=sample["metadata"].get("namespace", ""),
        )
        for sample in all_samples()
    ]
    return {
        pods.MUTATE_PATH: [
            _request(pod("apply"), pod_kind, "pods", namespace=NAMESPACE),
            _request(limited, pod_kind, "pods", namespace=NAMESPACE),
            _request(pod("measure"), pod_kind, "pods", namespace=NAMESPACE),
            _request(owned, pod_kind, "pods", namespace=NAMESPACE),
        ],
        pods.VALIDATE_PATH: [
            _request(pod("Apply"), pod_kind, "pods", operation="UPDATE", old=pod("apply"), namespace=NAMESPACE),
            _request(pod("apply"), pod_kind, "pods", operation="UPDATE", old=pod("measure"), namespace=NAMESPACE),
        ],
        policies.VALIDATE_PATH: [
            _request(crp_body, (GROUP, "v1", "ClusterResourcePolicy"), "clusterresourcepolicies"),
            _request(
                rp_body,
                (GROUP, "v1", "ResourcePolicy"),
                "resourcepolicies",
                namespace="shop",
                operation="UPDATE",
                old=copy.deepcopy(rp_body),
            ),
        ],
        configuration.VALIDATE_PATH: [
            _request(config_body, (GROUP, "v1", "BallastConfig"), "ballastconfigs"),
            _request(source_body, (GROUP, "v1", "MetricsSource"), "metricssources"),
        ],
        scheduling.MUTATE_PATH: [
            _request(_etcd_pod(), pod_kind, "pods", namespace=ETCD_NAMESPACE),
            _request(
                _workload("Deployment", "apps"), ("apps", "v1", "Deployment"), "deployments", namespace=ETCD_NAMESPACE
            ),
            _request(_workload("CronJob", "batch"), ("batch", "v1", "CronJob"), "cronjobs", namespace=ETCD_NAMESPACE),
        ],
        schedulingpolicies.VALIDATE_PATH: kupid[:4],
    }


SEEDS = _seeds()


def review(request: JSON | None, api_version: str = V1) -> JSON:
    return {"apiVersion": api_version, "kind": "AdmissionReview", "request": request}


def encode(value: Any) -> bytes:
    """JSON as any client may write it: integers of any size, non-ASCII escaped or not."""
    return json.dumps(value, allow_nan=False).encode()


# ------------------------------------------------------------------------------------------------ the oracle


@dataclass(frozen=True)
class Case:
    """One request sent to the server."""

    path: str
    body: bytes
    content_type: str | None = "application/json"
    method: str = "POST"

    def readable(self) -> tuple[str, str, JSON] | None:
        """(apiVersion, uid, request) when this is a review the server must decide on, else None (it must be
        refused). Written from the AdmissionReview's definition, not from the decoder."""
        media = (self.content_type or "").split(";")[0].strip()
        if media != "application/json" or len(self.body) > MAX_BODY_BYTES or self.path not in PATHS:
            return None
        try:
            document = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(document, dict) or document.get("kind") != "AdmissionReview":
            return None
        api_version, request = document.get("apiVersion"), document.get("request")
        if api_version not in SUPPORTED_VERSIONS or not isinstance(request, dict) or not request.get("uid"):
            return None
        if not all(request.get(key) is None or isinstance(request[key], kind) for key, kind in FIELD_TYPES.items()):
            return None
        return str(api_version), str(request["uid"]), request


FIELD_TYPES: dict[str, type] = {
    **dict.fromkeys(("uid", "operation", "name", "namespace", "subResource"), str),
    **dict.fromkeys(("kind", "resource", "userInfo", "options", "object", "oldObject"), dict),
    "dryRun": bool,
}
"""The AdmissionRequest fields the handlers read, with their types in admission.k8s.io/v1 (null: absent)."""


@dataclass
class Tally:
    """What the fuzz saw, for the figures file."""

    cases: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    http_5xx: int = 0
    review_5xx: int = 0
    dropped: int = 0
    bad_answers: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, test: str, outcome: str) -> None:
        with self.lock:
            self.cases[test] += 1
            self.outcomes[outcome] += 1


TALLY = Tally()


def check(case: Case, status: int, data: bytes) -> str:
    """Assert that `data` (with HTTP `status`) is an acceptable answer to `case`; returns the outcome's label."""
    if status != 200:
        if status >= 500:
            TALLY.http_5xx += 1
        assert 400 <= status < 500, f"HTTP {status} for {case}: {data[:300]!r}"
        return f"http {status}"
    try:
        answer = orjson.loads(data)
        readable = case.readable()
        code = _check_review(case, answer, readable)
    except (AssertionError, orjson.JSONDecodeError, KeyError, TypeError):
        TALLY.bad_answers += 1
        raise
    return f"review {code}" + ("" if readable else " (refused unread)")


def _check_review(case: Case, answer: Any, readable: tuple[str, str, JSON] | None) -> int:
    assert isinstance(answer, dict), answer
    assert answer["kind"] == "AdmissionReview", answer
    assert answer["apiVersion"] == (readable[0] if readable else V1), answer
    response = answer["response"]
    assert isinstance(response["allowed"], bool), response
    code = response["status"]["code"]
    assert isinstance(code, int), response
    if code >= 500:
        TALLY.review_5xx += 1
    assert code < 500, f"{case.path}: a handler failed: {response['status'].get('message')}"
    assert all(isinstance(warning, str) for warning in response.get("warnings", [])), response
    if readable is None:
        assert (response["uid"], response["allowed"]) == ("", False), response
        assert 400 <= code < 500, response
        return int(code)
    _, uid, request = readable
    assert response["uid"] == uid, response
    assert (code == 200) if response["allowed"] else (400 <= code < 500), response
    if "patch" in response:
        assert response["allowed"], response
        assert response["patchType"] == "JSONPatch", response
        operations = orjson.loads(base64.b64decode(response["patch"]))
        jsonpatch.apply_patch(request.get("object") or {}, operations)  # raises if the patch does not apply
    return int(code)


_SEGMENT = re.compile(r"(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-F]{2})+")


def clean(path: str) -> bool:
    """Whether `path` is `/api/...` or `/apis/...` made of path segments only: none empty, `.` or `..`, no `?`
    or `#` (a name that brought either would point the request at another object, or turn a GET into a LIST)."""
    root, *segments = path.split("/")
    return (
        root == ""
        and segments[:1] in (["api"], ["apis"])
        and all(_SEGMENT.fullmatch(segment) and segment not in (".", "..") for segment in segments)
    )


# ------------------------------------------------------------------------------------------------ the server


class HandledExceptions(logging.Handler):
    """Records the tracebacks the handlers log while admitting anyway (a broad `except` that hid a bug)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


@dataclass
class Served:
    base: str
    ca: CertificateAuthority
    pool: urllib3.PoolManager
    port: int
    api: FakeAPI
    hidden: HandledExceptions
    checked: int = 0
    """How many of the FakeAPI's recorded requests `still_answers` has looked at."""
    hidden_checked: int = 0

    def new_pool(self) -> urllib3.PoolManager:
        """A client trusting the server's CA, without retries (every answer is seen, a drop is an error)."""
        return urllib3.PoolManager(ca_cert_data=self.ca.cert_pem.decode(), retries=False, timeout=30.0, maxsize=2)

    def send(self, test: str, case: Case, pool: urllib3.PoolManager | None = None) -> str:
        """Send `case`, check the answer; a dropped connection or an unacceptable answer fails the test."""
        return self.exchange(test, case, pool)[0]

    def exchange(self, test: str, case: Case, pool: urllib3.PoolManager | None = None) -> tuple[str, Any]:
        """`send`, also returning the answer (the AdmissionReview's `response`, or the HTTP error's body)."""
        headers = {} if case.content_type is None else {"Content-Type": case.content_type}
        try:
            answer = (pool or self.pool).request(case.method, self.base + case.path, body=case.body, headers=headers)
        except urllib3.exceptions.HTTPError:
            with TALLY.lock:
                TALLY.dropped += 1
            raise
        outcome = check(case, answer.status, answer.data)
        TALLY.count(test, outcome)
        document = orjson.loads(answer.data) if answer.data else {}  # HEAD: no body
        return outcome, document.get("response", document)

    def still_answers(self) -> None:
        """A well-formed review is decided afterwards, on a new connection and on the pooled one; and whatever
        the handlers read from the API server meanwhile was an object or collection of theirs, by a clean path."""
        case = Case(pods.MUTATE_PATH, encode(review(SEEDS[pods.MUTATE_PATH][0])))
        for pool in (self.new_pool(), self.pool):
            assert self.send("well-formed afterwards", case, pool) == "review 200"
        self.read_cleanly()

    def read_cleanly(self) -> None:
        """Since the last call, the handlers only read (GET, WATCH) by clean paths and logged no traceback."""
        requests, self.checked = self.api.requests[self.checked :], len(self.api.requests)
        stray = [f"{method} {path}" for method, path in requests if method not in ("GET", "WATCH") or not clean(path)]
        assert stray == [], f"the handlers sent these requests: {stray[:10]}"
        records, self.hidden_checked = self.hidden.records[self.hidden_checked :], len(self.hidden.records)
        assert records == [], [f"{r.getMessage()}: {r.exc_info[1]!r}" for r in records if r.exc_info]


@pytest.fixture(scope="module")
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`ballastd`'s admission server and handlers on 127.0.0.1, reading a FakeAPI through a running manager's
    cache that holds a BallastConfig, a policy, a ready profile for the seed pods and a scheduling policy."""
    began, panics = time.monotonic(), sample(PANICS)
    certs = tmp_path_factory.mktemp("fuzz-certs")
    ca = CertificateAuthority("fuzz-ca")
    ca.issue("fuzz-webhook", hosts=("127.0.0.1",), server=True).write(certs)
    api = register_our_kinds(FakeAPI())
    client = api.client(scheme=add_to_scheme(Scheme()))
    for obj in (ballast_config(), crp("default"), crp("deployments", 5, {"kinds": ["Deployment"]}), _etcd_policy()):
        client.create(obj)
    deployment = client.create({"apiVersion": "apps/v1", "kind": "Deployment",
                                "metadata": {"name": "web", "namespace": NAMESPACE}})  # fmt: skip
    reference = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": objects.uid(deployment),
                 "controller": True}  # fmt: skip
    replica_set = {"name": "web-7d9", "namespace": NAMESPACE, "ownerReferences": [reference]}
    client.create({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": replica_set})
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    client.create({"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": ETCD_NAMESPACE, "labels": {"role": "etcd"}}})  # fmt: skip
    recommendations = {"cpu": {"request": "250m"}, "memory": {"request": "192Mi", "limit": "256Mi"}}
    ready = profile(DEFAULT_PROFILE, [container_profile("app", recommendations)])
    client.status().update(client.create(profile(DEFAULT_PROFILE, [])).model_copy(update={"status": ready.status}))
    args = build_parser().parse_args(["--webhook-bind-address=127.0.0.1:0", f"--webhook-cert-path={certs}"])
    server = webhook_server(args)
    manager = new_manager(client, namespace="ballast-system")
    store = SQLiteHistoryStore(tmp_path_factory.mktemp("fuzz-store") / "history.db")
    register_webhooks(server, manager, Dependencies(store=store, kill_switch=KillSwitchState(),
                                                    options=OperatorOptions()))  # fmt: skip
    manager.add_webhook_server(server)
    hidden = HandledExceptions()
    logging.getLogger("ballast").addHandler(hidden)
    try:
        with running(manager):
            assert server.wait_listening(10)
            ca_pem = ca.cert_pem.decode()
            pool = urllib3.PoolManager(ca_cert_data=ca_pem, retries=False, timeout=30.0, maxsize=1)
            yield Served(f"https://127.0.0.1:{server.port}", ca, pool, server.port, api, hidden, len(api.requests))
    finally:
        logging.getLogger("ballast").removeHandler(hidden)
        store.close()
        api.close()
        if _every_test_selected(request.session):  # a `-k` run's smaller count must not replace the figure
            _write_figures(time.monotonic() - began, sample(PANICS) - panics, len(hidden.records))


def _every_test_selected(session: pytest.Session) -> bool:
    here = sys.modules[__name__]
    selected = {item.name.split("[")[0] for item in session.items if getattr(item, "module", None) is here}
    return selected == {name for name in vars(here) if name.startswith("test_")}


def _write_figures(seconds: float, panics: float, hidden: int) -> Path:
    crashes = int(panics) + TALLY.http_5xx + TALLY.review_5xx + TALLY.dropped
    return write_figures(
        "fuzz_reviews",
        {
            "cases": sum(TALLY.cases.values()),
            "crashes": crashes,
            "handler_panics": int(panics),
            "http_5xx": TALLY.http_5xx,
            "review_5xx": TALLY.review_5xx,
            "dropped_connections": TALLY.dropped,
            "unacceptable_answers": TALLY.bad_answers,
            "hidden_handler_exceptions": hidden,
            "cases_by_test": dict(sorted(TALLY.cases.items())),
            "outcomes": dict(sorted(TALLY.outcomes.items())),
            "paths": list(PATHS),
            "seconds": round(seconds, 1),
        },
        source="tests/unit/webhook/test_fuzz_reviews.py",
    )


def test_the_fuzzed_paths_are_every_path_the_api_server_is_configured_to_call() -> None:
    configured = {
        webhook["clientConfig"]["service"]["path"]
        for configuration_ in all_webhook_configurations(service_name="ballast", service_namespace="ballast-system")
        for webhook in configuration_["webhooks"]
    }
    assert configured == set(PATHS)


def test_every_seed_is_decided(served: Served) -> None:
    """The seeds reach their handlers' decisions (a patch, an allow, a denial), not a refusal to read them: the
    fuzz below starts from objects that go all the way through (the profile applied, the owner chain read)."""
    answers = [(path, *served.exchange("seeds", Case(path, encode(review(seed))))) for path, seeds in SEEDS.items()
               for seed in seeds]  # fmt: skip
    assert all(outcome in ("review 200", "review 403", "review 422") for _, outcome, _ in answers), answers
    assert ("/validate-v1-pod", "review 403") in {(path, outcome) for path, outcome, _ in answers}  # mode `Apply`
    patched = {path for path, _, response in answers if "patch" in response}
    assert patched == {pods.MUTATE_PATH, scheduling.MUTATE_PATH}  # the ready profile and the etcd policy applied
    reads = {path for _, path in served.api.requests}
    assert {
        "/apis/apps/v1/namespaces/shop/replicasets/web-7d9",
        "/apis/apps/v1/namespaces/shop/deployments/web",
    } <= reads
    served.read_cleanly()


def _owned_pod(*references: JSON, labels: dict[str, str] | None = None) -> Case:
    obj = pod("apply", owners=list(references), labels=labels)
    return Case(pods.MUTATE_PATH, encode(review(_request(obj, ("", "v1", "Pod"), "pods", namespace=NAMESPACE))))


@pytest.mark.parametrize(
    ("case", "message"),
    [
        # An ownerReference's name is a path segment, not a path: `..` pointed the owner read at any object of
        # the cluster (a Secret, with the operator's credentials), `?` turned it into a LIST of every pod.
        (_owned_pod({"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True, "uid": "u1",
                     "name": "../../../../../../api/v1/namespaces/kube-system/secrets/ballast-webhook-cert"}),
         None),
        (_owned_pod({"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True, "uid": "u2",
                     "name": "../../../../../../api/v1/pods?"}), None),
        (_owned_pod({"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True, "uid": "u3",
                     "name": "web?labelSelector=x"}), None),
        # Nor is its apiVersion: `apps/../../api/v1` mapped the core kinds under a made-up group leading back there.
        (_owned_pod({"apiVersion": "apps/../../api/v1", "kind": "Secret", "controller": True, "uid": "u4",
                     "name": "ballast-webhook-cert"}), None),
        # Invalid pods (the API server refuses them after admission) are admitted unchanged without a traceback.
        (_owned_pod({"apiVersion": "apps/v1", "name": "web-7d9", "controller": True, "uid": "u5"}),
         pods.POLICY_NOT_AVAILABLE),
        (_owned_pod(labels={"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "."}),
         pods.PROFILE_NOT_AVAILABLE),
    ],
    ids=["name-traversal", "name-list", "name-query", "apiversion-traversal", "reference-without-kind", "label-dot"],
)  # fmt: skip
def test_what_the_fuzz_found_stays_fixed(served: Served, case: Case, message: str | None) -> None:
    """Each is answered (`message`; None: the chain ends at the ReplicaSet, the `default` policy's profile is
    applied) with nothing read but the handlers' own objects and no traceback logged."""
    served.read_cleanly()
    outcome, response = served.exchange("regressions", case)
    assert (outcome, response["status"].get("message"), "patch" in response) == ("review 200", message, not message)
    served.read_cleanly()


# ------------------------------------------------------------------------------------------------ strategies

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=24),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=24,
)
odd_values = st.sampled_from(
    [
        "",
        "abc",
        "-1",
        "0",
        "1e400",
        "9" * 40,
        "-100m",
        "1Ei",
        "999999999999Pi",
        "/(/",
        "Apply",
        "apply ",
        "\x00",
        "ünïcode",
        "..",
        ".",
        "a/b",
        "x?limit=1",
        "x#y",
        "%2e%2e",
        "../../../../../../api/v1/pods",
        "../../../../../../api/v1/namespaces/kube-system/secrets/ballast-webhook-cert",
        "apps/../../api/v1",
        0,
        -1,
        2**63,
        -(2**63) - 1,
        2**64,
        1.5,
        -0.0,
        True,
        False,
        None,
        [],
        {},
        [None],
        {"": None},
    ]
).map(copy.deepcopy)  # fmt: skip (a fresh copy each time: an object placed twice must not become a cycle)
paths = st.sampled_from(PATHS)
seed_requests = st.sampled_from([(path, seed) for path, seeds in SEEDS.items() for seed in seeds])


def _locations(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _locations(child, (*at, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _locations(child, (*at, index))


def _parent(document: Any, at: tuple[Any, ...]) -> Any:
    for step in at[:-1]:
        document = document[step]
    return document


@st.composite
def mutated(draw: st.DrawFn, document: JSON) -> JSON:
    """`document` with one to four places replaced (by odd or random JSON), deleted, or given an extra member."""
    result: JSON = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.sampled_from([location for location in _locations(result) if location]))
        action = draw(st.sampled_from(["replace", "replace", "delete", "extend"]))
        parent, step = _parent(result, at), at[-1]
        if action == "replace":
            parent[step] = draw(odd_values | json_values)
        elif action == "delete":
            del parent[step]
        elif isinstance(parent[step], dict):
            parent[step][draw(st.text(max_size=12))] = draw(odd_values | json_values)
        elif isinstance(parent[step], list):
            parent[step].append(draw(odd_values | json_values))
    return result


content_types = st.sampled_from(
    [None, "", "text/plain", "application/yaml", "application/json-patch+json", "application/jsonx",
     "application/json; charset=utf-8", " application/json ", "Application/JSON", "application/json;;;",
     "multipart/form-data; boundary=x", "application/vnd.kubernetes.protobuf"]
) | st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)  # fmt: skip


@st.composite
def garbage(draw: st.DrawFn) -> Case:
    """Any of the shapes below, for the concurrent test."""
    case: Case = draw(
        st.one_of(
            st.builds(Case, paths, st.binary(max_size=600)),
            st.builds(Case, paths, json_values.map(encode)),
            truncated(),
            envelopes(),
            object_mutations(),
            st.builds(Case, paths, seed_requests.map(lambda s: encode(review(s[1]))), content_types),
        )
    )
    return case


@st.composite
def truncated(draw: st.DrawFn) -> Case:
    path, seed = draw(seed_requests)
    body = encode(review(seed))
    return Case(path, body[: draw(st.integers(0, len(body) - 1))])


@st.composite
def envelopes(draw: st.DrawFn) -> Case:
    """Reviews whose apiVersion, kind, request, uid, object or oldObject are wrong, null, missing or odd."""
    path, seed = draw(seed_requests)
    request: Any = copy.deepcopy(seed)
    document: Any = review(request, draw(st.sampled_from(SUPPORTED_VERSIONS)))
    versions = st.sampled_from(["admission.k8s.io/v2", "admission.k8s.io/v1alpha1", "v1", "", "admission.k8s.io"])
    kinds = st.sampled_from(["AdmissionRequest", "admissionreview", "Pod", "", "AdmissionReviewList"])
    for change in draw(st.lists(st.sampled_from(range(9)), min_size=1, max_size=3, unique=True)):
        match change:
            case 0:
                document["apiVersion"] = draw(versions | odd_values | json_values)
            case 1:
                document["kind"] = draw(kinds | odd_values | json_values)
            case 2:
                document["request"] = draw(st.sampled_from([None, [], "", 0, {}]) | json_values)
            case 3:
                document.pop(draw(st.sampled_from(["apiVersion", "kind", "request"])), None)
            case 4 if isinstance(document.get("request"), dict):
                document["request"]["uid"] = draw(odd_values | json_values)
            case 5 if isinstance(document.get("request"), dict):
                document["request"]["object"] = draw(st.sampled_from([None, [], "", 0, {}]) | json_values)
            case 6 if isinstance(document.get("request"), dict):
                document["request"]["oldObject"] = draw(st.sampled_from([None, [], {}]) | json_values)
            case 7 if isinstance(document.get("request"), dict):
                document["request"].pop(draw(st.sampled_from(sorted(seed))), None)
            case 8:
                document["response"] = draw(json_values)
            case _:
                pass
    return Case(path, encode(document))


@st.composite
def request_fields(draw: st.DrawFn) -> Case:
    """A valid envelope whose request fields (kind, resource, operation, names, userInfo, options…) are odd."""
    path, seed = draw(seed_requests)
    request = copy.deepcopy(seed)
    keys = ["kind", "resource", "requestKind", "operation", "name", "namespace", "subResource", "dryRun", "userInfo",
            "options"]  # fmt: skip
    for key in draw(st.lists(st.sampled_from(keys), min_size=1, max_size=4, unique=True)):
        request[key] = draw(odd_values | json_values | st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT"]))
    return Case(path, encode(review(request)))


@st.composite
def object_mutations(draw: st.DrawFn) -> Case:
    """A seed whose object (or oldObject) has a few fields gone wrong: the handlers' own decoding."""
    path, seed = draw(seed_requests)
    request = copy.deepcopy(seed)
    key = "oldObject" if request.get("oldObject") is not None and draw(st.booleans()) else "object"
    request[key] = draw(mutated(request[key]))
    if draw(st.booleans()):
        request = {**request, "uid": draw(st.text(min_size=1, max_size=40))}  # any uid is echoed
    return Case(path, encode(review(request, draw(st.sampled_from(SUPPORTED_VERSIONS)))))


# ------------------------------------------------------------------------------------------------ the fuzz


def fuzz(served: Served, test: str, cases: st.SearchStrategy[Case], examples: int) -> None:
    """Send `examples` cases drawn from `cases`, then a well-formed review."""

    @settings(max_examples=examples, deadline=None, database=None)
    @given(cases)
    def property_(case: Case) -> None:
        served.send(test, case)

    property_()
    served.still_answers()


def test_random_bytes_are_refused_with_a_review(served: Served) -> None:
    fuzz(served, "random bytes", st.builds(Case, paths, st.binary(max_size=2000)), 150)


def test_random_json_and_non_object_json_are_refused_with_a_review(served: Served) -> None:
    fuzz(served, "random JSON", st.builds(Case, paths, json_values.map(encode)), 150)


def test_truncated_reviews_are_refused_with_a_review(served: Served) -> None:
    fuzz(served, "truncated", truncated(), 150)


def test_wrong_versions_kinds_and_null_requests_or_objects(served: Served) -> None:
    fuzz(served, "envelopes", envelopes(), 250)


def test_odd_request_fields_are_decided_or_refused(served: Served) -> None:
    fuzz(served, "request fields", request_fields(), 200)


def test_objects_with_fields_gone_wrong_are_decided_or_refused(served: Served) -> None:
    fuzz(served, "objects", object_mutations(), 500)


def test_wrong_content_types_are_refused_with_a_review(served: Served) -> None:
    valid = seed_requests.map(lambda s: encode(review(s[1])))
    fuzz(served, "content types", st.builds(Case, paths, valid, content_types), 100)


def test_wrong_methods_and_paths_are_http_4xx(served: Served) -> None:
    methods = st.sampled_from(["GET", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"])
    segment = st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="/?#%")  # urllib3 keeps it
    named = st.sampled_from(
        ["/", "/mutate", "/mutate-v1-pod/", "/validate-v1-pod/x", "/MUTATE-V1-POD", "/metrics", "/healthz"]
    )
    other_paths = named | st.text(segment, max_size=30).map(lambda text: "/x" + text)
    body = seed_requests.map(lambda s: encode(review(s[1])))
    cases = st.builds(Case, paths, body, method=methods) | st.builds(Case, other_paths, body)
    fuzz(served, "methods and paths", cases, 80)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_10_mb_object_is_refused_413_and_the_connection_recovers(served: Served, chunked: bool) -> None:
    obj = pod("apply", annotations={"big": "x" * (10 * 1024 * 1024)})
    body = encode(review(_request(obj, ("", "v1", "Pod"), "pods", namespace=NAMESPACE)))
    assert len(body) > 10 * 1024 * 1024
    pool = served.new_pool()
    sent: Any = iter([body[i : i + 65536] for i in range(0, len(body), 65536)]) if chunked else body
    answer = pool.request("POST", served.base + pods.MUTATE_PATH, body=sent,
                          headers={"Content-Type": "application/json"}, chunked=chunked)  # fmt: skip
    assert check(Case(pods.MUTATE_PATH, body), answer.status, answer.data) == "review 413 (refused unread)"
    TALLY.count("10 MB object", "review 413 (refused unread)")
    assert answer.headers.get("Connection") == "close"  # the rest of an oversize body is not read
    served.still_answers()


def test_non_http_bytes_over_tls_get_a_400_and_a_close(served: Served) -> None:
    context = ssl.create_default_context(cadata=served.ca.cert_pem.decode())
    for garbage_line in (b"\x16\x03\x01garbage\r\n\r\n", b"POST /mutate-v1-pod HTTP/9.9\r\n\r\n",
                         b"POST /mutate-v1-pod HTTP/1.1\r\nContent-Length: -5\r\n\r\n"):  # fmt: skip
        with (
            socket.create_connection(("127.0.0.1", served.port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            tls.sendall(garbage_line)
            answer = _read_to_eof(tls)
        assert answer.startswith(b"HTTP/1.1 400 "), answer
        assert b"Connection: close" in answer
        TALLY.count("non-HTTP over TLS", "http 400")
    served.still_answers()


def _read_to_eof(sock: ssl.SSLSocket) -> bytes:
    chunks = []
    with contextlib.suppress(ConnectionResetError):  # closed right after the answer: what was read stands
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


THREADS = 4


def test_concurrent_garbage_from_several_threads(served: Served) -> None:
    """Every shape above from four threads at once, each on its own connections."""
    pools = [served.new_pool() for _ in range(THREADS)]

    @settings(max_examples=10, deadline=None, database=None)
    @given(st.lists(garbage(), min_size=THREADS * 6, max_size=THREADS * 6))
    def property_(cases: list[Case]) -> None:
        failures: list[BaseException] = []
        threads = [threading.Thread(target=_send_all, args=(served, pools[n], cases[n::THREADS], failures))
                   for n in range(THREADS)]  # fmt: skip
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert not any(thread.is_alive() for thread in threads), "a client thread is stuck"
        assert failures == []

    property_()
    served.still_answers()


def _send_all(served: Served, pool: urllib3.PoolManager, cases: list[Case], failures: list[BaseException]) -> None:
    for case in cases:
        try:
            served.send("concurrent", case, pool)
        except BaseException as exc:  # reported by the test thread, with the case that caused it
            failures.append(exc)
            return
