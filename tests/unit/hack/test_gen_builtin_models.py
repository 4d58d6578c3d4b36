"""`hack/gen-builtin-models`: the committed built-in models are what the recorded schemas generate, and `--check`
names a stale module without writing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.paths import REPOSITORY

SCRIPT = REPOSITORY / "hack" / "gen-builtin-models"
MODULES = REPOSITORY / "internal" / "runtime" / "crd" / "kinds"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False)


def test_the_committed_models_are_what_the_recorded_schemas_generate() -> None:
    result = _run("--check")

    assert result.returncode == 0, f"{result.stdout}{result.stderr}\nrun hack/gen-builtin-models and commit"


def test_check_names_a_stale_module_and_writing_restores_it(tmp_path: Path) -> None:
    for name in ("core_v1.py", "apps_v1.py", "batch_v1.py"):
        shutil.copy(MODULES / name, tmp_path / name)
    stale = tmp_path / "apps_v1.py"
    stale.write_text(stale.read_text().replace("    replicas: Int32 | None = None\n", "", 1))

    checked = _run("--check", "--out", str(tmp_path))
    assert checked.returncode == 1
    assert checked.stdout.splitlines() == [f"{stale} differs from the recorded schemas; run hack/gen-builtin-models"]

    written = _run("--out", str(tmp_path))
    assert written.returncode == 0
    assert stale.read_text() == (MODULES / "apps_v1.py").read_text()
