"""`ballast.runtime` is `ballast.internal.runtime` (ballast/_runtime_alias.py): the same module objects, classes
and metrics registry whichever name imports them first, for every module; and a type checker sees the same
types through the generated stubs (hack/gen-runtime-stubs)."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import ballast.internal.runtime
import ballast.internal.runtime.envtest
import ballast.internal.runtime.informer
import ballast.internal.runtime.metrics
import ballast.runtime
import ballast.runtime.envtest
import ballast.runtime.informer
import ballast.runtime.metrics
from ballast.runtime import Client, Manager
from ballast.runtime.envtest import Environment
from tests.paths import REPOSITORY

STUBS_SCRIPT = REPOSITORY / "hack" / "gen-runtime-stubs"
MODULES = sorted(
    module.name for module in pkgutil.walk_packages(ballast.internal.runtime.__path__, "ballast.internal.runtime.")
)


def _python(code: str) -> str:
    """Run `code` in a fresh interpreter (nothing imported yet) and return what it prints."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=REPOSITORY, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_package_and_its_names_are_the_internal_ones() -> None:
    assert ballast.runtime is ballast.internal.runtime
    assert Manager is ballast.internal.runtime.Manager
    assert Client is ballast.internal.runtime.Client
    assert Environment is ballast.internal.runtime.envtest.Environment
    assert ballast.runtime.envtest is ballast.internal.runtime.envtest
    assert ballast.runtime.informer is ballast.internal.runtime.informer
    assert sys.modules["ballast.runtime.informer"] is sys.modules["ballast.internal.runtime.informer"]


def test_there_is_one_metrics_registry() -> None:
    assert ballast.runtime.metrics.REGISTRY is ballast.internal.runtime.metrics.REGISTRY


@pytest.mark.parametrize("module", ["client", "manager", "envtest.wait", "leaderelection", "webhook"])
def test_a_module_imported_under_the_alias_first_is_executed_once(module: str) -> None:
    source = "/internal/runtime/" + module.replace(".", "/") + ".py"
    printed = _python(f"""
        import sys
        import ballast.runtime.{module} as alias
        import ballast.internal.runtime.{module} as real
        modules = {{id(m): getattr(m, "__file__", None) or "" for m in list(sys.modules.values())}}
        copies = len([file for file in modules.values() if file.endswith({source!r})])  # distinct module objects
        print(alias is real, copies, alias.__name__, sys.modules["ballast.runtime.{module}"] is real)
    """)
    assert printed == f"True 1 ballast.internal.runtime.{module} True"


def test_the_client_class_and_the_registry_are_one_object_whichever_name_comes_first() -> None:
    printed = _python("""
        import ballast.runtime.client, ballast.runtime.metrics
        from ballast.internal.runtime import Client
        from ballast.internal.runtime.metrics import REGISTRY
        print(ballast.runtime.client.Client is Client, ballast.runtime.metrics.REGISTRY is REGISTRY)
    """)
    assert printed == "True True"


def test_every_module_not_yet_imported_is_bound_under_both_names() -> None:
    printed = _python(f"""
        import importlib, sys
        names = {MODULES!r}
        for name in names:  # the alias first, for every module: nothing is imported beforehand
            importlib.import_module(name.replace("ballast.internal.runtime", "ballast.runtime", 1))
        differ = [n for n in names if sys.modules[n] is not sys.modules[n.replace("internal.", "", 1)]]
        print(len(names), differ)
    """)
    assert printed == f"{len(MODULES)} []"
    assert len(MODULES) > 50  # the walk did find the framework's modules


def test_a_missing_module_is_reported_under_the_name_asked_for() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'ballast\.runtime\.no_such_module'"):
        importlib.import_module("ballast.runtime.no_such_module")


def _stubs_script() -> Any:
    loader = importlib.machinery.SourceFileLoader("hack_gen_runtime_stubs", str(STUBS_SCRIPT))
    spec = importlib.util.spec_from_loader("hack_gen_runtime_stubs", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_every_module_has_its_stub_and_the_stubs_are_current() -> None:
    script = _stubs_script()
    wanted = script.stub_files()
    assert len(wanted) == len(MODULES) + 1  # the package itself too
    assert Path("envtest/wait.pyi") in wanted
    assert "from ballast.internal.runtime.envtest.wait import *" in wanted[Path("envtest/wait.pyi")]
    assert script.main(["--check"]) == 0, "run hack/gen-runtime-stubs"


def _mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "snippet.py").write_text(textwrap.dedent(code))
    environment = {**os.environ, "MYPYPATH": str(REPOSITORY)}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "snippet.py"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


_TYPED = """
    import ballast.runtime.informer
    from ballast.internal.runtime import Client as InternalClient
    from ballast.runtime import Client, Manager, RESTConfig
    from ballast.runtime.apierrors import GoneError
    from ballast.runtime.envtest import Environment


    def build(config: RESTConfig) -> Manager:
        return Manager(config)


    def same_class(client: Client) -> {returns}:
        return client


    def environment(envtest: Environment) -> Environment:
        return envtest


    manager: ballast.runtime.Manager = build(RESTConfig(configuration=None, qps=5.0))


    error: type[Exception] = GoneError
    informer = ballast.runtime.informer
"""


@pytest.mark.timeout(600)
def test_mypy_strict_sees_the_same_types_through_the_alias(tmp_path: Path) -> None:
    checked = _mypy(tmp_path, _TYPED.format(returns="InternalClient"))
    assert checked.returncode == 0, checked.stdout
    wrong = _mypy(tmp_path, _TYPED.format(returns="int"))  # the types are real, not Any
    assert wrong.returncode == 1
    assert 'Incompatible return value type (got "Client", expected "int")' in wrong.stdout
