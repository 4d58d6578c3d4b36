"""Suite-wide rules: under CI=true nothing may be skipped (a missing real component must fail the run), and
property tests have no per-example deadline (a wall-clock limit would measure the machine, not the code)."""

from __future__ import annotations

import pytest
from hypothesis import settings

from ballast.runtime.envtest.pytest_plugin import in_ci

settings.register_profile("ballast", deadline=None)
settings.load_profile("ballast")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not in_ci():
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped:
        if reporter:
            reporter.write_line(f"CI=true: {skipped} test(s) were skipped; CI runs no skipped tests", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
