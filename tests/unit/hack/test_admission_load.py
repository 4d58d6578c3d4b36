"""tests/e2e/load.py's GoAdmissionLoad against a fake hack/admission-load: the flags it passes, its live `sent`
from the progress lines, the closing JSON document read into the AdmissionLoad interface (latencies from
milliseconds to seconds), a stop by closing stdin, and a program that dies."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import orjson
import pytest

from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.load import GoAdmissionLoad, LoadResult

DOCUMENT = {
    "sent": 1990, "failed": 2,
    "failures": [{"status": 500, "message": "Internal error occurred: failed calling webhook"},
                 {"status": 0, "message": "connection refused"}],
    "latencies_ms": {"p50": 4.2, "p90": 8.5, "p99": 31.25, "max": 120.0},
    "elapsed_seconds": 10.004, "rate_per_second": 198.92, "offered_rate": 200, "slack_ms": 20, "late": 10,
    "concurrency": 64, "max_in_flight": 7, "protocol": "HTTP/2.0",
}  # fmt: skip

FAKE = """\
import json, sys, time
open(sys.argv[1], "w").write(json.dumps(sys.argv[2:]))
for sent in (100, 200):
    print(json.dumps({"sent": sent, "failed": 0, "late": 0}), file=sys.stderr, flush=True)
print("a diagnostic line", file=sys.stderr, flush=True)
if not any(arg.startswith(("-limit=", "-duration=")) for arg in sys.argv):
    sys.stdin.read()  # runs until its stdin ends, like -stop-on-stdin-eof
if "-namespace=dies" in sys.argv:
    sys.exit(3)
print(DOCUMENT)
"""


def fake_binary(tmp_path: Path) -> tuple[Path, Path]:
    argv_file = tmp_path / "argv.json"
    script = tmp_path / "admission-load"
    body = FAKE.replace("DOCUMENT", repr(orjson.dumps(DOCUMENT).decode()))
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.argv.insert(1, {str(argv_file)!r})\n{body}")
    script.chmod(0o755)
    return script, argv_file


def environment(tmp_path: Path) -> Environment:
    admin = SimpleNamespace(ca_file=tmp_path / "ca.crt", cert_file=tmp_path / "admin.crt", key_file=tmp_path / "a.key")
    return cast(Environment, SimpleNamespace(server="https://127.0.0.1:6443", admin=admin))


def test_the_closing_document_is_read_into_seconds_and_status_message_pairs() -> None:
    result = LoadResult.parse(orjson.dumps(DOCUMENT).decode())
    assert (result.sent, result.failed, result.late) == (1990, 2, 10)
    assert result.failures == [(500, "Internal error occurred: failed calling webhook"), (0, "connection refused")]
    assert (result.p50, result.p90, result.p99, result.max) == pytest.approx((0.0042, 0.0085, 0.03125, 0.12))
    assert (result.elapsed, result.rate_per_second) == (10.004, 198.92)
    assert (result.max_in_flight, result.protocol) == (7, "HTTP/2.0")


def test_a_bounded_load_passes_its_flags_and_is_waited_for(tmp_path: Path) -> None:
    binary, argv_file = fake_binary(tmp_path)
    with GoAdmissionLoad(environment(tmp_path), "ns", rate=200, limit=2000, binary=binary) as load:
        result = load.wait(timeout=30)
    assert orjson.loads(argv_file.read_bytes()) == [
        "-server=https://127.0.0.1:6443", "-namespace=ns", f"-ca={tmp_path / 'ca.crt'}",
        f"-cert={tmp_path / 'admin.crt'}", f"-key={tmp_path / 'a.key'}", "-rate=200", "-concurrency=64",
        "-stop-on-stdin-eof", "-limit=2000",
    ]  # fmt: skip
    assert load.result is result
    assert (load.sent, load.failed, load.elapsed, load.rate_per_second, load.late) == (1990, 2, 10.004, 198.92, 10)
    assert load.failures[0] == (500, "Internal error occurred: failed calling webhook")
    assert load.p99() == pytest.approx(0.03125)
    assert load.stderr == ["a diagnostic line"]  # progress lines are not kept


def test_an_open_ended_load_follows_progress_and_stops_when_the_block_exits(tmp_path: Path) -> None:
    binary, argv_file = fake_binary(tmp_path)
    with GoAdmissionLoad(environment(tmp_path), "ns", duration=None, binary=binary) as load:
        poll_until(lambda: load.sent == 200, timeout=30, what="the second progress line")
        assert load.result is None  # still running: it waits for its stdin to end
    assert "-stop-on-stdin-eof" in orjson.loads(argv_file.read_bytes())
    assert load.sent == 1990


def test_a_program_that_fails_raises_with_what_it_said(tmp_path: Path) -> None:
    binary, _ = fake_binary(tmp_path)
    load = GoAdmissionLoad(environment(tmp_path), "dies", binary=binary)
    with pytest.raises(RuntimeError, match=r"exited 3: a diagnostic line"), load:
        pass
