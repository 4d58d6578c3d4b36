"""The console scripts without the operator's dependencies: they name the extra to install and exit 2, rather
than failing on an ImportError in the wiring; with them, they run the command."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from typing import Any

import pytest

from ballast.internal.cmd import entry


def without(monkeypatch: pytest.MonkeyPatch, *absent: str) -> None:
    found = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> importlib.machinery.ModuleSpec | None:
        return None if name in absent else found(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize("command", ["ballastd", "ballast"])
def test_a_missing_operator_dependency_names_the_extra(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    without(monkeypatch, "redis", "re2")
    assert getattr(entry, command)(["--version"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"{command}: the operator's dependencies are not installed (missing: redis, google-re2); "
        "install ballast[operator]: pip install 'ballast[operator]'\n"
    )


@pytest.mark.parametrize("command", ["ballastd", "ballast"])
def test_with_every_dependency_the_command_runs(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert entry.missing_operator_packages() == []
    with pytest.raises(SystemExit) as exited:  # argparse's --version
        getattr(entry, command)(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f"{command} ")
