"""Every source file has one module name (docs/design.md, layout): `ballast.runtime` is the framework's only
name, `ballast.internal` is a real package whose sub-packages are symlinks to `internal/`'s, the framework's
excepted, and no file is executed twice under two names."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pkgutil
import subprocess
import sys
from collections import defaultdict

import pytest

import ballast
from tests.paths import REPOSITORY

PACKAGE = REPOSITORY / "ballast"


def test_the_old_framework_path_does_not_import() -> None:
    assert importlib.util.find_spec("ballast.internal.runtime") is None
    with pytest.raises(ImportError):
        importlib.import_module("ballast.internal.runtime")


def test_ballast_internal_links_every_package_of_internal_but_the_framework() -> None:
    wanted = {path.name for path in (REPOSITORY / "internal").iterdir() if (path / "__init__.py").is_file()}
    linked = {path.name for path in (PACKAGE / "internal").iterdir() if path.is_symlink() and path.is_dir()}
    assert "runtime" in wanted
    assert linked == wanted - {"runtime"}
    for name in linked:
        assert os.readlink(PACKAGE / "internal" / name) == f"../../internal/{name}"
    assert (PACKAGE / "runtime").resolve() == REPOSITORY / "internal" / "runtime"


def test_no_source_file_is_loaded_under_two_module_names() -> None:
    # In a child process: every module under ballast.* imported, then each loaded file counted by realpath.
    script = """
import importlib, json, pkgutil, sys
import ballast
failed = []
for info in pkgutil.walk_packages(ballast.__path__, "ballast.", onerror=failed.append):
    if not info.name.endswith(("__main__", "reaper")):
        importlib.import_module(info.name)
files = {name: getattr(module, "__file__", None) for name, module in list(sys.modules.items())
         if name == "ballast" or name.startswith("ballast.")}
print(json.dumps({"failed": failed, "files": files}))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPOSITORY, capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert loaded["failed"] == []
    names_by_file: dict[str, list[str]] = defaultdict(list)
    for name, file in loaded["files"].items():
        if file:
            names_by_file[os.path.realpath(file)].append(name)
    assert len(names_by_file) > 300  # the walk reached the whole tree
    assert {file: names for file, names in names_by_file.items() if len(names) > 1} == {}
    assert not [name for name in loaded["files"] if name.startswith("ballast.internal.runtime")]
    assert "ballast.runtime.manager" in loaded["files"]


def test_the_walk_sees_the_framework_once() -> None:
    names = [info.name for info in pkgutil.iter_modules(ballast.__path__)]
    assert names.count("runtime") == 1
    assert "runtime" not in [
        info.name for info in pkgutil.iter_modules(importlib.import_module("ballast.internal").__path__)
    ]
