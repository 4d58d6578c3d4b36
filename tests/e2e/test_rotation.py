"""Scenario 5: the webhook's certificate is renewed (a cert-manager rotation, published as kubelet publishes a
Secret: one atomic `..data` swap) twice while the API server sends 200 enrolled pod admissions per second.
Asserted: zero failed admissions, and the server ends up presenting the newest certificate."""

from __future__ import annotations

import socket
import ssl
import time

import pytest
from cryptography import x509

from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.load import AdmissionLoad
from tests.e2e.support import Operator, create_namespace

pytestmark = pytest.mark.alone  # 200 admissions a second, and its rate and p99 go to RELIABILITY.md
RATE = 200.0
ROTATIONS = 2


def served_serial(port: int, ca_pem: bytes) -> int:
    """The serial number of the certificate the webhook server presents now."""
    context = ssl.create_default_context(cadata=ca_pem.decode())
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def test_certificate_rotations_under_admission_load_fail_no_admission(cluster: MiniCluster, operator: Operator) -> None:
    env = cluster.env
    namespace = create_namespace(cluster, "rotation-load")
    newest = 0
    with AdmissionLoad(env, namespace, rate=RATE) as load:
        poll_until(lambda: load.sent >= RATE * 2, timeout=30, what="2 s of load before the first rotation")
        for _ in range(ROTATIONS):
            newest = x509.load_pem_x509_certificate(operator.secret.rotate()).serial_number
            served = newest
            poll_until(lambda: served_serial(operator.webhook_port, env.ca.cert_pem) == served, timeout=20,  # noqa: B023
                       interval=0.2, what="the webhook server to present the new certificate")  # fmt: skip
            time.sleep(2.0)
    assert load.sent >= RATE * 4
    assert load.failures == [], load.failures[:5]
    assert served_serial(operator.webhook_port, env.ca.cert_pem) == newest
    achieved = load.sent / load.elapsed
    figures = {"rotations": ROTATIONS, "admissions": load.sent, "failed": load.failed}
    record(
        "certificate_rotation", {**figures, "rate_per_second": round(achieved), "p99_ms": round(load.p99() * 1e3, 1)}
    )
