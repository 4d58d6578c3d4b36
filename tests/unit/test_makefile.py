"""`make help` lists every documented target, digits and all (`e2e-tools`, `test-e2e`)."""

from __future__ import annotations

import re
import subprocess

from tests.paths import REPOSITORY

DOCUMENTED = re.compile(r"^([^\s:#=]+):[^=\n]*## ", re.MULTILINE)


def test_make_help_lists_every_documented_target() -> None:
    documented = DOCUMENTED.findall((REPOSITORY / "Makefile").read_text())
    result = subprocess.run(["make", "-s", "help"], cwd=REPOSITORY, capture_output=True, text=True, check=True)
    listed = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert listed == documented
    assert {"e2e-tools", "test-e2e"} <= set(listed)
