"""`internal/runtime` imports nothing from the rest of the project (docs/design.md, Layout), so it could be lifted
out as a library. The one exception is `ballast.__version__`, which `envtest/cli.py` prints."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.paths import REPOSITORY

RUNTIME = REPOSITORY / "internal" / "runtime"
PACKAGE = ("ballast", "internal", "runtime")
ALLOWED = {("envtest/cli.py", "ballast.__version__")}


def _imported(path: Path) -> list[str]:
    """Every dotted name `path` imports, relative imports resolved (`from . import x` gives `<package>.x`)."""
    here = (*PACKAGE, *path.relative_to(RUNTIME).parent.parts)
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module or "").split("."))).strip(".")
            names.extend(f"{module}.{alias.name}" for alias in node.names)
    return names


def _outside(name: str) -> bool:
    inside = ".".join(PACKAGE)
    return (name == "ballast" or name.startswith("ballast.")) and not (name == inside or name.startswith(inside + "."))


def test_the_runtime_imports_nothing_from_the_rest_of_the_project() -> None:
    files = sorted(RUNTIME.rglob("*.py"))
    found = [
        f"{path.relative_to(RUNTIME)}: {name}"
        for path in files
        for name in _imported(path)
        if _outside(name) and (str(path.relative_to(RUNTIME)), name) not in ALLOWED
    ]

    assert len(files) > 40  # the walk really covers the package
    assert found == []


def test_relative_imports_are_resolved_against_the_package() -> None:
    path = RUNTIME / "fake.py"

    assert "ballast.internal.runtime.labels" in _imported(path)
    assert _outside("ballast.api.meta.Condition")
    assert not _outside("ballast.internal.runtime.clock.rfc3339")
