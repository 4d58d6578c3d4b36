"""Bad input through the real API server, with the operator running under its RBAC.

- Pods fuzzed with hypothesis (mode label variants, absurd or malformed quantities, up to 200 containers,
  missing resources), created with `dryRun=All`: the API server answers each with the created pod, its own
  4xx refusal, or the webhook's 403 naming the mode label — never a webhook error (`failed calling webhook`,
  an InternalError) — and the operator stays ready with no traceback in its log.
- A kill-switch ConfigMap full of garbage: the switch is on (it is existence only), and off again once deleted.

The raw AdmissionReview fuzz suite, which sends what the API server never would, is tests/unit/webhook/.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballast.internal.enrollment import KILL_SWITCH_CONFIGMAP, MODE_LABEL
from ballast.internal.runtime.envtest import MiniCluster
from ballast.internal.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.support import OPERATOR_NAMESPACE, PAUSE_IMAGE, Operator, admin_pool, create_namespace

MODES = ["measure", "apply", "resize", "Resize", "APPLY", "", "bogus", "apply-", "apply ", "m" * 64]
QUANTITIES = ["1", "100m", "0", "1e3", "999999999", "1Ei", "8Ei", "0.0001", "1Ki", "1.5Gi", "123456789012345678",
              "abc", "-1", "1m", "0.5", "+2", ".5Mi"]  # fmt: skip
WEBHOOK_ERRORS = ("failed calling webhook", "InternalError", "Internal error", "Traceback")

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
pods = st.builds(
    lambda mode, listed, identity: {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "fuzz-", "labels": {MODE_LABEL: mode, **identity}},
        "spec": {"containers": [{**c, "name": f"c{i}"} for i, c in enumerate(listed)]},
    },
    st.sampled_from(MODES),
    containers,
    st.sampled_from([{}, {"app.kubernetes.io/name": "fuzz"}, {"app.kubernetes.io/name": "fuzz",
                                                             "app.kubernetes.io/component": "api"}]),
)  # fmt: skip


def test_fuzzed_pods_get_the_api_servers_answer_never_a_webhook_error(cluster: MiniCluster, operator: Operator) -> None:
    namespace = create_namespace(cluster, "bad-input")
    http = admin_pool(cluster.env)
    url = f"{cluster.env.server}/api/v1/namespaces/{namespace}/pods?dryRun=All"
    log_offset = len(operator.process.log_path.read_bytes())
    statuses: Counter[int] = Counter()
    bad: list[str] = []

    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(pods)
    def admitted_or_refused_by_the_api_server(pod: dict[str, Any]) -> None:
        answer = http.request("POST", url, body=orjson.dumps(pod), headers={"Content-Type": "application/json"})
        statuses[answer.status] += 1
        text = answer.data.decode(errors="replace")
        clear_refusal = answer.status == 403 and MODE_LABEL in text  # the webhook naming the bad label
        if (answer.status not in (201, 400, 422) and not clear_refusal) or any(e in text for e in WEBHOOK_ERRORS):
            bad.append(f"{answer.status} {text[:400]}")

    admitted_or_refused_by_the_api_server()
    operator.process.wait_ready(timeout=10)
    log = operator.process.log_path.read_bytes()[log_offset:].decode(errors="replace")
    assert bad == [], bad[:5]
    assert "Traceback" not in log, log[-3000:]
    assert statuses[201] > 0  # the valid ones were admitted (and mutated where enrolled), not all refused
    assert statuses[422] > 0  # the API server's own validation refused the malformed ones
    assert statuses[403] > 0  # and the webhook refused the mode values it does not know
    record("object_fuzz", {"cases": sum(statuses.values()), "webhook_errors": len(bad),
                           "by_status": {str(k): v for k, v in sorted(statuses.items())}})  # fmt: skip


def test_a_kill_switch_configmap_of_garbage_turns_the_switch_on_and_nothing_crashes(
    cluster: MiniCluster, operator: Operator
) -> None:
    env = cluster.env
    path = f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/configmaps"
    garbage = {"enabled": "maybe", "reason": "\u2603" * 2000, "0": "{not json", "x.y-z_": ""}
    env.rest.create(path, {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": KILL_SWITCH_CONFIGMAP}, "data": garbage,
                           "binaryData": {"blob": "AAECAwQF/w=="}})  # fmt: skip
    try:
        poll_until(lambda: operator.process.metric("ballast_kill_switch_active") == 1, timeout=30,
                   what="the kill switch on")  # fmt: skip
    finally:
        env.rest.delete(f"{path}/{KILL_SWITCH_CONFIGMAP}")
    poll_until(lambda: operator.process.metric("ballast_kill_switch_active") == 0, timeout=30,
               what="the kill switch off again")  # fmt: skip
    operator.process.wait_ready(timeout=10)
    assert "Traceback" not in operator.output()
