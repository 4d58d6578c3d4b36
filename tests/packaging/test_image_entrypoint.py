"""The image without a container engine: the wheel is built from exactly the files the Dockerfile's build stage
copies (the .dockerignore allow-list), installed into a clean venv, and the image's ENTRYPOINT runs the
commands the Deployment and the chart's hook Jobs give it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

import pytest

from ballast import __version__
from tests.unit.config.dockerfile import REPO, parse

_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


def _run(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(argv)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def build_context(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build stage's working directory: every `COPY <src>… <dest>` of the Dockerfile, as Docker copies it
    (a directory's contents into dest, files into a dest ending in `/`), symlinks kept."""
    context = tmp_path_factory.mktemp("context")
    for sources, destination in parse().stage("build").copies():
        target = context / destination
        for source in sources:
            origin = REPO / source
            if origin.is_dir():
                shutil.copytree(origin, target, symlinks=True, ignore=_IGNORED, dirs_exist_ok=True)
            elif len(sources) > 1 or destination.endswith("/"):
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, target / origin.name)
            else:
                shutil.copy2(origin, target)
    return context


@pytest.fixture(scope="module")
def image_venv(build_context: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean venv with the wheel built as the image builds it (`pip wheel .` in the copied context), installed
    with the operator extra as the image installs it."""
    wheels = tmp_path_factory.mktemp("wheels")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(wheels), "."], cwd=build_context)
    (wheel,) = wheels.glob("ballast-*.whl")
    root = tmp_path_factory.mktemp("image-venv")
    venv.create(root, with_pip=True)
    _run([str(root / "bin" / "pip"), "install", "--quiet", f"{wheel}[operator]"], cwd=root)  # as the image does
    return root


def _entrypoint(image_venv: Path, *args: str, cwd: Path) -> str:
    """Run the Dockerfile's ENTRYPOINT (a console script of the venv) with `args`, outside the repository."""
    program, *fixed = parse().entrypoint()
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "KUBECONFIG")}
    env["PATH"] = f"{image_venv / 'bin'}:{env['PATH']}"
    return _run([str(image_venv / "bin" / program), *fixed, *args], cwd=cwd, env=env).stdout


def test_the_context_is_only_what_the_dockerfile_copies(build_context: Path) -> None:
    names = {path.name for path in build_context.iterdir()}
    assert names == {"pyproject.toml", "README.md", "ballast", "api", "controllers", "internal", "webhook"}
    assert (build_context / "ballast" / "api").is_symlink()


def test_entrypoint_reports_the_version(image_venv: Path, tmp_path: Path) -> None:
    assert _entrypoint(image_venv, "--version", cwd=tmp_path).strip() == f"ballastd {__version__}"


def test_entrypoint_help_lists_the_commands_and_deployment_flags(image_venv: Path, tmp_path: Path) -> None:
    out = _entrypoint(image_venv, "--help", cwd=tmp_path)
    for expected in ("apply-crds", "uninstall", "--webhook-cert-path", "--leader-elect", "--store", "--data-dir"):
        assert expected in out


def test_entrypoint_runs_the_hook_commands(image_venv: Path, tmp_path: Path) -> None:
    assert "--kubeconfig" in _entrypoint(image_venv, "apply-crds", "--help", cwd=tmp_path)
    assert "--deployment" in _entrypoint(image_venv, "uninstall", "--help", cwd=tmp_path)


def test_the_installed_package_carries_the_crds_it_applies(image_venv: Path, tmp_path: Path) -> None:
    # `ballastd apply-crds` renders the CRDs in-process: no YAML needs to be in the image.
    code = "from ballast.internal.manifests.ballast_crds import all_crds; print(len(all_crds()))"
    out = _run([str(image_venv / "bin" / "python"), "-c", code], cwd=tmp_path).stdout
    assert int(out) == len(list((REPO / "config" / "crd" / "bases").glob("*.yaml")))
