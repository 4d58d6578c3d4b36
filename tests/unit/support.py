"""Helpers shared by unit tests across packages."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TypeVar

from ballast.api.scheme import KINDS
from ballast.runtime import FakeAPI, GroupVersionKind

API = TypeVar("API", bound=FakeAPI)


def register_our_kinds(api: API) -> API:
    """Serve every kind of `ballast.api.scheme.KINDS` on `api`, as their CRDs do on a real server; returns `api`."""
    for kind in KINDS:
        gvk = GroupVersionKind(kind.GROUP, kind.VERSION, kind.KIND)
        api.register(gvk, kind.PLURAL, namespaced=kind.SCOPE == "Namespaced", status=kind.STATUS_SUBRESOURCE)
    return api


def imported_names(path: Path, package: tuple[str, ...]) -> list[str]:
    """Every dotted name the module at `path` imports, `package` being the package it is in (relative imports
    resolved against it: `from . import x` gives `<package>.x`)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join((*base, *(node.module or "").split("."))).strip(".")
            names.extend(f"{module}.{alias.name}" for alias in node.names)
    return names
