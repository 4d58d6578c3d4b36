"""The import rule of `ballast.runtime` (its package docstring), checked over every Python file of the
repository outside the framework itself: a name the package root exports is imported from the root, never from
the module that defines it; every other name comes from its module; the root is asked only for what it exports
(or for a module)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from ballast import runtime
from tests.paths import REPOSITORY

ROOT = "ballast.runtime"
MODULES = {module.name for module in pkgutil.iter_modules(runtime.__path__)}


def python_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py", "hack/*"],
        cwd=REPOSITORY, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return [REPOSITORY / name for name in sorted(set(listed)) if not name.startswith("internal/runtime/")]


def runtime_imports(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, module, name) of each `from ballast.runtime… import name` in the file."""
    try:
        tree = ast.parse(path.read_text(), str(path))
    except (SyntaxError, UnicodeDecodeError, FileNotFoundError):
        return  # not Python (a shell script under hack/), or deleted in the work tree
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.split(".")[: len(ROOT.split("."))] == ROOT.split(".")
        ):
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def violation(module: str, name: str) -> str | None:
    if module == ROOT:
        if name in runtime.__all__ or name in MODULES:
            return None
        return f"{name} is not exported by {ROOT}: import it from its module"
    exported = name in runtime.__all__ and getattr(importlib.import_module(module), name, None) is getattr(
        runtime, name
    )
    return f"{name} is exported by {ROOT}: import it from there, not from {module}" if exported else None


def test_the_names_the_root_exports_come_from_the_root_and_the_rest_from_their_module() -> None:
    found = [
        f"{path.relative_to(REPOSITORY)}:{line}: {problem}"
        for path in python_files()
        for line, module, name in runtime_imports(path)
        if (problem := violation(module, name)) is not None
    ]
    assert found == []


def test_the_rule_catches_a_root_name_imported_from_its_module() -> None:
    assert violation(f"{ROOT}.apierrors", "NotFoundError") is not None
    assert violation(f"{ROOT}.apierrors", "GoneError") is None  # not exported by the root: by module
    assert violation(ROOT, "NotFoundError") is None
    assert violation(ROOT, "objects") is None  # a module
    assert violation(ROOT, "gc_paused") is not None  # defined in a module, not exported by the root
