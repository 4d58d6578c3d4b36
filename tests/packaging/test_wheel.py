"""The built wheel, installed in a clean venv, works without this repository: console scripts and the plugin."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

from tests.paths import REPOSITORY

REPO = REPOSITORY


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(argv)} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)], cwd=REPO)
    (built,) = out.glob("ballast-*.whl")
    return built


@pytest.fixture(scope="module")
def clean_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("venv")
    venv.create(root, with_pip=True)
    _run([str(root / "bin" / "pip"), "install", "--quiet", str(wheel), "pytest", "mypy"], cwd=root)
    return root


def test_the_wheel_holds_real_files_under_ballast_only(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        infos = {info.filename: info for info in archive.infolist()}
    assert "ballast/runtime/envtest/environment.py" in names
    assert "ballast/runtime/envtest/reaper.py" in names
    assert "ballast/api/__init__.py" in names
    # The framework is under one name: no file of it under ballast/internal/, each file once.
    assert not [name for name in names if name.startswith("ballast/internal/runtime/")]
    assert len(names) == len(set(names))
    # The built-in types' recorded schemas: ballast-crdgen reads them for a kind embedding a JobTemplateSpec; and
    # the typed built-in kinds generated from them.
    assert {
        "ballast/runtime/crd/builtin_core_v1.json",
        "ballast/runtime/crd/builtin_batch_v1.json",
        "ballast/runtime/crd/builtin_apps_v1.json",
        "ballast/runtime/crd/kinds/apps_v1.py",
        "ballast/runtime/crd/kinds/core_v1.py",
    } <= set(names)
    assert not [name for name in names if name.endswith(".pyi")]  # one module object per file, no stub tree
    # Real files, not symlinks (the symlink bit would sit in the high bits of external_attr).
    mode = infos["ballast/runtime/envtest/environment.py"].external_attr >> 16
    assert mode & 0o170000 in (0, 0o100000)
    top_level = {name.split("/")[0] for name in names if not name.startswith("ballast-")}
    assert top_level == {"ballast"}


def test_the_framework_installs_without_the_operators_dependencies(clean_venv: Path, tmp_path: Path) -> None:
    listed = _run([str(clean_venv / "bin" / "pip"), "list", "--format=freeze"], cwd=tmp_path).stdout
    installed = {line.split("==")[0].lower() for line in listed.splitlines()}
    assert "ballast" in installed
    assert not installed & {"redis", "google-re2", "rich", "croniter", "numpy", "matplotlib"}


def test_console_scripts_work_from_the_clean_venv(clean_venv: Path, tmp_path: Path) -> None:
    for command in ("ballast-envtest", "ballast-crdgen"):
        out = _run([str(clean_venv / "bin" / command), "--version"], cwd=tmp_path).stdout
        assert out.startswith(command)
    for command in ("ballastd", "ballast"):  # the operator's commands, installed without ballast[operator]
        done = subprocess.run(
            [str(clean_venv / "bin" / command), "--version"], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.endswith("install ballast[operator]: pip install 'ballast[operator]'\n")
        assert "Traceback" not in done.stderr
    listed = _run([str(clean_venv / "bin" / "ballast-envtest"), "use", "--installed-only"], cwd=tmp_path)
    assert Path(listed.stdout.splitlines()[-1], "kube-apiserver").is_file()


def test_a_throwaway_project_gets_a_working_api_server_from_the_fixture(clean_venv: Path, tmp_path: Path) -> None:
    (tmp_path / "test_uses_envtest.py").write_text(
        textwrap.dedent("""
        from kubernetes import client


        def test_api_server(envtest):
            assert envtest.rest.get("/version")["gitVersion"].startswith("v1.")
            api = client.CoreV1Api(client.ApiClient(envtest.client_configuration()))
            names = [n.metadata.name for n in api.list_namespace().items]
            assert "default" in names
        """)
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PATH"] = f"{clean_venv / 'bin'}:{env['PATH']}"
    result = _run(
        [str(clean_venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q"], cwd=tmp_path, env=env
    )
    assert "1 passed" in result.stdout


THROWAWAY_KIND = """
from typing import ClassVar, Literal

from pydantic import Field

from ballast.runtime.crd import CustomResource, Int32, Scope, WireModel


class GreetingSpec(WireModel):
    language: Literal["en", "fr"] = "en"
    times: Int32 = Field(default=1, ge=1)


class GreetingStatus(WireModel):
    said: str | None = None


class Greeting(CustomResource):
    \"\"\"A greeting to say.\"\"\"

    GROUP: ClassVar[str] = "example.com"
    VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Greeting"
    PLURAL: ClassVar[str] = "greetings"
    SCOPE: ClassVar[Scope] = "Namespaced"
    STATUS_SUBRESOURCE: ClassVar[bool] = True
    spec: GreetingSpec = Field(default_factory=GreetingSpec)
    status: GreetingStatus = Field(default_factory=GreetingStatus)
"""

THROWAWAY_WEBHOOK = """
from ballast.runtime.webhookbuilder import WebhookBuilder
from greetings import Greeting


class GreetingDefaulter:
    def default(self, ctx, obj):
        obj.spec.times = max(obj.spec.times, 1)


def setup_greeting_webhook_with_manager(manager):
    return WebhookBuilder(manager).for_(Greeting).with_defaulter(GreetingDefaulter()).complete()
"""

THROWAWAY_TEST = """
from ballast.runtime import Builder, Manager, Scheme
from ballast.runtime.testing import eventually, running
from greetings import Greeting

WORDS = {"en": "hello", "fr": "bonjour"}


class Greeter:
    def __init__(self, manager):
        self.client = manager.client

    def reconcile(self, ctx, request):
        greeting = self.client.get(Greeting, request.name, request.namespace)
        said = " ".join([WORDS[greeting.spec.language]] * greeting.spec.times)
        if greeting.status.said != said:
            status = greeting.status.model_copy(update={"said": said})
            self.client.status().update(greeting.model_copy(update={"status": status}))


def test_the_controller_answers_a_greeting(envtest, envtest_namespace):
    envtest.install_crds(["crds"])
    scheme = Scheme()
    scheme.add(Greeting)
    manager = Manager(envtest.rest_config(), scheme=scheme)
    Builder(manager).for_(Greeting).complete(Greeter(manager))
    path = f"/apis/example.com/v1/namespaces/{envtest_namespace}/greetings"
    with running(manager):
        envtest.rest.create(path, {"apiVersion": "example.com/v1", "kind": "Greeting", "metadata": {"name": "g"},
                                   "spec": {"language": "fr", "times": 2}})
        eventually(lambda: envtest.rest.get(f"{path}/g").get("status", {}).get("said") == "bonjour bonjour",
                   what="the greeting said")
"""


def test_a_throwaway_project_generates_its_crd_and_tests_its_controller_without_the_operator(
    clean_venv: Path, tmp_path: Path
) -> None:
    """Issue 14's acceptance: installed without ballast[operator], a project of its own makes its CRD with
    ballast-crdgen and tests its controller on the real API server with the testing kit."""
    (tmp_path / "greetings.py").write_text(THROWAWAY_KIND)
    (tmp_path / "test_greeter.py").write_text(THROWAWAY_TEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST") and k != "PYTHONPATH"}
    env["PATH"] = f"{clean_venv / 'bin'}:{env['PATH']}"
    _run([str(clean_venv / "bin" / "ballast-crdgen"), "crd", "greetings", "-o", "crds"], cwd=tmp_path, env=env)
    assert [path.name for path in (tmp_path / "crds").iterdir()] == ["example.com_greetings.yaml"]
    (tmp_path / "greetings_webhook.py").write_text(THROWAWAY_WEBHOOK)
    setup = "greetings_webhook.py:setup_greeting_webhook_with_manager"
    webhook = [str(clean_venv / "bin" / "ballast-crdgen"), "webhook", setup, "-o", "config/webhook/manifests.yaml"]
    _run(webhook, cwd=tmp_path, env=env)
    assert "path: /mutate-example-com-v1-greeting" in (tmp_path / "config/webhook/manifests.yaml").read_text()
    _run([*webhook, "--check"], cwd=tmp_path, env=env)  # fails (exit 1) if the file were out of date
    python = str(clean_venv / "bin" / "python")
    result = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_greeter.py"], cwd=tmp_path, env=env)
    assert "1 passed" in result.stdout


def test_the_framework_has_one_name_in_the_installed_package_and_type_checks(clean_venv: Path, tmp_path: Path) -> None:
    # outside the repository: the installed package only, nothing from the source tree
    (tmp_path / "uses_runtime.py").write_text(
        textwrap.dedent("""
        import pkgutil
        import sys

        import ballast.internal
        import ballast.runtime.informer
        from ballast.runtime import Manager
        from ballast.runtime.envtest import Environment

        manager: type[Manager] = Manager
        environment: type[Environment] = Environment
        if __name__ == "__main__":
            import ballast.runtime.envtest as envtest
            print(Environment is envtest.Environment, "ballast.runtime.informer" in sys.modules,
                  "runtime" not in [info.name for info in pkgutil.iter_modules(ballast.internal.__path__)])
        """)
    )
    python = str(clean_venv / "bin" / "python")
    assert _run([python, "uses_runtime.py"], cwd=tmp_path).stdout.split() == ["True", "True", "True"]
    _run([python, "-m", "mypy", "--strict", "--no-incremental", "uses_runtime.py"], cwd=tmp_path)
