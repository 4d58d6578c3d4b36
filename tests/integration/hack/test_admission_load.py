"""hack/admission-load itself, on a bare API server (the `envtest` fixture, no webhook): it offers the 200 dry-run
pod admissions per second that tests/load/test_scale.py asks for, all answered 201, over HTTP/2 — so what the
load suite measures is the webhook, not the generator. The binary comes from `make admission-load` (a prerequisite of
`make integration` and `make e2e-tools`)."""

from __future__ import annotations

import os

import pytest

from ballast.runtime.envtest import Environment
from tests.e2e.load import GoAdmissionLoad

pytestmark = pytest.mark.alone  # offers 200 admissions a second: load of its own
RATE = 200.0
SECONDS = 10.0


def test_the_go_generator_offers_200_admissions_per_second(envtest: Environment, envtest_namespace: str) -> None:
    with GoAdmissionLoad(envtest, envtest_namespace, rate=RATE, duration=SECONDS) as load:
        load.wait(timeout=SECONDS + 60)
    figures = {
        "admissions": load.sent, "failed": load.failed, "late": load.late,
        "rate_per_second": round(load.rate_per_second, 1), "p99_ms": round(load.p99() * 1e3, 1),
        "load_average": round(os.getloadavg()[0], 2),
    }  # fmt: skip
    print("admission-load on a bare API server:", figures)  # shown with -s; not a RELIABILITY.md scenario
    assert load.failures == [], load.failures[:5]
    assert load.rate_per_second >= 0.95 * RATE, figures
    assert load.sent >= 0.95 * RATE * SECONDS, figures
    assert load.result is not None
    assert load.result.protocol == "HTTP/2.0"
