"""The package root resolves its re-exports on first use: every exported name is its module's object, and
importing one module (or the client a CLI needs) does not import the manager, the webhook server and the rest."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys

import pytest

from ballast import runtime
from tests.paths import REPOSITORY

ROOT = "ballast.runtime"
HEAVY = (f"{ROOT}.manager", f"{ROOT}.builder", f"{ROOT}.webhook", f"{ROOT}.cache", f"{ROOT}.leaderelection",
         f"{ROOT}.fake", "ballast.api.scheme")  # fmt: skip


def test_every_exported_name_is_the_object_its_module_defines() -> None:
    exports: dict[str, str] = runtime._EXPORTS
    assert sorted(exports) == sorted(runtime.__all__)
    for name, module in exports.items():
        assert getattr(runtime, name) is getattr(importlib.import_module(f"{ROOT}.{module}"), name), name
    assert set(runtime.__all__) <= set(dir(runtime))


def test_the_names_type_checkers_see_are_the_ones_resolved_at_run_time() -> None:
    tree = ast.parse((REPOSITORY / "internal" / "runtime" / "__init__.py").read_text())
    checked = {
        alias.name: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        for alias in node.names
    }
    assert checked == runtime._EXPORTS


def test_an_unknown_name_is_an_attribute_error_and_a_module_still_imports() -> None:
    with pytest.raises(AttributeError, match="NoSuchName"):
        runtime.NoSuchName  # type: ignore[attr-defined]  # noqa: B018
    from ballast.runtime import objects  # noqa: PLC0415 - a module, not an export

    assert objects.__name__ == f"{ROOT}.objects"


def test_what_ballast_profiles_imports_leaves_the_operator_out() -> None:
    """`ballast profiles` needs a client and a kubeconfig loader: not the manager, the webhook server, the cache
    or the API models, which took most of its start-up time (issue 13, item 7)."""
    code = (
        "import json, sys\n"
        "from ballast.internal.cmd import ballast, profiles\n"
        "from ballast.runtime import APIStatusError, Client, NotFoundError, RESTConfig, Scheme\n"
        f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPOSITORY)
    assert json.loads(result.stdout) == []
