"""Expected failures of `ballast` and `ballastd` end in one line naming the cause: an API server that never
answers (the server and the deadline), a kubeconfig that is not one or is missing (the file), a reader that went
away (nothing at all); `--verbose` adds the traceback."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.internal.cmd import failures
from ballast.internal.cmd.ballast import request_timeout
from tests.unit.internal.runtime.silent import SilentServer, silent_server

SCRIPTS = Path(sys.executable).parent


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    with silent_server() as server:
        yield server


def kubeconfig_for(url: str, path: Path) -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: '{url}', insecure-skip-tls-verify: true}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    return path


def run(command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPTS / command), *args], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
    )


def test_ballast_against_a_silent_server_names_it_and_the_deadline(silent: SilentServer, tmp_path: Path) -> None:
    kubeconfig = kubeconfig_for(silent.url, tmp_path / "kubeconfig")
    result = run("ballast", "--kubeconfig", str(kubeconfig), "--request-timeout", "1s", "profiles")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"ballast: the API server {silent.url} did not answer within 1s "
        "(GET /apis/ballast.tightlinesoftware.com/v1): no answer (TCP connect, TLS handshake or response)"
    ]


def test_ballast_reports_a_silent_server_after_one_connection_by_default(silent: SilentServer, tmp_path: Path) -> None:
    kubeconfig = kubeconfig_for(silent.url, tmp_path / "kubeconfig")
    result = run("ballast", "profiles", "--kubeconfig", str(kubeconfig))
    assert result.stderr.splitlines() == [
        f"ballast: the API server {silent.url} did not answer within 10s "
        "(GET /apis/ballast.tightlinesoftware.com/v1): no answer (TCP connect, TLS handshake or response)"
    ]
    assert len(silent.accepted) == 1  # a person is waiting: one connect deadline, not five


def test_a_garbage_kubeconfig_is_named_in_one_line(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.kubeconfig"
    garbage.write_bytes(b"\xca\xfe" + bytes(range(200)))
    expected = f'error loading config file "{garbage}": not a text file (byte 0xca at offset 0 is not UTF-8)'
    for command, args in (("ballast", ["profiles"]), ("ballastd", []), ("ballastd", ["apply-crds"])):
        result = run(command, "--kubeconfig", str(garbage), *args)
        assert (result.returncode, result.stderr.splitlines()) == (1, [f"{command}: {expected}"]), command


def test_a_missing_kubeconfig_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    for command, args in (("ballast", ["explain", "pod/a/b"]), ("ballastd", ["uninstall"])):
        result = run(command, "--kubeconfig", str(missing), *args)
        assert result.returncode == 1
        [line] = result.stderr.splitlines()
        assert line.startswith(f'{command}: error loading config file "{missing}": '), line


def test_verbose_adds_the_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    result = run("ballastd", "--kubeconfig", str(missing), "--verbose", "apply-crds")
    assert result.returncode == 1
    assert result.stderr.startswith("Traceback (most recent call last):")
    assert result.stderr.splitlines()[-1].startswith(f'ballastd: error loading config file "{missing}"')


def test_an_unexpected_error_is_one_line_with_its_type_and_the_hint(capsys: pytest.CaptureFixture[str]) -> None:
    def broken() -> int:
        raise KeyError("spec")

    assert failures.guarded(broken, program="ballast", verbose=False) == failures.EXIT_FAILURE
    assert capsys.readouterr().err == "ballast: KeyError: 'spec' (--verbose prints the traceback)\n"


def test_an_expected_error_is_its_message_alone(capsys: pytest.CaptureFixture[str]) -> None:
    def refused() -> int:
        raise ConnectionError("cannot reach the API server https://127.0.0.1:1: connection refused")

    assert failures.guarded(refused, program="ballast", verbose=False) == failures.EXIT_FAILURE
    assert capsys.readouterr().err == "ballast: cannot reach the API server https://127.0.0.1:1: connection refused\n"


def test_a_closed_pipe_ends_quietly(capsys: pytest.CaptureFixture[str]) -> None:
    def writes_to_a_closed_pipe() -> int:
        raise BrokenPipeError(32, "Broken pipe")

    assert failures.guarded(writes_to_a_closed_pipe, program="ballast", verbose=False) == failures.EXIT_BROKEN_PIPE
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("text", "seconds"), [("1", 1.0), ("2.5", 2.5), ("30s", 30.0), ("1m", 60.0), ("0", 0.0)])
def test_request_timeout_takes_kubectls_forms(text: str, seconds: float) -> None:
    assert request_timeout(text) == seconds


@pytest.mark.parametrize("text", ["-1s", "soon", "10 s", ""])
def test_request_timeout_refuses_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=repr(text)):
        request_timeout(text)
