"""Bad input through the real API server, with the operator running under its RBAC.

- Pods fuzzed with hypothesis (mode label variants, absurd or malformed quantities, up to 200 containers, a
  sidecar, missing images and resources), each created with `dryRun=All`: the API server answers each with
  the created pod, its own 4xx refusal, or the webhook's 403 naming the mode label — never a webhook error
  (`failed calling webhook`, an InternalError, a 5xx); every second accepted one is created for real, accepted
  again and read back (nothing lost); the operator stays up (no restart) and ready, with no traceback in its log.
- Malformed policies and configuration (an invalid regex, an unknown aggregation, headroom "abc", negative
  thresholds, an unknown field, a BallastConfig without identity labels, a MetricsSource with a bad
  pollInterval): each is refused by the API server naming the field; a policy that slipped through while the
  operator was down (its webhook is `failurePolicy: Ignore`) gets `Valid=False` naming the field once it is
  back; meanwhile a good policy keeps `Valid=True`, the enrolled pods keep their profile, the stored
  configuration is unchanged and the profile's stored samples never drop.
- A kill-switch ConfigMap full of garbage: the switch is on (it is existence only) — an enrolled `apply` pod
  the webhook sizes is admitted unchanged — and once it is deleted the same pod is sized again.

The raw AdmissionReview fuzz suite, which sends what the API server never would, is tests/unit/webhook/.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any, NamedTuple

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ballast.internal.enrollment import APPLIED_PREFIX, KILL_SWITCH_CONFIGMAP, MODE_LABEL, PROFILE_REF
from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.support import (
    OPERATOR_NAMESPACE,
    PAUSE_IMAGE,
    Operator,
    admin_pool,
    create_namespace,
    deployment,
    running_pods,
)

GROUP_PATH = "/apis/ballast.tightlinesoftware.com/v1"
MODES = ["measure", "apply", "resize"] * 3 + ["Resize", "APPLY", "", "bogus", "apply-", "apply ", "m" * 64]
QUANTITIES = ["1", "100m", "0", "1e3", "999999999", "1Ei", "8Ei", "0.0001", "1Ki", "1.5Gi", "123456789012345678",
              "abc", "-1", "1m", "0.5", "+2", ".5Mi", "1E", "1e-3", "0x10", "9223372036854775807",
              "18446744073709551616", "1.000000001", "5 Gi"]  # fmt: skip
WEBHOOK_ERRORS = ("failed calling webhook", "InternalError", "Internal error", "Traceback")
FUZZ_IDENTITY = {"app.kubernetes.io/name": "fuzz", "app.kubernetes.io/component": "api"}
REAL_EVERY = 2
"""Every fuzzed pod is sent as a dry run; every second one the API server accepts is then created for real
(read back and deleted)."""

resources = st.fixed_dictionaries(
    {},
    optional={
        "requests": st.dictionaries(
            st.sampled_from(["cpu", "memory", "ephemeral-storage"]), st.sampled_from(QUANTITIES)
        ),
        "limits": st.dictionaries(st.sampled_from(["cpu", "memory"]), st.sampled_from(QUANTITIES)),
    },
)
containers = st.lists(
    st.builds(lambda r: {"image": PAUSE_IMAGE, "resources": r}, st.one_of(resources, st.just({}))),
    min_size=1, max_size=200,
)  # fmt: skip
sidecars = st.lists(st.builds(lambda r: {"image": PAUSE_IMAGE, "restartPolicy": "Always", "resources": r}, resources),
                    max_size=2)  # fmt: skip


def _pod(mode: str, listed: list[dict[str, Any]], init: list[dict[str, Any]], identity: dict[str, str],
         missing: str | None) -> dict[str, Any]:  # fmt: skip
    spec: dict[str, Any] = {"containers": [{**c, "name": f"c{i}"} for i, c in enumerate(listed)]}
    if init:
        spec["initContainers"] = [{**c, "name": f"init{i}"} for i, c in enumerate(init)]
    if missing == "image":
        del spec["containers"][0]["image"]
    elif missing == "resources":
        spec["containers"][0].pop("resources")
    elif missing == "containers":
        del spec["containers"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "fuzz-",
            "labels": {MODE_LABEL: mode, **identity}}, "spec": spec}  # fmt: skip


pods = st.builds(
    _pod,
    st.sampled_from(MODES),
    containers,
    sidecars,
    st.sampled_from([{}, {"app.kubernetes.io/name": "fuzz"}, {"app.kubernetes.io/name": "fuzz",
                                                             "app.kubernetes.io/component": "api"}]),
    st.sampled_from([None, None, None, None, "image", "resources", "containers"]),
)  # fmt: skip


def test_fuzzed_pods_get_the_api_servers_answer_never_a_webhook_error(cluster: MiniCluster, operator: Operator) -> None:
    namespace = create_namespace(cluster, "bad-input")
    http = admin_pool(cluster.env)
    pods_url = f"{cluster.env.server}/api/v1/namespaces/{namespace}/pods"
    runs, pid = len(operator.runs), operator.process.process.pid
    log_offset = len(operator.process.log_path.read_bytes())
    statuses: Counter[int] = Counter()
    bad: list[str] = []
    accepted = itertools.count()
    real: Counter[str] = Counter()
    first: dict[int, str] = {}  # the first answer of each status, for a failure's message

    def send(method: str, url: str, body: dict[str, Any] | None = None) -> tuple[int, str]:
        payload = orjson.dumps(body) if body is not None else None
        answer = http.request(method, url, body=payload, headers={"Content-Type": "application/json"})
        return answer.status, answer.data.decode(errors="replace")

    @settings(max_examples=150, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(pods)
    @example(_pod("apply", [{"image": PAUSE_IMAGE}], [], FUZZ_IDENTITY, None))  # created (and sized if it can be)
    @example(_pod("measure", [{"image": PAUSE_IMAGE}], [], FUZZ_IDENTITY, "image"))  # the API server's 422
    @example(_pod("Resize", [{"image": PAUSE_IMAGE}], [], FUZZ_IDENTITY, None))  # the webhook's 403
    @example(_pod("apply", [{"image": PAUSE_IMAGE, "resources": {"requests": {"cpu": "abc"}}}], [], {}, None))
    def admitted_or_refused_by_the_api_server(pod: dict[str, Any]) -> None:
        status, text = send("POST", f"{pods_url}?dryRun=All", pod)
        statuses[status] += 1
        first.setdefault(status, text[:300])
        clear_refusal = status == 403 and MODE_LABEL in text  # the webhook naming the bad label
        if (status not in (201, 400, 422) and not clear_refusal) or any(e in text for e in WEBHOOK_ERRORS):
            bad.append(f"{status} {text[:400]}")
        if status != 201 or next(accepted) % REAL_EVERY:
            return
        # For real: the same answer, the pod in etcd as created (read back), then deleted.
        real_status, real_text = send("POST", pods_url, pod)
        if real_status != 201:
            bad.append(f"dry run 201, for real {real_status} {real_text[:400]}")
            return
        created = orjson.loads(real_text)["metadata"]
        read_status, read = send("GET", f"{pods_url}/{created['name']}")
        if read_status != 200 or orjson.loads(read)["metadata"]["uid"] != created["uid"]:
            bad.append(f"created pod {created['name']} not read back: {read_status} {read[:200]}")
        real["created"] += 1
        send("DELETE", f"{pods_url}/{created['name']}", {"gracePeriodSeconds": 0})

    admitted_or_refused_by_the_api_server()
    operator.process.wait_ready(timeout=10)
    restarts = len(operator.runs) - runs + (operator.process.process.pid != pid)
    log = operator.process.log_path.read_bytes()[log_offset:].decode(errors="replace")
    assert bad == [], bad[:5]
    assert restarts == 0
    assert "Traceback" not in log, log[-3000:]
    assert statuses[201] > 0, first  # the valid ones were admitted (and mutated where enrolled), not all refused
    assert statuses[422] > 0, first  # the API server's own validation refused the malformed ones
    assert statuses[403] > 0, first  # and the webhook refused the mode values it does not know
    assert real["created"] > 0  # some went all the way into etcd (and were read back)
    poll_until(lambda: not cluster.env.rest.get(f"/api/v1/namespaces/{namespace}/pods")["items"], timeout=60,
               what="the fuzzed pods deleted")  # fmt: skip
    record("object_fuzz", {"cases": sum(statuses.values()), "created_for_real": real["created"],
                           "webhook_errors": len(bad), "operator_restarts": restarts,
                           "by_status": {str(k): v for k, v in sorted(statuses.items())}})  # fmt: skip


# ----------------------------------------------------------------------------------- a measured workload

STEADY = {"app.kubernetes.io/name": "steady", "app.kubernetes.io/component": "api"}
PROFILE = "steady--api--default-a9696153"
REQUESTS = {"cpu": "1", "memory": "512Mi"}
USAGE = {usage_annotation("cpu", "app"): "200m", usage_annotation("memory", "app"): "100Mi"}


def profile_status(cluster: MiniCluster) -> dict[str, Any]:
    try:
        return dict(cluster.env.rest.get(f"{GROUP_PATH}/workloadprofiles/{PROFILE}").get("status") or {})
    except APIError:
        return {}


def samples(cluster: MiniCluster) -> int:
    """The profile's stored cpu sample count, as the operator last wrote it."""
    containers = profile_status(cluster).get("containers") or []
    for stats in itertools.chain.from_iterable(c.get("usageStats") or [] for c in containers):
        if stats.get("resource") == "cpu":
            return int(stats.get("samples") or 0)
    return 0


@pytest.fixture(scope="module")
def steady(cluster: MiniCluster, operator: Operator) -> Iterator[str]:
    """A measured Deployment whose profile is Sufficient (from metrics-server's samples); yields its namespace."""
    namespace = create_namespace(cluster, "bad-input-steady")
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    body = deployment("steady", replicas=1, cpu=REQUESTS["cpu"], memory=REQUESTS["memory"],
                      labels={**STEADY, MODE_LABEL: "measure"}, annotations=USAGE)  # fmt: skip
    cluster.env.rest.create(path, body)
    poll_until(lambda: profile_status(cluster).get("state") == "Sufficient", timeout=240, interval=2.0,
               what="a Sufficient profile for the steady workload", last_error=operator.output)  # fmt: skip
    yield namespace
    cluster.env.rest.delete(f"{path}/steady")


def apply_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "probe-", "labels": {**STEADY, MODE_LABEL: "apply"}},
        "spec": {"containers": [{"name": "app", "image": PAUSE_IMAGE, "resources": {"requests": REQUESTS}}]},
    }


def admitted(cluster: MiniCluster, namespace: str) -> dict[str, Any]:
    """The `apply` pod as the API server would create it (a dry run)."""
    path = f"/api/v1/namespaces/{namespace}/pods"
    answer: dict[str, Any] = cluster.env.rest.request("POST", path, apply_pod(), params={"dryRun": "All"})
    return answer


def sized(pod: dict[str, Any]) -> bool:
    """Whether the webhook wrote the profile's recommendations into the pod."""
    applied = [key for key in pod["metadata"].get("annotations") or {} if key.startswith(APPLIED_PREFIX)]
    return bool(applied) and pod["spec"]["containers"][0]["resources"]["requests"] != REQUESTS


# ------------------------------------------------------------------------------------- malformed policies


METRIC = {"resource": "cpu", "field": "request", "source": "kubernetes-metrics", "aggregation": "avg",
          "headroom": "1.25"}  # fmt: skip


def policy(name: str, **spec: Any) -> dict[str, Any]:
    """A ClusterResourcePolicy that, were it used, would take every pod from `default` (priority 100)."""
    return {
        "apiVersion": "ballast.tightlinesoftware.com/v1",
        "kind": "ClusterResourcePolicy",
        "metadata": {"name": name},
        "spec": {
            "priority": 100,
            "metrics": [METRIC],
            **spec,
        },
    }


class Refusal(NamedTuple):
    name: str
    method: str
    path: str
    body: dict[str, Any]
    params: dict[str, str]
    field: str
    """What the refusal's message must name (the field, with the API server's or the webhook's words)."""


def _refusals(cluster: MiniCluster, namespace: str) -> list[Refusal]:
    env, crp = cluster.env, f"{GROUP_PATH}/clusterresourcepolicies"
    config = env.rest.get(f"{GROUP_PATH}/ballastconfigs/ballast")
    no_identity = {**config, "spec": {k: v for k, v in config["spec"].items() if k != "identityLabels"}}
    source = {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "MetricsSource",
              "metadata": {"name": "bad-poll"}, "spec": {"type": "kubernetesMetrics", "config": {}}}  # fmt: skip
    local = {**policy("bad-local"), "kind": "ResourcePolicy",
             "metadata": {"name": "bad-local", "namespace": namespace}}  # fmt: skip
    local["spec"]["selector"] = {"labelSelector": {"matchExpressions": [{"key": "tier", "operator": "Bogus"}]}}
    metric = METRIC
    return [
        Refusal("invalid regex", "POST", crp, policy("bad-regex", selector={"namespaces": {"include": ["/(/"]}}),
                {}, 'spec.selector.namespaces.include[0]: invalid regex "/(/"'),
        Refusal("invalid selector operator", "POST", f"{GROUP_PATH}/namespaces/{namespace}/resourcepolicies", local,
                {}, "spec.selector.labelSelector.matchExpressions[0]"),
        Refusal("unknown aggregation", "POST", crp, policy("bad-aggregation", metrics=[{**metric, "aggregation":
                "p42"}]), {}, 'spec.metrics[0].aggregation: Unsupported value: "p42"'),
        Refusal("headroom abc", "POST", crp, policy("bad-headroom", metrics=[{**metric, "headroom": "abc"}]), {},
                'spec.metrics[0].headroom: Invalid value: "abc"'),
        Refusal("headroom out of range", "POST", crp, policy("bad-headroom-range", metrics=[{**metric,
                "headroom": "150"}]), {}, 'spec.metrics[0].headroom: invalid headroom "150"'),
        Refusal("negative threshold", "POST", crp, policy("bad-threshold", behaviors={"thresholds": {"resize": {
                "resourceThresholds": {"cpu": {"request": "-5%"}}}}}), {},
                "resourceThresholds"),
        Refusal("negative minDataPoints", "POST", crp, policy("bad-points", readiness={"minDataPoints": -3}), {},
                "spec.readiness.minDataPoints: Invalid value: -3"),
        Refusal("unknown field", "POST", crp, policy("bad-field", bogusField=True), {"fieldValidation": "Strict"},
                'unknown field "spec.bogusField"'),
        Refusal("BallastConfig without identity labels", "PUT", f"{GROUP_PATH}/ballastconfigs/ballast",
                no_identity, {}, "spec.identityLabels: Required value"),
        Refusal("BallastConfig with no identity label", "POST", f"{GROUP_PATH}/ballastconfigs",
                {**no_identity, "metadata": {"name": "bad-empty"}, "spec": {"identityLabels": []}}, {},
                "spec.identityLabels: Invalid value"),
        Refusal("pollInterval banana", "POST", f"{GROUP_PATH}/metricssources",
                {**source, "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "banana"}}}, {},
                'spec.config.pollInterval: Invalid value: "banana"'),
        Refusal("pollInterval 0s", "POST", f"{GROUP_PATH}/metricssources",
                {**source, "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "0s"}}}, {},
                "spec.config.pollInterval: Invalid value"),
    ]  # fmt: skip


def valid_condition(cluster: MiniCluster, path: str) -> dict[str, Any] | None:
    conditions = cluster.env.rest.get(path).get("status", {}).get("conditions") or []
    found: dict[str, Any] | None = {c["type"]: c for c in conditions}.get("Valid")
    return found


def wait_valid(cluster: MiniCluster, path: str, status: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        condition = valid_condition(cluster, path)
        return condition if condition is not None and condition["status"] == status else None

    return poll_until(reached, timeout=30, what=f"{path} Valid={status}")


def test_malformed_policies_are_refused_naming_the_field_and_nothing_else_changes(
    cluster: MiniCluster, operator: Operator, steady: str
) -> None:
    env = cluster.env
    crp = f"{GROUP_PATH}/clusterresourcepolicies"
    good = f"{crp}/bad-input-good"
    env.rest.create(crp, policy("bad-input-good", priority=-100, selector={"namespaces": {"include": ["nowhere"]}}))
    slipped = f"{crp}/bad-input-slipped"
    try:
        good_valid = wait_valid(cluster, good, "True")
        stored = {path: env.rest.get(path) for path in (f"{GROUP_PATH}/ballastconfigs/ballast",
                  f"{GROUP_PATH}/metricssources/kubernetes-metrics", f"{crp}/default")}  # fmt: skip
        profile_refs = {p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get(PROFILE_REF)
                        for p in running_pods(cluster, steady, "app=steady")}  # fmt: skip
        assert set(profile_refs.values()) == {PROFILE}
        seen = [samples(cluster)]
        assert seen[0] > 0

        refused: dict[str, str] = {}
        for case in _refusals(cluster, steady):
            with pytest.raises(APIError) as error:
                env.rest.request(case.method, case.path, case.body, params=case.params or None)
            assert 400 <= error.value.status < 500, (case.name, error.value)
            assert case.field in error.value.message, (case.name, error.value.message)
            assert not any(e in error.value.message for e in WEBHOOK_ERRORS), (case.name, error.value.message)
            refused[case.name] = f"{error.value.status} {error.value.message}"
            seen.append(samples(cluster))

        # Without `fieldValidation=Strict` the unknown field is dropped, and the API server's warning names it.
        answer = admin_pool(env).request("POST", f"{env.server}{crp}", body=orjson.dumps(policy("warned",
            bogusField=True, priority=-100, selector={"namespaces": {"include": ["nowhere"]}})),
            headers={"Content-Type": "application/json"})  # fmt: skip
        assert answer.status == 201, answer.data[:400]
        warning = answer.headers.get("Warning") or ""
        assert 'unknown field \\"spec.bogusField\\"' in warning  # a quoted-string header value
        assert "bogusField" not in env.rest.get(f"{crp}/warned")["spec"]
        env.rest.delete(f"{crp}/warned")

        # A bad regex the CRD schema cannot see slips through while the operator is down (the policy webhook is
        # failurePolicy Ignore); back up, the operator says which field, and does not use the policy.
        operator.stop()
        try:
            env.rest.create(crp, policy("bad-input-slipped", selector={"namespaces": {"include": ["/(/"]}}))
        finally:
            operator.start()
        flagged = wait_valid(cluster, slipped, "False")
        assert flagged["reason"] == "InvalidPolicy"
        assert flagged["message"].startswith('spec.selector.namespaces.include[0]: invalid regex "/(/"')

        # Everything else as it was: the good policy still Valid, the configuration unchanged, the pods still
        # under their profile, which is still Sufficient, its stored samples never fewer and growing again.
        before = max(seen)

        def grown() -> bool:
            seen.append(samples(cluster))
            return seen[-1] > before

        poll_until(grown, timeout=90, interval=1.0, what="collection going on after the restart",
                   last_error=operator.output)  # fmt: skip
        assert seen == sorted(seen), seen  # never dropped, across the refusals and the restart
        still = wait_valid(cluster, good, "True")
        assert still["lastTransitionTime"] == good_valid["lastTransitionTime"]  # Valid all along
        for path, was in stored.items():
            now = env.rest.get(path)
            assert (now["metadata"]["generation"], now["spec"]) == (was["metadata"]["generation"], was["spec"]), path
        assert wait_valid(cluster, f"{crp}/default", "True")
        assert {p["metadata"]["name"]: (p["metadata"].get("annotations") or {}).get(PROFILE_REF)
                for p in running_pods(cluster, steady, "app=steady")} == profile_refs  # fmt: skip
        assert profile_status(cluster).get("state") == "Sufficient"
        assert "Traceback" not in operator.output()
    finally:
        for path in (slipped, good):
            try:
                env.rest.delete(path)
            except APIError as exc:
                if exc.status != 404:
                    raise
    flagged_count = int(flagged["reason"] == "InvalidPolicy")
    lost = sum(max(0, earlier - later) for earlier, later in itertools.pairwise(seen))
    record("bad_policies", {"refused": len(refused), "flagged_after_slipping_through": flagged_count,
                            "samples_before": seen[0], "samples_after": seen[-1], "samples_lost": lost,
                            "cases": sorted(refused)})  # fmt: skip


# ------------------------------------------------------------------------------------------- kill switch


def test_a_kill_switch_configmap_of_garbage_turns_the_switch_on_and_nothing_crashes(
    cluster: MiniCluster, operator: Operator, steady: str
) -> None:
    env = cluster.env
    poll_until(lambda: sized(admitted(cluster, steady)), timeout=30, what="the apply pod sized")
    path = f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/configmaps"
    garbage = {"enabled": "maybe", "reason": "\u2603" * 2000, "0": "{not json", "x.y-z_": ""}
    started = time.monotonic()
    env.rest.create(path, {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": KILL_SWITCH_CONFIGMAP}, "data": garbage,
                           "binaryData": {"blob": "AAECAwQF/w=="}})  # fmt: skip
    try:
        poll_until(lambda: operator.process.metric("ballast_kill_switch_active") == 1, timeout=30,
                   what="the kill switch on")  # fmt: skip
        on_seconds = time.monotonic() - started
        unchanged = admitted(cluster, steady)
        sized_while_on = int(sized(unchanged))
        assert unchanged["spec"]["containers"][0]["resources"]["requests"] == REQUESTS
        assert not unchanged["metadata"].get("annotations")
        mislabelled = {**apply_pod(), "metadata": {"generateName": "probe-", "labels": {MODE_LABEL: "Apply"}}}
        made = env.rest.request("POST", f"/api/v1/namespaces/{steady}/pods", mislabelled, params={"dryRun": "All"})
        assert made["metadata"]["labels"][MODE_LABEL] == "Apply"  # even the webhook's refusals are off
    finally:
        env.rest.delete(f"{path}/{KILL_SWITCH_CONFIGMAP}")
    removed = time.monotonic()
    poll_until(lambda: operator.process.metric("ballast_kill_switch_active") == 0, timeout=30,
               what="the kill switch off again")  # fmt: skip
    poll_until(lambda: sized(admitted(cluster, steady)), timeout=30, what="the apply pod sized again")
    off_seconds = time.monotonic() - removed
    operator.process.wait_ready(timeout=10)
    assert "Traceback" not in operator.output()
    record("kill_switch_garbage", {"on_seconds": round(on_seconds, 2), "sizing_restored_seconds":
                                   round(off_seconds, 2), "sized_while_on": sized_while_on})  # fmt: skip
