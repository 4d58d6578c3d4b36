"""`ballast enroll` refuses what it cannot use before it connects (identity label keys, negative waits) and a
namespace that does not exist before it lists anything."""

from __future__ import annotations

import pytest

from ballast.internal.cmd import ballast as cli
from ballast.internal.cmd import enroll
from ballast.runtime import FakeAPI


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--identity-labels", "app,not a label!!"], 'invalid --identity-labels: invalid label key "not a label!!"'),
        (["--identity-labels", "app,tier,app"], "invalid --identity-labels: 'app' appears more than once"),
        (["--timeout", "-1"], "invalid --timeout -1: must not be negative"),
        (["--settle", "-0.5"], "invalid --settle -0.5: must not be negative"),
    ],
)
def test_bad_flags_are_refused_before_connecting(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(enroll, "connect", lambda *_, **__: pytest.fail("connected"))
    assert cli.main(["enroll", "--mode", "measure", *flags]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(message), line


def test_good_identity_labels_and_zero_waits_pass() -> None:
    flags = ["--identity-labels", "app.kubernetes.io/name, tier", "--timeout", "0", "--settle", "0"]
    args = cli.parser().parse_args(["enroll", "--mode", "measure", *flags])
    assert enroll.flag_problem(args) is None


def test_a_namespace_that_does_not_exist_is_named() -> None:
    client = FakeAPI().client()
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "web"}})
    assert enroll.namespace_problem(client, "nope") == 'namespace "nope" not found'
    assert enroll.namespace_problem(client, "web") is None
    assert enroll.namespace_problem(client, None) is None
