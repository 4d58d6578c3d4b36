from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ballast import __version__
from ballast.internal.cmd import ballast as ballast_cli
from ballast.internal.cmd import ballastd
from ballast.runtime.crd import cli as crdgen_cli
from ballast.runtime.envtest import cli as envtest_cli


@pytest.mark.parametrize("main", [ballastd.main, ballast_cli.main, envtest_cli.main, crdgen_cli.main])
def test_every_command_reports_its_version(main: object, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])  # type: ignore[operator]
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip().endswith(__version__)


@pytest.mark.parametrize("command", ["ballastd", "ballast", "ballast-envtest", "ballast-crdgen"])
def test_console_scripts_are_installed_with_help(command: str) -> None:
    scripts = Path(sys.executable).parent
    result = subprocess.run([str(scripts / command), "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout.startswith(f"usage: {command}")


def test_use_installed_only_prints_the_asset_directory_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BALLAST_ENVTEST_ASSETS", str(tmp_path))
    assert envtest_cli.main(["use", "--installed-only"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == str(tmp_path)


def test_envtest_errors_become_one_clear_line_and_exit_code_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("BALLAST_ENVTEST_ASSETS", raising=False)
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert envtest_cli.main(["use", "1.30.1", "--installed-only"]) == 1
    assert capsys.readouterr().err.startswith("ballast-envtest: no control-plane binaries for Kubernetes v1.30.1")


def test_ballastd_help_says_metrics_are_off_by_default() -> None:
    scripts = Path(sys.executable).parent
    result = subprocess.run([str(scripts / "ballastd"), "--help"], capture_output=True, text=True, check=True)
    flat = " ".join(result.stdout.split())
    assert (
        "--metrics-bind-address METRICS_BIND_ADDRESS serve Prometheus /metrics there: :8443 for HTTPS, :8080 for "
        "HTTP (default: 0, metrics off" in flat
    )
