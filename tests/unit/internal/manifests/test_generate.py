"""`hack/gen-manifests` (`ballast.internal.manifests.generate`): the committed files are what the code generates;
`--check` names every stale, missing or unexpected file, and writing touches only those."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.ballast.v1 import ClusterResourcePolicy, ResourcePolicy
from ballast.internal.manifests import ballast_crds as crds
from ballast.internal.manifests import generate, rbac, webhooks
from ballast.internal.manifests.ballast_crds import crd_filename
from ballast.runtime.crdgen import render_crd
from tests.paths import REPOSITORY

GEN_MANIFESTS = REPOSITORY / "hack" / "gen-manifests"


def _gen_manifests(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GEN_MANIFESTS), *args], capture_output=True, text=True, check=False, cwd=cwd
    )


def test_committed_manifests_are_what_the_code_generates() -> None:
    result = _gen_manifests("--check")

    assert result.returncode == 0, f"{result.stderr}\nrun hack/gen-manifests and commit the result"


def test_one_entry_point_generates_crds_rbac_and_webhook_configurations() -> None:
    files = {str(path.relative_to(REPOSITORY)) for path in generate.generated(REPOSITORY)}
    crd_files = {crd_filename(Balancer), crd_filename(ResourcePolicy)}

    assert {f"config/crd/bases/{name}" for name in crd_files} <= files
    assert {f"config/helm/ballast/crds/{name}" for name in crd_files} <= files
    assert {
        "config/crd/kustomization.yaml",
        "config/rbac/kustomization.yaml",
        "config/rbac/role.yaml",
        "config/rbac/uninstall/uninstall_role.yaml",
        "config/helm/ballast/templates/rbac.yaml",
        "config/webhook/manifests.yaml",
        "config/helm/ballast/templates/webhookconfigurations.yaml",
    } <= files
    assert all(name.startswith("config/") for name in files)
    assert generate.OWNED == (crds.CONFIG_OUTPUT, crds.HELM_OUTPUT, rbac.CONFIG_OUTPUT)


def test_check_names_every_missing_file_of_an_empty_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert generate.main(["--check"], root=tmp_path) == 1

    reported = capsys.readouterr().err.splitlines()
    assert reported == [f"stale or missing: {path} (run hack/gen-manifests)" for path in generate.generated(tmp_path)]
    assert not list(tmp_path.iterdir())  # --check writes nothing


def test_check_reports_and_writing_fixes_exactly_the_stale_missing_and_unexpected_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert generate.main([], root=tmp_path) == 0
    assert generate.main(["--check"], root=tmp_path) == 0
    role = tmp_path / rbac.CONFIG_OUTPUT / "role.yaml"
    role.write_text(role.read_text().replace("- patch\n", "- update\n", 1))
    manifests = tmp_path / webhooks.CONFIG_OUTPUT
    manifests.write_text(manifests.read_text().replace("timeoutSeconds: 10", "timeoutSeconds: 30"))
    missing = tmp_path / crds.CONFIG_OUTPUT / crd_filename(Balancer)
    missing.unlink()
    swapped = tmp_path / crds.HELM_OUTPUT / crd_filename(ResourcePolicy)
    swapped.write_text(render_crd(crds.crd_for(ClusterResourcePolicy), crds.HEADER))
    extra_role = tmp_path / rbac.CONFIG_OUTPUT / "extra_role.yaml"
    extra_role.write_text("kind: ClusterRole\n")
    gone_crd = tmp_path / crds.HELM_OUTPUT / "example.com_gone.yaml"
    gone_crd.write_text("kind: CustomResourceDefinition\n")
    unrelated = tmp_path / "config" / "webhook" / "service.yaml"  # not in a generated-only directory
    unrelated.write_text("keep: me\n")
    capsys.readouterr()

    assert generate.main(["--check"], root=tmp_path) == 1
    reported = capsys.readouterr().err.splitlines()
    stale = [role, manifests, missing, swapped]
    assert sorted(reported) == sorted(
        [f"stale or missing: {path} (run hack/gen-manifests)" for path in stale]
        + [f"unexpected: {path} (run hack/gen-manifests)" for path in (extra_role, gone_crd)]
    )

    assert generate.main([], root=tmp_path) == 0
    done = capsys.readouterr().out.splitlines()
    assert sorted(done) == sorted([f"removed {extra_role}", f"removed {gone_crd}", *(f"wrote {p}" for p in stale)])
    assert not extra_role.exists()
    assert not gone_crd.exists()
    assert unrelated.read_text() == "keep: me\n"
    assert generate.main(["--check"], root=tmp_path) == 0
    assert generate.write(tmp_path) == ([], [])  # unchanged files are left alone


def test_hack_gen_manifests_writes_a_root_and_checks_this_checkout_by_default(tmp_path: Path) -> None:
    wrote = _gen_manifests("--root", str(tmp_path))
    check = _gen_manifests("--check", cwd=tmp_path)

    assert wrote.returncode == 0, wrote.stderr
    assert sorted(wrote.stdout.splitlines()) == sorted(f"wrote {path}" for path in generate.generated(tmp_path))
    assert check.returncode == 0, check.stderr  # the default root is the repository's, wherever it runs from
    assert GEN_MANIFESTS.stat().st_mode & 0o111
    assert GEN_MANIFESTS.read_text().startswith("#!/usr/bin/env python3\n")
