"""Large reviews do not grow the webhook server past the shipped memory limit: bodies over the cap are
discarded as they arrive, at most `max_in_flight_bytes` of bodies are held at once, and the heap is handed
back after a burst. The server runs in its own process so its RSS is its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
import urllib3
import yaml

from ballast.runtime.certs import CertificateAuthority
from ballast.runtime.webhook import MAX_BODY_BYTES
from tests.paths import REPOSITORY

SERVER = textwrap.dedent("""
    import sys, threading
    from ballast.runtime.admission import patched
    from ballast.runtime.webhook import WebhookServer

    def label(request):
        pod = dict(request.object or {})
        pod["metadata"] = {**pod.get("metadata", {}), "labels": {"sized": "yes"}}
        return patched(request, pod)

    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=sys.argv[1])
    server.register("/mutate", label)
    threading.Thread(target=server.start, args=(threading.Event(),), daemon=True).start()
    server.wait_listening(10)
    print(server.port, flush=True)
    sys.stdin.read()
""")


def _shipped_memory_limit() -> int:
    values = yaml.safe_load((REPOSITORY / "config/helm/ballast/values.yaml").read_text())
    limit = values["resources"]["limits"]["memory"]
    assert limit.endswith("Mi"), limit
    return int(limit[:-2]) * 1024 * 1024


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _review(size: int) -> bytes:
    """A Pod CREATE review of about `size` bytes (a large annotation, as big objects carry)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "annotations": {"blob": "x" * size}},
           "spec": {"containers": [{"name": "app", "image": "app"}]}}  # fmt: skip
    request = {"uid": "u-big", "kind": {"group": "", "version": "v1", "kind": "Pod"},
               "resource": {"group": "", "version": "v1", "resource": "pods"}, "operation": "CREATE",
               "namespace": "shop", "object": pod}  # fmt: skip
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, CertificateAuthority]]:
    ca = CertificateAuthority("memory-ca")
    ca.issue("memory-webhook", hosts=("127.0.0.1",), server=True).write(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    yield process, f"https://127.0.0.1:{port}/mutate", ca
    process.kill()
    process.wait()


def test_bursts_of_large_reviews_stay_under_the_shipped_memory_limit(
    server: tuple[subprocess.Popen[str], str, CertificateAuthority],
) -> None:
    process, url, ca = server
    pool = urllib3.PoolManager(ca_cert_data=ca.cert_pem.decode(), retries=False, maxsize=40)
    body = _review(MAX_BODY_BYTES - 64 * 1024)  # just under the cap: every one is decoded and answered
    headers = {"Content-Type": "application/json"}

    def post(_: int) -> int:
        response = pool.request("POST", url, body=body, headers=headers, timeout=120)
        answer = orjson.loads(response.data)["response"]
        return 200 if answer["allowed"] and answer.get("patch") else int(answer["status"]["code"])

    before = _rss(process.pid)
    peaks = []
    with ThreadPoolExecutor(40) as clients:
        for _ in range(3):
            assert list(clients.map(post, range(40))) == [200] * 40
            peaks.append(_rss(process.pid))
    after = _rss(process.pid)
    limit = _shipped_memory_limit()
    assert max(peaks) < limit, f"RSS {max(peaks) / 2**20:.0f} MiB after a burst (limit {limit / 2**20:.0f} MiB)"
    # Rounds do not ratchet: what a burst took is handed back (or reused) before the next.
    assert after - before < 128 * 1024 * 1024, (before, peaks, after)


def test_an_oversize_review_is_refused_without_being_kept(
    server: tuple[subprocess.Popen[str], str, CertificateAuthority],
) -> None:
    process, url, ca = server
    pool = urllib3.PoolManager(ca_cert_data=ca.cert_pem.decode(), retries=False, maxsize=8)
    body = _review(3 * MAX_BODY_BYTES)
    before = _rss(process.pid)
    with ThreadPoolExecutor(8) as clients:
        codes = list(
            clients.map(
                lambda _: orjson.loads(
                    pool.request("POST", url, body=body, headers={"Content-Type": "application/json"}).data
                )["response"]["status"]["code"],
                range(16),
            )
        )
    assert codes == [413] * 16
    assert _rss(process.pid) - before < 32 * 1024 * 1024  # 16 × 12 MiB arrived; none of it was kept
