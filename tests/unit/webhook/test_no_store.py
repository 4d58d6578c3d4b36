"""Admission never touches the history store (docs/design.md, difference 67): while no primary answers — a
Sentinel failover, a Cluster shard down — pods are still admitted with their profiles' last recommendations.
No admission module imports the store, and `ballastd` hands it to none of them."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import ballast.webhook
from ballast.internal.cmd import wiring

WEBHOOK = Path(ballast.webhook.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_admission_module_imports_the_history_store() -> None:
    modules = sorted(WEBHOOK.rglob("*.py"))
    assert modules
    for module in modules:
        history = {name for name in _imports(module) if name.startswith("ballast.internal.history")}
        assert not history, f"{module.relative_to(WEBHOOK)} imports {history}"


def test_the_webhooks_are_registered_without_the_store() -> None:
    source = inspect.getsource(wiring.register_webhooks)
    assert "deps.store" not in source
    assert "store" not in source.replace("stores", "")
