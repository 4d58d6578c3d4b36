""".ci/run's machinery, with fake chains: a chain runs its targets in order in the background, the run waits for
a chain or one of its targets, a failed chain ends the run with its exit code and its log, an ending run leaves no
chain behind, and `make test` runs each suite once when told what already passed."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.paths import REPOSITORY

CHAINS = REPOSITORY / ".ci" / "chains.sh"
RUN = REPOSITORY / ".ci" / "run"
FAKE_MAKE = """#!/usr/bin/env bash
case $1 in
  fail) echo "boom from $1"; exit 3 ;;
  slow) sleep 1 ;;
  hang) sleep 300 & echo $! > "$CI_LOGS/hanging.pid"; wait ;;
esac
echo "made $1"
"""


def _drive(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "fake-make"
    fake.write_text(FAKE_MAKE)
    fake.chmod(0o755)
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    prelude = f"set -euo pipefail\nsource {CHAINS}\ntrap stop_chains EXIT\n"
    return subprocess.run(
        ["bash", "-c", prelude + script],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "CI_MAKE": str(fake), "CI_LOGS": str(logs)},
    )


def test_chains_run_their_targets_in_order_beside_the_foreground(tmp_path: Path) -> None:
    result = _drive(
        tmp_path,
        'start_chain tools slow helm e2e\nstart_chain oracle oracle\nphase "lint" true\n'
        "wait_step tools helm\nwait_chain oracle\nwait_chain tools\nprint_timings\n",
    )
    assert result.returncode == 0, result.stderr
    log = (tmp_path / "logs" / "tools.log").read_text()
    assert [line for line in log.splitlines() if line.startswith("made")] == ["made slow", "made helm", "made e2e"]
    assert "--- chain tools: helm done" in result.stdout
    timings = result.stdout.split("--- timings\n", 1)[1]
    assert re.search(r"^lint +0m0\ds$", timings, re.M)
    assert re.search(r"^total +\dm\d\ds$", timings, re.M)


@pytest.mark.parametrize("wait", ["wait_chain tools", "wait_step tools after"])
def test_a_failed_chain_ends_the_run_with_its_exit_code_and_its_log(tmp_path: Path, wait: str) -> None:
    result = _drive(tmp_path, f'start_chain tools first fail after\nphase "lint" true\n{wait}\necho "not reached"\n')
    assert result.returncode == 3
    assert "--- chain tools FAILED (exit 3)" in result.stderr
    assert "boom from fail" in result.stderr  # the log, printed
    assert "made after" not in result.stderr  # the chain stopped at the failure
    assert "not reached" not in result.stdout


def test_a_run_that_fails_in_the_foreground_stops_its_chains_and_their_builds(tmp_path: Path) -> None:
    result = _drive(tmp_path, 'start_chain tools hang\nuntil [[ -s "$CI_LOGS/hanging.pid" ]]; do sleep 0.1; done\n'
                    'phase "lint" false\n')  # fmt: skip
    assert result.returncode == 1
    assert "--- stopping chain tools" in result.stderr
    build = int((tmp_path / "logs" / "hanging.pid").read_text())
    deadline = time.monotonic() + 10
    while _alive(build) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(build), "the chain's build outlived the run"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_marks_of_a_previous_run_do_not_count(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "tools.helm.done").touch()
    result = _drive(tmp_path, "start_chain tools fail helm\nwait_step tools helm\n")
    assert result.returncode == 3


def test_the_run_parses_and_leaves_only_the_e2e_suite_to_make_test() -> None:
    subprocess.run(["bash", "-n", str(RUN)], check=True)
    makefile = (REPOSITORY / "Makefile").read_text()
    suites = re.search(r"^TEST_SUITES := (.*)$", makefile, re.M)
    assert suites is not None
    run = RUN.read_text()
    passed = re.search(r'make test ALREADY_PASSED="([^"]*)"', run)
    assert passed is not None
    assert set(suites.group(1).split()) - set(passed.group(1).split()) == {"test-e2e"}
    for suite in passed.group(1).split():  # each one it claims has a phase of its own before
        assert re.search(rf"^phase .* make {suite}\b", run, re.M), suite


def _dry_make(*arguments: str) -> str:
    return subprocess.run(
        ["make", "-n", "-C", str(REPOSITORY), *arguments], capture_output=True, text=True, check=True
    ).stdout


def test_make_test_runs_only_what_has_not_passed() -> None:
    everything = _dry_make("test")
    rest = _dry_make("test", "ALREADY_PASSED=lint typecheck unit packaging integration")
    assert "ruff check" in everything
    assert "tests/unit" in everything
    assert "ruff check" not in rest
    assert "tests/unit" not in rest
    assert "tests/integration" not in rest
    assert "tests/e2e" in rest


FAKE_ENVTEST = """#!/usr/bin/env bash
shift 2  # netns --
echo "$*" >> "$RUNS"
case "$*" in *"$EXIT_ON"*) exit "$EXIT_CODE" ;; esac
"""


def _run_suite(tmp_path: Path, *arguments: str, exit_on: str = "no such run", code: int = 0) -> tuple[int, list[str]]:
    """The integration/e2e recipe for real, with a fake `ballast-envtest` that records each pytest command line
    (prerequisites not remade: `make -o`)."""
    fake = tmp_path / "ballast-envtest"
    fake.write_text(FAKE_ENVTEST)
    fake.chmod(0o755)
    runs = tmp_path / "runs"
    result = subprocess.run(
        ["make", "-s", "-C", str(REPOSITORY), "-o", "venv", "-o", "envtest", "-o", "helm", "-o", "e2e-tools",
         "-o", "real-node-tools", f"BIN={tmp_path}", "PY=python", *arguments],
        capture_output=True, text=True, check=False,
        env={**os.environ, "RUNS": str(runs), "EXIT_ON": exit_on, "EXIT_CODE": str(code)},
    )  # fmt: skip
    return result.returncode, runs.read_text().splitlines() if runs.exists() else []


def test_the_parallel_suites_run_the_alone_tests_after_the_workers(tmp_path: Path) -> None:
    code, runs = _run_suite(tmp_path, "integration")
    assert code == 0
    assert runs == [
        "python -m pytest -n 2 --dist loadfile -m not alone tests/integration docs/examples/cronjob",
        "python -m pytest -m alone tests/integration docs/examples/cronjob",
    ]


def test_one_process_runs_everything_in_order_when_workers_is_zero(tmp_path: Path) -> None:
    code, runs = _run_suite(tmp_path, "test-e2e", "E2E_WORKERS=0")
    assert (code, runs) == (0, ["python -m pytest tests/e2e"])


@pytest.mark.parametrize(("part", "expected"), [("shared", "-m not alone"), ("alone", "-m alone")])
def test_one_half_at_a_time(tmp_path: Path, part: str, expected: str) -> None:
    code, runs = _run_suite(tmp_path, "test-e2e", f"TEST_PART={part}")
    assert code == 0
    assert len(runs) == 1
    assert expected in runs[0]


def test_a_half_with_nothing_selected_passes_and_a_failed_half_stops_the_suite(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert _run_suite(tmp_path / "a", "integration", exit_on="-m alone", code=5)[0] == 0
    (tmp_path / "b").mkdir()
    code, runs = _run_suite(tmp_path / "b", "integration", exit_on="not alone", code=1)
    assert code != 0
    assert len(runs) == 1  # the alone half never started
