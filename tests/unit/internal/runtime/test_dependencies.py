"""`internal/runtime` imports nothing from the rest of the project (docs/design.md, Layout), so it could be lifted
out as a library. The one exception is `ballast.__version__`, which `envtest/cli.py` and `crd/cli.py` print."""

from __future__ import annotations

from pathlib import Path

from tests.paths import REPOSITORY
from tests.unit.support import imported_names

RUNTIME = REPOSITORY / "internal" / "runtime"
PACKAGE = ("ballast", "runtime")  # the one import path of the framework
ALLOWED = {("envtest/cli.py", "ballast.__version__"), ("crd/cli.py", "ballast.__version__")}


def _imported(path: Path) -> list[str]:
    return imported_names(path, (*PACKAGE, *path.relative_to(RUNTIME).parent.parts))


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

    assert "ballast.runtime.labels" in _imported(path)
    assert _outside("ballast.api.meta.Condition")
    assert not _outside("ballast.runtime.clock.rfc3339")
