"""docs/examples/cronjob is written with the public API only — `ballast.runtime` and its submodules, plus what a
project of its own would depend on — and its committed CRD is what `ballast-crdgen` generates from its types."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from tests.paths import REPOSITORY

EXAMPLE = REPOSITORY / "docs" / "examples" / "cronjob"
THIRD_PARTY = {"pydantic", "croniter", "pytest"}
"""What the example's own project would list as dependencies."""


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def allowed(module: str) -> bool:
    top = module.split(".", maxsplit=1)[0]
    public = module == "ballast.runtime" or module.startswith("ballast.runtime.")
    return public or top in {"tutorial", "__future__", *THIRD_PARTY} or top in sys.stdlib_module_names


def test_the_example_imports_only_the_public_api() -> None:
    sources = sorted(EXAMPLE.rglob("*.py"))
    assert len(sources) >= 10
    outside = {str(path.relative_to(EXAMPLE)): sorted(m for m in imported_modules(path) if not allowed(m))
               for path in sources}  # fmt: skip
    assert {path: modules for path, modules in outside.items() if modules} == {}
    assert any("ballast.runtime" in imported_modules(path) for path in sources)


def test_the_committed_crd_is_what_ballast_crdgen_generates() -> None:
    crdgen = Path(sys.executable).parent / "ballast-crdgen"
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE)}
    out = EXAMPLE / "config" / "crd" / "bases"
    done = subprocess.run([str(crdgen), "crd", "tutorial.api.v1", "-o", str(out), "--check"],
                          capture_output=True, text=True, env=env, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in out.iterdir()) == ["batch.tutorial.kubebuilder.io_cronjobs.yaml"]


def test_the_committed_webhook_configuration_is_what_ballast_crdgen_generates() -> None:
    crdgen = Path(sys.executable).parent / "ballast-crdgen"
    setup = "tutorial/internal/webhook/v1/cronjob_webhook.py:setup_cronjob_webhook_with_manager"  # a source path
    out = EXAMPLE / "config" / "webhook" / "manifests.yaml"
    done = subprocess.run([str(crdgen), "webhook", setup, "-o", str(out), "--check"],
                          capture_output=True, text=True, cwd=EXAMPLE, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
