"""The public surface of `ballast.runtime`: every module a user may import lists its names in `__all__`, and
every `ballast.runtime…` name the documentation uses (README.md, docs/**/*.md, docs/examples/**: imports, code
blocks and prose alike) resolves from a public module — never from one whose name starts with an underscore."""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from ballast import runtime
from tests.paths import REPOSITORY

ROOT = "ballast.runtime"
PACKAGE_DIR = REPOSITORY / "internal" / "runtime"
FROM_IMPORT = re.compile(r"from\s+(ballast\.runtime(?:\.\w+)*)\s+import\s+(\([^)]*\)|[^\n#]*)")
DOTTED = re.compile(r"(?<![\w.])ballast\.runtime(?:\.\w+)+")


def public_modules() -> list[Path]:
    """The framework's modules a user may import: none of the path's parts starts with an underscore."""
    return sorted(
        path
        for path in PACKAGE_DIR.rglob("*.py")
        if not any(part.startswith("_") and part != "__init__.py" for part in path.relative_to(PACKAGE_DIR).parts)
    )


def declares_all(path: Path) -> bool:
    tree = ast.parse(path.read_text(), str(path))
    return any(
        isinstance(target, ast.Name) and target.id == "__all__"
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
    )


def documentation() -> list[Path]:
    docs = REPOSITORY / "docs"
    examples = docs / "examples"
    found = {REPOSITORY / "README.md", *docs.rglob("*.md")}
    found |= {path for path in examples.rglob("*") if path.is_file() and path.suffix in (".py", ".md")}
    return sorted(path for path in found if path.exists())


def references(text: str) -> Iterator[tuple[str, str | None]]:
    """(module, name) of each `from ballast.runtime… import name` (name None: the module itself is named, as in
    `import ballast.runtime.x` or a dotted `ballast.runtime.x.Y` in prose)."""
    for match in FROM_IMPORT.finditer(text):
        names = re.sub(r"#[^\n]*", "", match.group(2)).strip().strip("()")
        for alias in names.split(","):
            name = alias.split(" as ")[0].strip()
            if name.isidentifier():
                yield match.group(1), name
    for match in DOTTED.finditer(text):
        yield match.group(0), None


def resolve(dotted: str, name: str | None) -> str | None:
    """None when `dotted` (+ `name`) resolves through public modules only; otherwise what is wrong."""
    parts = dotted.split(".")
    private = [part for part in parts[2:] if part.startswith("_")]
    if private:
        return f"{dotted}: {private[0]} is private; use the public module (or the root) that exports the name"
    module: ModuleType | None = None
    rest: list[str] = []
    for cut in range(len(parts), 1, -1):  # the longest importable prefix is the module, the rest attributes
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        rest = parts[cut:]
        break
    assert module is not None  # ballast.runtime itself always imports
    attributes = [*rest, name] if name is not None else rest
    value: object = module
    for attribute in attributes:
        exported = getattr(value, "__all__", None) if isinstance(value, ModuleType) else None
        submodule = isinstance(value, ModuleType) and _is_submodule(value, attribute)
        if exported is not None and attribute not in exported and not submodule:
            return f"{dotted}: {attribute} is not in {getattr(value, '__name__', dotted)}.__all__"
        if not hasattr(value, attribute) and not submodule:
            return f"{dotted}: has no {attribute}"
        value = (
            getattr(value, attribute)
            if hasattr(value, attribute)
            else importlib.import_module(
                f"{value.__name__}.{attribute}"  # type: ignore[attr-defined]
            )
        )
    return None


def _is_submodule(module: ModuleType, name: str) -> bool:
    if not hasattr(module, "__path__"):
        return False
    try:
        importlib.import_module(f"{module.__name__}.{name}")
    except ModuleNotFoundError:
        return False
    return True


def test_every_public_module_declares_all() -> None:
    modules = public_modules()
    missing = [str(path.relative_to(PACKAGE_DIR)) for path in modules if not declares_all(path)]

    assert len(modules) > 60  # the walk really covers the package, crd and envtest
    assert missing == []


def test_every_runtime_name_the_documentation_uses_resolves_from_a_public_module() -> None:
    files = documentation()
    used = {(path, module, name) for path in files for module, name in references(path.read_text())}
    found = sorted(
        f"{path.relative_to(REPOSITORY)}: {problem}"
        for path, module, name in used
        if (problem := resolve(module, name)) is not None
    )

    assert len(used) > 50  # the scan really finds the documented names
    assert found == []


def test_the_checks_catch_a_private_module_and_an_unexported_name() -> None:
    assert resolve(f"{ROOT}._decode", "Projection") is not None
    assert resolve(f"{ROOT}.apierrors", "GoneError") is None
    assert resolve(ROOT, "Builder") is None
    assert resolve(ROOT, "objects") is None  # a module of the package
    assert resolve(f"{ROOT}.client", "orjson") is not None  # imported there, not part of its surface
    assert resolve(f"{ROOT}.apierrors.GoneError", None) is None
    assert resolve(f"{ROOT}.envtest.Environment", None) is None
    assert list(references("from ballast.runtime import (\n    Builder,  # the builder\n    Manager,\n)")) == [
        (ROOT, "Builder"),
        (ROOT, "Manager"),
    ]
    assert runtime.__all__  # the root declares its surface too
