"""The image's promises, read from the Dockerfile: non-root, `ballastd` as entrypoint, a supported Python."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tests.unit.config.dockerfile import REPO, ignore_patterns, parse

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_the_final_stage_runs_as_a_numeric_non_root_user() -> None:
    user = parse().final.last("USER")
    assert user is not None, "the final stage must set USER"
    uid, _, gid = user.partition(":")
    # Numeric, or the kubelet cannot verify runAsNonRoot against the image.
    assert uid.isdigit(), user
    assert int(uid) != 0, user
    assert all(part.isdigit() and int(part) != 0 for part in filter(None, [gid])), user


def test_the_deployments_run_as_the_images_user() -> None:
    user = parse().final.last("USER")
    assert user is not None
    uid = int(user.partition(":")[0])
    manager = yaml.safe_load((REPO / "config/manager/manager.yaml").read_text())
    assert manager["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == uid
    helpers = (REPO / "config/helm/ballast/templates/_helpers.tpl").read_text()
    assert f"runAsUser: {uid}\n" in helpers


def test_the_entrypoint_is_the_ballastd_console_script() -> None:
    # The Deployment and the chart's hook Jobs pass only `args`, so ENTRYPOINT must be ballastd itself
    # (tests/packaging/test_image_entrypoint.py runs this same ENTRYPOINT from the built wheel).
    entrypoint = parse().entrypoint()
    assert entrypoint == ["ballastd"]
    assert PYPROJECT["project"]["scripts"]["ballastd"] == "ballast.internal.cmd.entry:ballastd"


def test_the_image_installs_the_operator_extra() -> None:
    # Without it ballastd would only say "install ballast[operator]" (internal/cmd/entry.py).
    text = (REPO / "Dockerfile").read_text()
    assert "pip wheel --wheel-dir /wheels '.[operator,otel]'" in text
    assert "pip install --no-index --find-links=/wheels 'ballast[operator,otel]'" in text


def test_no_deployed_container_overrides_the_entrypoint() -> None:
    sources = [REPO / "config/manager/manager.yaml", *sorted((REPO / "config/helm/ballast/templates").glob("*.yaml"))]
    for path in sources:
        text = path.read_text()
        if 'include "ballast.image"' in text or "image: ballast" in text:
            assert "command:" not in text, f"{path}: the operator image runs its ENTRYPOINT with args only"


def test_every_python_base_satisfies_requires_python() -> None:
    dockerfile = parse()
    required = SpecifierSet(PYPROJECT["project"]["requires-python"])
    for stage in dockerfile.stages:
        match = re.fullmatch(r"(?:docker\.io/(?:library/)?)?python:(\d+\.\d+)(?:\.\d+)?-slim(?:-\w+)?", stage.base)
        assert match, f"stage {stage.name or 'final'}: base {stage.base!r} is not a slim Python image"
        assert Version(match[1]) in required, f"Python {match[1]} does not satisfy requires-python {required}"


def test_the_image_is_multi_stage_and_installs_the_wheel_offline() -> None:
    dockerfile = parse()
    assert len(dockerfile.stages) == 2
    build = dockerfile.stage("build")
    assert any("pip wheel" in arguments for name, arguments in build.instructions if name == "RUN")
    final_runs = " ".join(arguments for name, arguments in dockerfile.final.instructions if name == "RUN")
    assert "from=build" in final_runs
    assert "--no-index" in final_runs
    assert not dockerfile.final.copies(), "the final stage takes nothing from the build context"


def test_the_build_context_holds_exactly_what_the_build_stage_copies() -> None:
    patterns = ignore_patterns()
    assert patterns[0] == "*", ".dockerignore is an allow-list"
    allowed = {pattern[1:] for pattern in patterns if pattern.startswith("!")}
    copied = {source for sources, _ in parse().stage("build").copies() for source in sources}
    assert copied == allowed
    for source in copied:
        assert (REPO / source).exists(), source
    # The package's symlinks (ballast/runtime, ballast/internal/*) point into folders copied beside it.
    links = [path for path in (REPO / "ballast").rglob("*") if path.is_symlink()]
    assert len(links) > 5
    for link in links:
        target = (link.parent / link.readlink()).resolve().relative_to(REPO)
        assert target.parts[0] in copied, link


def test_the_reader_handles_continuations_comments_and_arg_defaults(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        "# syntax=docker/dockerfile:1\nARG V=3.12\nFROM python:${V}-slim AS b\nRUN a \\\n    && b\n"
        'FROM --platform=linux/amd64 python:$V-slim\nUSER 1:1\nENTRYPOINT ["x", "y"]\n'
    )
    dockerfile = parse(tmp_path / "Dockerfile")
    assert [stage.base for stage in dockerfile.stages] == ["python:3.12-slim", "python:3.12-slim"]
    assert dockerfile.stage("b").instructions == [("RUN", "a && b")]
    assert dockerfile.entrypoint() == ["x", "y"]
