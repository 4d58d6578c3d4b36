"""The `ballast` command line: subcommands, global flags on either side of them, and usage errors exiting 1."""

from __future__ import annotations

import pytest

from ballast.internal.cmd import ballast as cli


def test_global_flags_go_before_or_after_the_subcommand() -> None:
    before = cli.parser().parse_args(["--context", "prod", "--kubeconfig", "/k", "enroll", "--mode", "measure"])
    assert (before.context, before.kubeconfig, before.mode) == ("prod", "/k", "measure")
    after = cli.parser().parse_args(["profiles", "-o", "wide", "--context", "dev"])
    assert (after.context, after.kubeconfig, after.output) == ("dev", None, "wide")


def test_enroll_defaults_are_the_scripts() -> None:
    args = cli.parser().parse_args(["enroll", "--mode", "measure"])
    assert (args.apply, args.namespace, args.ignore, args.no_restart, args.remode) == (False, None, None, False, False)
    assert (args.timeout, args.settle, args.identity_labels) == (300, 8.0, None)


def test_no_subcommand_prints_help_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 1
    assert "enroll" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["profiles", "-o", "table"], ["enroll", "--bogus"], ["explain"], ["nope"]])
def test_usage_errors_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 1
    assert "error:" in capsys.readouterr().err


def test_a_bad_pod_reference_exits_1_before_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", "deployment/shop/web"]) == 1
    assert capsys.readouterr().err.startswith("ballast explain: expected pod/NAMESPACE/NAME")


def test_an_unreadable_kubeconfig_exits_1_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["profiles", "--kubeconfig", "/nonexistent/kubeconfig"]) == 1
    assert capsys.readouterr().err.startswith("ballast: ")
