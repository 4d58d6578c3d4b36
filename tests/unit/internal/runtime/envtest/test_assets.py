from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ballast.runtime.envtest import assets
from ballast.runtime.envtest.assets import (
    MANIFEST,
    build_assets,
    cached_versions,
    find_assets,
    normalize_version,
)
from ballast.runtime.envtest.errors import AssetsNotFoundError


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in (
        "BALLAST_ENVTEST_ASSETS",
        "KUBEBUILDER_ASSETS",
        "BALLAST_ENVTEST_K8S_VERSION",
        "TEST_ASSET_KUBE_APISERVER",
        "TEST_ASSET_ETCD",
    ):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "cache" / "ballast" / "envtest"


@pytest.mark.parametrize(("given", "expected"), [("1.37.2", "1.37.2"), ("v1.36.3", "1.36.3"), (" v1.37.2 ", "1.37.2")])
def test_versions_are_normalized(given: str, expected: str) -> None:
    assert normalize_version(given) == expected


@pytest.mark.parametrize("bad", ["1.37", "latest", "v1.37.2-rc.1", ""])
def test_bad_versions_are_refused_with_the_expected_form(bad: str) -> None:
    with pytest.raises(AssetsNotFoundError, match=r"expected MAJOR\.MINOR\.PATCH"):
        normalize_version(bad)


def _fake_build(root: Path, version: str) -> Path:
    directory = root / version
    directory.mkdir(parents=True)
    (directory / MANIFEST).write_text(json.dumps({"kubernetes": f"v{version}"}))
    for name in ("etcd", "kube-apiserver"):
        (directory / name).write_text("#!/bin/sh\n")
    return directory


def test_cached_versions_lists_only_complete_builds_in_version_order(isolated_cache: Path) -> None:
    _fake_build(isolated_cache, "1.37.2")
    _fake_build(isolated_cache, "1.9.0")
    _fake_build(isolated_cache, "1.36.3")
    (isolated_cache / "1.38.0").mkdir()  # no manifest: an interrupted build
    assert cached_versions() == ["1.9.0", "1.36.3", "1.37.2"]


def test_find_assets_uses_the_cache_for_the_requested_version(isolated_cache: Path) -> None:
    directory = _fake_build(isolated_cache, "1.36.3")
    found = find_assets("v1.36.3", build=False)
    assert found.directory == directory
    assert found.binary("etcd") == directory / "etcd"


def test_override_order_is_ballast_then_kubebuilder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path / "kb"))
    assert find_assets(build=False).origin == "KUBEBUILDER_ASSETS"
    monkeypatch.setenv("BALLAST_ENVTEST_ASSETS", str(tmp_path / "ours"))
    found = find_assets(build=False)
    assert (found.directory, found.origin) == (tmp_path / "ours", "BALLAST_ENVTEST_ASSETS")


def test_missing_binary_error_names_the_directory_and_where_it_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BALLAST_ENVTEST_ASSETS", str(tmp_path))
    with pytest.raises(AssetsNotFoundError, match=r"kube-apiserver not found at .* \(from BALLAST_ENVTEST_ASSETS\)"):
        find_assets().binary("kube-apiserver")


def test_per_binary_variable_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    special = tmp_path / "my-etcd"
    special.write_text("#!/bin/sh\n")
    monkeypatch.setenv("BALLAST_ENVTEST_ASSETS", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("TEST_ASSET_ETCD", str(special))
    found = find_assets()
    assert found.binary("etcd") == special
    assert not found.has("kube-apiserver")


def test_uncached_version_without_build_says_how_to_build() -> None:
    with pytest.raises(AssetsNotFoundError, match=r"ballast-envtest use 1\.30\.1"):
        find_assets("1.30.1", build=False)


def test_build_without_go_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AssetsNotFoundError, match="`go` is not on PATH"):
        build_assets("1.30.1")


def test_a_cached_version_is_returned_without_building(isolated_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = _fake_build(isolated_cache, "1.30.1")
    go = Path(os.environ.get("TMPDIR", "/tmp")) / "unused"
    monkeypatch.setattr("shutil.which", lambda name: str(go))
    monkeypatch.setattr(assets, "_Builder", None)  # a build attempt would fail loudly
    assert build_assets("1.30.1") == directory


def test_staging_modules_are_read_from_the_release_go_mod() -> None:
    go_mod = """
replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/cri-streaming => ./staging/src/k8s.io/cri-streaming
	github.com/foo/bar => github.com/foo/bar v1.0.0
)
"""
    assert assets._STAGING_REPLACE.findall(go_mod) == ["k8s.io/api", "k8s.io/cri-streaming"]
