"""A webhook server without its certificate: waits with warnings, then fails start-up after certificate_timeout
(controller-runtime fails at once); certificate_timeout=None waits until the pair appears."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from ballast.runtime import WebhookServer
from ballast.runtime.certs import CertificateAuthority
from ballast.runtime.certwatcher import CertificateError


def test_a_missing_certificate_fails_start_up_after_the_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path / "missing", certificate_timeout=0.5)
    with caplog.at_level(logging.WARNING, "ballast.runtime.webhook"), pytest.raises(CertificateError) as failed:
        server.start(threading.Event())
    assert "no serving certificate after 0.5 s" in str(failed.value)
    assert str(tmp_path / "missing" / "tls.crt") in str(failed.value)
    warnings = [r for r in caplog.records if "waiting for the serving certificate (for 0.5 s)" in r.getMessage()]
    assert len(warnings) == 1  # at once, not once a second


def test_without_a_timeout_it_waits_for_a_late_certificate(tmp_path: Path) -> None:
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path, certificate_timeout=None)
    stop = threading.Event()
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    try:
        assert not server.wait_listening(2.5)  # longer than a short timeout would have allowed: still waiting
        CertificateAuthority("late-ca").issue("localhost", hosts=("127.0.0.1",), server=True).write(tmp_path)
        assert server.wait_listening(10)
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def test_the_default_deadline_is_two_minutes() -> None:
    assert WebhookServer(port=0).certificate_timeout == 120.0
