"""`ballastd --metrics-secure` and `--metrics-cert-*`: the Go operator's flags, off by default (docs/design.md,
difference 69) — plain HTTP without it; HTTPS that refuses a scrape without a token with it."""

from __future__ import annotations

import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ballast.internal.cmd.ballastd import build_parser, metrics_options
from ballast.runtime import FakeAPI, Manager
from ballast.runtime.certs import CertificateAuthority


@contextmanager
def _running(api: FakeAPI, *argv: str) -> Iterator[Manager]:
    args = build_parser().parse_args(["--metrics-bind-address=127.0.0.1:0", *argv])
    manager = Manager(client=api.client(), health_probe_bind_address="0", **metrics_options(args))
    stop = threading.Event()
    thread = threading.Thread(target=manager.start, args=(stop,), daemon=True)
    thread.start()
    try:
        assert manager.elected.wait(10)
        yield manager
    finally:
        stop.set()
        thread.join(10)


def test_metrics_are_plain_http_unless_metrics_secure_is_given(api: FakeAPI) -> None:
    args = build_parser().parse_args([])
    assert args.metrics_secure is False
    assert (args.metrics_cert_path, args.metrics_cert_name, args.metrics_cert_key) == ("", "tls.crt", "tls.key")
    with _running(api) as manager:
        url = f"http://127.0.0.1:{manager.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert response.status == 200


@pytest.mark.parametrize("flag", ["--metrics-secure", "--metrics-secure=true"])
def test_metrics_secure_serves_https_and_refuses_a_scrape_without_a_token(
    api: FakeAPI, tmp_path: Path, flag: str
) -> None:
    authority = CertificateAuthority("flags-test-ca")
    authority.issue("localhost", hosts=("127.0.0.1",), server=True).write(tmp_path, "metrics.crt", "metrics.key")
    ca = tmp_path / "ca.crt"
    ca.write_bytes(authority.cert_pem)
    argv = [
        flag,
        f"--metrics-cert-path={tmp_path}",
        "--metrics-cert-name=metrics.crt",
        "--metrics-cert-key=metrics.key",
    ]
    with _running(api, *argv) as manager:
        context = ssl.create_default_context(cafile=str(ca))
        url = f"https://127.0.0.1:{manager.metrics_port}/metrics"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, context=context, timeout=5)
        assert refused.value.code == 401


def test_metrics_secure_false_is_accepted() -> None:
    assert build_parser().parse_args(["--metrics-secure=false"]).metrics_secure is False
