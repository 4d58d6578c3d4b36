"""The operator end to end: `ballastd` running as a process against the real API server.

Pods in two namespaces share one profile; samples accrue from a metrics.k8s.io backend behind the real
aggregated API; the profile becomes Sufficient; a pod of the same app in a *third* namespace is admitted with
the recommended requests at its first CREATE; a `resize` pod converges in place in steps; bad input is refused
at write time; the kill switch, unenrollment and dry-run behave as documented.
"""

from __future__ import annotations

import contextlib
import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.enrollment import PROFILE_REF
from ballast.internal.manifests.webhooks import webhook_configurations
from ballast.runtime.envtest import APIError, Environment
from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.wait import poll_until
from tests.unit.internal.telemetry.receivers import Received, http_receiver

from .conftest import Ballastd, MetricsBackend, install_operator_objects, pod, remove_operator_objects

PROFILE = "checkout--api--default-a9696153"
PROFILES = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"


@pytest.fixture
def namespaces(envtest: Environment) -> Iterator[list[str]]:
    names = [f"shop-{uuid.uuid4().hex[:6]}" for _ in range(3)]
    for name in names:
        envtest.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield names
    for name in names:
        with contextlib.suppress(Exception):
            envtest.rest.delete(f"/api/v1/namespaces/{name}")


@pytest.fixture
def otlp() -> Iterator[tuple[str, Received]]:
    """An OTLP/HTTP receiver standing in for an OpenTelemetry collector."""
    with http_receiver() as served:
        yield served


@pytest.fixture
def operator(
    envtest: Environment, metrics_backend: MetricsBackend, tmp_path: Path, otlp: tuple[str, Received]
) -> Iterator[Ballastd]:
    install_operator_objects(envtest)
    cert_dir = envtest.webhook_cert_dir()
    webhook_port = suggest_port()
    process = Ballastd(
        envtest,
        tmp_path,
        [
            f"--store=sqlite:///{tmp_path / 'history.db'}",
            f"--webhook-bind-address=127.0.0.1:{webhook_port}",
            f"--webhook-cert-path={cert_dir}",
            f"--otel-metrics-endpoint={otlp[0]}",
            "--otel-metrics-protocol=http/protobuf",
            "--otel-metrics-interval=1s",
            "--otel-metrics-insecure",
        ],
    )
    try:
        process.wait_ready()
        configs = webhook_configurations(service_name="ballast-webhook", service_namespace="ballast-system")
        envtest.install_webhooks(configs, port=webhook_port, ca_bundle=envtest.ca.cert_pem)
        yield process
    finally:
        process.stop()
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            with contextlib.suppress(Exception):
                envtest.rest.delete(f"/apis/admissionregistration.k8s.io/v1/{kind}/ballast")
        remove_operator_objects(envtest)


def profile_status(env: Environment, name: str = PROFILE) -> dict[str, Any]:
    try:
        return dict(env.rest.get(f"{PROFILES}/{name}").get("status") or {})
    except APIError:
        return {}


def requests_of(env: Environment, namespace: str, name: str) -> dict[str, str]:
    return dict(
        env.rest.get(f"/api/v1/namespaces/{namespace}/pods/{name}")["spec"]["containers"][0]["resources"].get(
            "requests", {}
        )
    )


def create_pod(env: Environment, body: dict[str, Any]) -> dict[str, Any]:
    namespace = body["metadata"]["namespace"]
    created: dict[str, Any] = env.rest.create(f"/api/v1/namespaces/{namespace}/pods", body)
    return created


def wait_admitting(env: Environment, namespace: str) -> None:
    """The API server picks up new webhook configurations within moments; probe until a pod is mutated."""
    counter = iter(range(1000))

    def stamped() -> bool:
        body = pod(f"probe-{next(counter)}", namespace, "probe", "apply")
        made = create_pod(env, body)
        return "ballast.tightlinesoftware.com/policy-ref" in (made["metadata"].get("annotations") or {})

    poll_until(stamped, timeout=20, what="the pod webhook to answer")


def test_the_operator_end_to_end(
    envtest: Environment, operator: Ballastd, namespaces: list[str], otlp: tuple[str, Received]
) -> None:
    first, second, third = namespaces
    # Two namespaces, one identity: one profile counting both pods.
    create_pod(envtest, pod("checkout-0", first, "checkout", "apply"))
    create_pod(envtest, pod("checkout-0", second, "checkout", "apply"))
    poll_until(
        lambda: profile_status(envtest).get("activeWorkloads") == 2,
        timeout=30,
        what="activeWorkloads 2",
        last_error=operator.output,
    )

    # Samples accrue (230m, 100Mi) until the profile is Sufficient, with recommendations.
    poll_until(
        lambda: profile_status(envtest).get("state") == "Sufficient",
        timeout=60,
        what="a Sufficient profile",
        last_error=operator.output,
    )
    status = profile_status(envtest)
    (app,) = status["containers"]
    assert app["recommendations"]["cpu"]["request"] == "287m"  # avg 230m × 1.25, truncated as the Go operator does
    assert app["recommendations"]["memory"]["request"] == "100Mi"
    assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "True"

    # Cold start solved: the same app in a third namespace is sized at its very first CREATE.
    wait_admitting(envtest, third)
    created = create_pod(envtest, pod("checkout-new", third, "checkout", "apply"))
    assert created["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "287m", "memory": "100Mi"}
    annotations = created["metadata"]["annotations"]
    assert annotations["ballast.tightlinesoftware.com/applied-cpu-request"] == "287m"
    assert annotations["ballast.tightlinesoftware.com/policy-ref"] == "default"

    # A running pod switched to `resize` converges in place through pods/resize, in steps.
    # (Created in `measure`: a pod created in `resize` mode is already sized at admission.)
    create_pod(envtest, pod("checkout-resize", first, "checkout", "measure", cpu="1000m", memory="100Mi"))
    envtest.rest.request(
        "PATCH",
        f"/api/v1/namespaces/{first}/pods/checkout-resize",
        {"metadata": {"labels": {"ballast.tightlinesoftware.com/mode": "resize"}}},
        content_type="application/merge-patch+json",
    )
    seen: list[str] = []

    def converged() -> bool:
        cpu = requests_of(envtest, first, "checkout-resize")["cpu"]
        if not seen or seen[-1] != cpu:
            seen.append(cpu)
        return cpu == "287m"

    poll_until(converged, timeout=60, what="the resize pod to reach 287m", last_error=operator.output)
    # 50 % of the gap per step, truncated, snapping within 10 % (the API server writes 1000m as "1").
    assert seen == ["1", "643m", "465m", "376m", "331m", "287m"]

    # Bad input is refused at write time, with the Go operator's exact message.
    exact = 'invalid Ballast ballast.tightlinesoftware.com/mode label "Apply": must be one of measure, apply, resize'
    with pytest.raises(APIError, match=re.escape(exact)):
        create_pod(envtest, pod("bad-mode", first, "checkout", "Apply"))
    with pytest.raises(APIError, match=r"invalid Ballast .* label \"resizing\""):
        envtest.rest.request(
            "PATCH",
            f"/api/v1/namespaces/{first}/pods/checkout-0",
            {"metadata": {"labels": {"ballast.tightlinesoftware.com/mode": "resizing"}}},
            content_type="application/merge-patch+json",
        )
    with pytest.raises(APIError, match=r"spec\.selector\.namespaces\.include\[0\]"):
        envtest.rest.create(
            "/apis/ballast.tightlinesoftware.com/v1/clusterresourcepolicies",
            {
                "apiVersion": "ballast.tightlinesoftware.com/v1",
                "kind": "ClusterResourcePolicy",
                "metadata": {"name": "broken"},
                "spec": {"selector": {"namespaces": {"include": ["/(/"]}}},
            },
        )

    # Removing the mode label unenrolls: the count follows and the refs go.
    envtest.rest.request(
        "PATCH",
        f"/api/v1/namespaces/{second}/pods/checkout-0",
        {"metadata": {"labels": {"ballast.tightlinesoftware.com/mode": None}}},
        content_type="application/merge-patch+json",
    )
    poll_until(
        lambda: (
            PROFILE_REF
            not in (
                envtest.rest.get(f"/api/v1/namespaces/{second}/pods/checkout-0")["metadata"].get("annotations") or {}
            )
        ),
        timeout=30,
        what="the unenrolled pod's refs to go",
    )

    # The kill switch: admitted unmodified within seconds.
    envtest.rest.create(
        "/api/v1/namespaces/ballast-system/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ballast-kill-switch"}},
    )
    try:
        counter = iter(range(1000))

        def untouched() -> bool:
            made = create_pod(envtest, pod(f"during-kill-{next(counter)}", third, "checkout", "apply"))
            untouched = made["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1"  # 1000m as stored
            return untouched and "ballast.tightlinesoftware.com/policy-ref" not in (
                made["metadata"].get("annotations") or {}
            )

        poll_until(untouched, timeout=20, what="admission to stop mutating under the kill switch")
    finally:
        envtest.rest.delete("/api/v1/namespaces/ballast-system/configmaps/ballast-kill-switch")
    assert operator.metric("ballast_kill_switch_transitions_total", transition="activated") >= 1
    # The same metrics were pushed over OTLP under the Go operator's instrument names.
    pushed = otlp[1]
    poll_until(
        lambda: {"ballast.webhook.mutations", "ballast.samples.collected"} <= pushed.metric_names(),
        timeout=10,
        what="the OTLP push of the ballast.* instruments",
    )
    # And its logs, with their structured fields (--log-otel-enabled is on by default, as in the Go operator).
    poll_until(
        lambda: any(
            "controller" in {a.key for a in record.attributes}  # a reconciler's logger, with its fields
            for record in pushed.log_records()
        ),
        timeout=10,
        what="reconciler log records over OTLP",
    )


def test_dry_run_measure_makes_no_patches_and_no_resizes(
    envtest: Environment, metrics_backend: MetricsBackend, namespaces: list[str], tmp_path: Path
) -> None:
    install_operator_objects(envtest)
    first = namespaces[0]
    # A profile that is already Sufficient (as left by an earlier run) — written directly.
    process = Ballastd(
        envtest,
        tmp_path,
        [
            f"--store=sqlite:///{tmp_path / 'h.db'}",
            "--dry-run-measure",
            "--webhook-bind-address=127.0.0.1:0",
            f"--webhook-cert-path={envtest.webhook_cert_dir()}",
        ],
    )
    try:
        process.wait_ready()
        create_pod(envtest, pod("dry-0", first, "drycart", "resize", cpu="1000m"))
        name = "drycart--api--default-a9696153"
        poll_until(
            lambda: profile_status(envtest, name).get("activeWorkloads") == 1, timeout=30, what="enrollment still runs"
        )
        envtest.rest.request(
            "PATCH",
            f"{PROFILES}/{name}/status",
            {
                "status": {
                    "meetsThreshold": True,
                    "state": "Sufficient",
                    "containers": [{"name": "app", "recommendations": {"cpu": {"request": "250m"}}}],
                }
            },
            content_type="application/merge-patch+json",
        )
        time.sleep(8)  # several resize intervals (3 s) and collection cycles (1 s)
        assert requests_of(envtest, first, "dry-0")["cpu"] == "1"  # 1000m as the API server stores it: untouched
        assert profile_status(envtest, name).get("containers") == [
            {"name": "app", "recommendations": {"cpu": {"request": "250m"}}}
        ]
        assert process.metric("ballast_samples_collected_total") == 0
    finally:
        process.stop()
        remove_operator_objects(envtest)
