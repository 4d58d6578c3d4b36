"""Go tools the tests run but never build: found by their hack/setup-* script's `--installed-only`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ballast.runtime.envtest.pytest_plugin import unavailable
from tests.paths import REPOSITORY


def installed_tool(name: str, setup_script: str, override_variable: str) -> Path:
    """$`override_variable`, else what `hack/<setup_script>` cached: skipped when it is not built, failed under
    CI=true (like every real component)."""
    override = os.environ.get(override_variable)
    if override:
        return Path(override)
    found = subprocess.run(
        [str(REPOSITORY / "hack" / setup_script), "--installed-only"], capture_output=True, text=True, check=False
    )
    if found.returncode != 0:
        unavailable(f"{name} is not built: {found.stderr.strip()}")
    return Path(found.stdout.splitlines()[-1])
