"""Two `ballastd` replicas behind one Service (private test network): both admit, only the leader reconciles,
the kill switch reaches the standby, and killing the leader hands over within the election bound with no
resize issued twice."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import orjson
import pytest
import urllib3

from ballast.internal.enrollment import LEADER_ELECTION_ID
from ballast.internal.manifests.webhooks import webhook_configurations
from ballast.runtime.envtest import Environment, network
from ballast.runtime.envtest.wait import poll_until
from tests.integration.redis_server import RedisServer

from .conftest import (
    OPERATOR_NAMESPACE,
    Ballastd,
    MetricsBackend,
    install_operator_objects,
    pod,
    remove_operator_objects,
)

pytestmark = pytest.mark.alone  # a handover bound in seconds: a busy neighbour would stretch it
SERVICE = "ballast-webhook"
ELECTION = ["--leader-elect-lease-duration=4", "--leader-elect-renew-deadline=3", "--leader-elect-retry-period=1"]
HANDOVER_BOUND = 4 + 2 * 1 * (1 + 1.2)


@pytest.fixture
def webhook_service(envtest: Environment) -> Iterator[tuple[list[str], Path]]:
    """Two namespace addresses behind Service ballast-webhook, a serving certificate naming the Service, and
    the webhook configurations pointing at it."""
    addresses = [network.allocate_address(), network.allocate_address()]
    cert_dir = Path(envtest.webhook_cert_dir(hosts=(f"{SERVICE}.{OPERATOR_NAMESPACE}.svc",)))
    install_operator_objects(envtest)
    base = f"/api/v1/namespaces/{OPERATOR_NAMESPACE}"
    envtest.rest.apply(
        f"{base}/services/{SERVICE}",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": SERVICE, "namespace": OPERATOR_NAMESPACE},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443, "protocol": "TCP"}]},
        },
    )
    envtest.rest.apply(
        f"/apis/discovery.k8s.io/v1/namespaces/{OPERATOR_NAMESPACE}/endpointslices/{SERVICE}",
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": SERVICE,
                "namespace": OPERATOR_NAMESPACE,
                "labels": {"kubernetes.io/service-name": SERVICE},
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [a], "conditions": {"ready": True}} for a in addresses],
            "ports": [{"name": "https", "port": 9443, "protocol": "TCP"}],
        },
    )
    configs = webhook_configurations(
        service_name=SERVICE, service_namespace=OPERATOR_NAMESPACE, ca_bundle=envtest.ca.cert_pem
    )
    for config in configs:
        plural = config["kind"].lower() + "s"
        envtest.rest.apply(f"/apis/admissionregistration.k8s.io/v1/{plural}/{config['metadata']['name']}", config)
    yield addresses, cert_dir
    for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        with contextlib.suppress(Exception):
            envtest.rest.delete(f"/apis/admissionregistration.k8s.io/v1/{kind}/ballast")
    remove_operator_objects(envtest)


def is_leader(replica: Ballastd) -> bool:
    with contextlib.suppress(Exception):
        return replica.metric("leader_election_master_status", name=LEADER_ELECTION_ID) == 1.0
    return False


def admission(address: str, ca: bytes, review: dict[str, Any]) -> dict[str, Any]:
    """One AdmissionReview sent straight to one replica, verified against the Service's name."""
    context = ssl.create_default_context(cadata=ca.decode())
    body = orjson.dumps(review)
    with (
        socket.create_connection((address, 9443), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname=f"{SERVICE}.{OPERATOR_NAMESPACE}.svc") as tls,
    ):
        tls.sendall(
            b"POST /mutate-v1-pod HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
        )
        data = b""
        while chunk := tls.recv(65536):
            data += chunk
    answer: dict[str, Any] = orjson.loads(data.split(b"\r\n\r\n", 1)[1])
    return answer


class CPURequests(list[str]):
    """Every distinct CPU request a pod's first container takes, read from a watch so no step goes unseen."""

    def __init__(self, env: Environment, namespace: str, name: str) -> None:
        super().__init__()
        self._api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(env.client_configuration()))
        self._watch: Any = kubernetes.watch.Watch()  # type: ignore[no-untyped-call]
        self._thread = threading.Thread(target=self._record, args=(namespace, name), daemon=True)

    def _record(self, namespace: str, name: str) -> None:
        events = self._watch.stream(
            self._api.list_namespaced_pod, namespace, field_selector=f"metadata.name={name}", timeout_seconds=300
        )
        with contextlib.suppress(urllib3.exceptions.ProtocolError):  # the stream is cut when the test ends
            for event in events:
                cpu = str(event["object"].spec.containers[0].resources.requests["cpu"])
                if not self or self[-1] != cpu:
                    self.append(cpu)

    def __enter__(self) -> CPURequests:
        self._thread.start()
        poll_until(lambda: len(self) > 0, timeout=10, what="the watch on the pod")
        return self

    def __exit__(self, *_: object) -> None:
        self._watch.stop()
        self._api.api_client.close()


def resized_events(env: Environment, namespace: str, name: str) -> int:
    events = env.rest.get(
        f"/api/v1/namespaces/{namespace}/events", params={"fieldSelector": f"involvedObject.name={name}"}
    )
    return sum(int(e.get("count", 1)) for e in events["items"] if e.get("reason") == "Resized")


@pytest.mark.private_network
@pytest.mark.usefixtures("private_network")
def test_two_replicas_share_admission_and_hand_over_leadership(
    envtest: Environment,
    metrics_backend: MetricsBackend,
    redis_server: RedisServer,
    webhook_service: tuple[list[str], Path],
    tmp_path: Path,
) -> None:
    addresses, cert_dir = webhook_service
    replicas = [
        Ballastd(
            envtest,
            tmp_path,
            [
                "--leader-elect",
                *ELECTION,
                f"--store={redis_server.url}",
                f"--webhook-bind-address={address}:9443",
                f"--webhook-cert-path={cert_dir}",
            ],
            name=f"replica-{index}",
        )
        for index, address in enumerate(addresses)
    ]
    try:
        for replica in replicas:
            replica.wait_ready()
        poll_until(lambda: sum(is_leader(r) for r in replicas) == 1, timeout=20, what="one leader")
        leader = next(r for r in replicas if is_leader(r))
        standby = next(r for r in replicas if r is not leader)
        standby_address = addresses[replicas.index(standby)]
        namespace = f"shop-{uuid.uuid4().hex[:6]}"
        envtest.rest.create(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        )

        # Both replicas serve admission (the API server spreads calls over the EndpointSlice).
        counter = iter(range(10_000))

        def both_admitted() -> bool:
            envtest.rest.create(
                f"/api/v1/namespaces/{namespace}/pods", pod(f"spread-{next(counter)}", namespace, "spread", "apply")
            )
            return all(
                r.metric("controller_runtime_webhook_requests_total", webhook="/mutate-v1-pod", code="200") > 0
                for r in replicas
            )

        poll_until(both_admitted, timeout=60, interval=0.2, what="admission requests on both replicas")

        # Only the leader reconciles.
        poll_until(
            lambda: (
                leader.metric("controller_runtime_reconcile_total", controller="workloadwatcher-pod", result="success")
                > 0
            ),
            timeout=30,
            what="the leader to enroll pods",
        )
        assert (
            standby.metric("controller_runtime_reconcile_total", controller="workloadwatcher-pod", result="success")
            == 0
        )
        assert (
            standby.metric("controller_runtime_reconcile_total", controller="metricscollector", result="success") == 0
        )

        # The kill switch reaches the standby's webhook within seconds.
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u-1",
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "operation": "CREATE",
                "namespace": namespace,
                "object": pod("direct", namespace, "spread", "apply"),
            },
        }
        switch = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ballast-kill-switch"}}
        envtest.rest.create(f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/configmaps", switch)
        try:
            poll_until(
                lambda: (
                    admission(standby_address, envtest.ca.cert_pem, review)["response"]["status"].get("message")
                    == "kill switch active"
                ),
                timeout=15,
                what="the standby's webhook to see the kill switch",
            )
        finally:
            envtest.rest.delete(f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/configmaps/ballast-kill-switch")

        # A resize in progress survives a leader crash: the standby takes over in time and never repeats a step.
        poll_until(
            lambda: (
                envtest.rest.get(
                    "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles/spread--api--default-a9696153"
                )
                .get("status", {})
                .get("state")
                == "Sufficient"
            ),
            timeout=60,
            what="a Sufficient profile",
        )
        resize_pod = pod("resizing", namespace, "spread", "measure", cpu="1000m", memory="100Mi")
        envtest.rest.create(f"/api/v1/namespaces/{namespace}/pods", resize_pod)
        with CPURequests(envtest, namespace, "resizing") as seen:
            envtest.rest.request(
                "PATCH",
                f"/api/v1/namespaces/{namespace}/pods/resizing",
                {"metadata": {"labels": {"ballast.tightlinesoftware.com/mode": "resize"}}},
                content_type="application/merge-patch+json",
            )
            poll_until(lambda: len(seen) > 1, timeout=30, what="the first resize step")
            killed_at = time.monotonic()
            leader.kill()
            poll_until(lambda: is_leader(standby), timeout=30, what="the standby to lead")
            handover = time.monotonic() - killed_at
            poll_until(
                lambda: seen[-1] == "287m",
                timeout=60,
                what="the resize to finish under the new leader",
                last_error=standby.output,
            )
        assert handover <= HANDOVER_BOUND + 2.0, f"handover took {handover:.1f}s"
        assert seen == ["1", "643m", "465m", "376m", "331m", "287m"]  # every step once, none repeated or skipped
        steps = len(seen) - 1
        # A leader killed between its patch and its Event may lose one Event; a repeated resize would add one.
        poll_until(
            lambda: resized_events(envtest, namespace, "resizing") >= steps - 1, timeout=15, what="Resized events"
        )
        assert resized_events(envtest, namespace, "resizing") <= steps
    finally:
        for replica in replicas:
            replica.stop()
