"""Where the real node's kubelet and containerd are found: the cache under XDG_CACHE_HOME, keyed by version;
never a build when told not to, and a missing piece names the command that builds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ballast.runtime.envtest import AssetsNotFoundError
from ballast.runtime.envtest.assets import DEFAULT_KUBERNETES_VERSION
from ballast.runtime.envtest.nodebuild import CONTAINERD_VERSION, NODE_TOOLS, find_node_tool


def test_a_cached_build_is_found_by_name_and_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("BALLAST_ENVTEST_K8S_VERSION", raising=False)
    tools = tmp_path / "ballast" / "tools"
    (tools / f"kubelet-v{DEFAULT_KUBERNETES_VERSION}").mkdir(parents=True)
    (tools / f"kubelet-v{DEFAULT_KUBERNETES_VERSION}" / "kubelet").write_text("")
    assert find_node_tool("kubelet", build=False) == tools / f"kubelet-v{DEFAULT_KUBERNETES_VERSION}" / "kubelet"
    with pytest.raises(AssetsNotFoundError, match=r"kubelet v1\.36\.0 is not in .*`ballast-envtest tool kubelet`"):
        find_node_tool("kubelet", version="1.36.0", build=False)


def test_containerd_needs_its_shim_and_ctr_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    directory = tmp_path / "ballast" / "tools" / f"containerd-v{CONTAINERD_VERSION}"
    directory.mkdir(parents=True)
    (directory / "containerd").write_text("")
    with pytest.raises(AssetsNotFoundError, match="make real-node-tools"):
        find_node_tool("containerd", build=False)  # a half-copied directory is not a build
    for name in NODE_TOOLS["containerd"].executables:
        (directory / name).write_text("")
    assert find_node_tool("containerd", build=False) == directory / "containerd"


def test_an_unknown_tool_is_named() -> None:
    with pytest.raises(AssetsNotFoundError, match=r"unknown node tool 'kubectl': expected one of kubelet, containerd"):
        find_node_tool("kubectl", build=False)
