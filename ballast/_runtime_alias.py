"""`ballast.runtime` is `ballast.internal.runtime`: the same module objects under a second name.

A meta-path finder answers every import of `ballast.runtime` or `ballast.runtime.<module>` with the module the
`ballast.internal.runtime` name imports (importing it first if need be), so each framework module is executed
once: one `Client` class, one metrics registry, whichever name a program or its libraries use. A second symlink
would not do: the import system would load every module a second time under the other name.

For type checkers, `ballast/runtime/` holds stubs that re-export the real modules (`hack/gen-runtime-stubs`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

ALIAS = "ballast.runtime"
TARGET = "ballast.internal.runtime"


def target_of(name: str) -> str | None:
    """The real module name behind an alias name, None for a name outside the alias."""
    if name == ALIAS or name.startswith(ALIAS + "."):
        return TARGET + name[len(ALIAS) :]
    return None


class RuntimeAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `ballast.runtime[.*]` and loads it by returning the already-imported real module."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        real = target_of(fullname)
        if real is None:
            return None
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as missing:
            if missing.name != real:
                raise  # the module exists; something it imports does not
            return None  # no such module: the import fails under the name asked for
        return importlib.machinery.ModuleSpec(fullname, self, is_package=hasattr(module, "__path__"))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        # The import system keeps a module's own `__name__`, `__spec__` and `__file__` (it only fills missing
        # ones), so the real module comes back unchanged and is bound under the alias name too.
        real = target_of(spec.name)
        assert real is not None
        return sys.modules[real]

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the real module has been executed under its own name."""


def install() -> None:
    """Put the alias ahead of the path finder (which would load a second copy from the stubs' directory); once."""
    if not any(isinstance(finder, RuntimeAlias) for finder in sys.meta_path):
        sys.meta_path.insert(0, RuntimeAlias())
