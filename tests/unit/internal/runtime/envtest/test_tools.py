"""Where kwok and metrics-server are found: an override, then the cache; never a build when told not to."""

from __future__ import annotations

from pathlib import Path

import pytest

from ballast.internal.runtime.envtest import AssetsNotFoundError
from ballast.internal.runtime.envtest.tools import TOOLS, find_tool, tools_root


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
