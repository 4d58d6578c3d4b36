"""Where kwok, metrics-server and Karpenter's kwok provider are found: an override, then the cache; never a
build when told not to; a build under the Go toolchain its module needs."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ballast.runtime.envtest import AssetsNotFoundError
from ballast.runtime.envtest.tools import TOOLS, find_tool, tools_root


def test_the_cache_lives_beside_helm_under_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tools_root() == tmp_path / "ballast" / "tools"
    binary = tmp_path / "ballast" / "tools" / f"kwok-{TOOLS['kwok'].version}" / "kwok"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    assert find_tool("kwok", build=False) == binary


def test_an_override_wins_and_must_be_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "my-metrics-server"
    binary.write_text("#!/bin/sh\n")
    monkeypatch.setenv("TEST_ASSET_METRICS_SERVER", str(binary))
    with pytest.raises(AssetsNotFoundError, match=r"TEST_ASSET_METRICS_SERVER=.* is not an executable file"):
        find_tool("metrics-server", build=False)
    binary.chmod(0o755)
    assert find_tool("metrics-server", build=False) == binary


def test_a_missing_tool_names_the_command_that_builds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TEST_ASSET_KWOK", raising=False)
    with pytest.raises(AssetsNotFoundError, match="build it with `ballast-envtest tool kwok`"):
        find_tool("kwok", build=False)
    with pytest.raises(AssetsNotFoundError, match="unknown tool 'kubelet'"):
        find_tool("kubelet", build=False)


def test_karpenters_kwok_provider_is_cached_as_kwok_under_its_own_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TEST_ASSET_KARPENTER", raising=False)
    binary = tmp_path / "ballast" / "tools" / "karpenter-v1.15.0" / "kwok"
    with pytest.raises(AssetsNotFoundError, match="build it with `ballast-envtest tool karpenter`"):
        find_tool("karpenter", build=False)
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    assert find_tool("karpenter", build=False) == binary


def test_a_build_runs_under_the_toolchain_its_module_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Karpenter v1.15.0 needs Go >= 1.26.9: its build asks for go1.27.3; the others stay on the local Go."""
    seen: list[tuple[list[str], str]] = []

    def fake_run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        environment = kwargs["env"]
        seen.append((argv, environment["GOTOOLCHAIN"]))
        out = Path(environment["GOBIN"])
        out.mkdir(parents=True)
        (out / argv[-1].split("@")[0].rsplit("/", 1)[-1]).write_text("#!/bin/sh\n")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TEST_ASSET_KARPENTER", raising=False)
    monkeypatch.delenv("TEST_ASSET_KWOK", raising=False)
    monkeypatch.setattr(shutil, "which", lambda _: "/usr/bin/go")
    monkeypatch.setattr(subprocess, "run", fake_run)
    progress = io.StringIO()
    assert find_tool("karpenter", progress=progress) == tmp_path / "ballast" / "tools" / "karpenter-v1.15.0" / "kwok"
    assert find_tool("kwok", progress=progress) == tmp_path / "ballast" / "tools" / "kwok-v0.8.0" / "kwok"
    assert [(argv[-1], toolchain) for argv, toolchain in seen] == [
        ("sigs.k8s.io/karpenter/kwok@v1.15.0", "go1.27.3"),
        ("sigs.k8s.io/kwok/cmd/kwok@v0.8.0", "local"),
    ]
