"""`ballast-crdgen`: CRDs and RBAC from the code, as `controller-gen crd` and `controller-gen rbac` write them.

ballast-crdgen crd TARGET [TARGET ...] -o DIR [--check]
    One `<group>_<plural>.yaml` per kind into DIR. A TARGET is `module:Kind` (one CustomResource subclass) or
    `module` (every CustomResource subclass with a `KIND` defined in that module; for a package, those of its
    names defined in the package or its submodules).
ballast-crdgen rbac MODULE [MODULE ...] --role-name NAME -o FILE [--check]
    One ClusterRole NAME into FILE, from the rules the modules declare (`@rbac(...)` on a reconciler, or a
    module-level `RBAC_RULES` list: `ballast.runtime.rbacgen`), merged and sorted as controller-gen does.

With `--check` nothing is written: the exit status is 1, and each file that differs or is missing is named on
stderr, when the output is out of date. Bad input (a module that does not import, a name that is not a
CustomResource, a kind the API server would refuse) exits 2 with a message naming it. The current directory is
importable, as with `python -m`.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from ballast import __version__
from ballast.runtime import rbacgen

from .customresource import CustomResource
from .generate import HEADER, rendered_crds, write_files
from .schema import StructuralSchemaError

PROG = "ballast-crdgen"


class UsageError(Exception):
    """Input the command cannot use: the message names it."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="CustomResourceDefinitions and RBAC from typed kinds and reconcilers (like controller-gen).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    crd = commands.add_parser("crd", help="write one CRD per kind into a directory")
    crd.add_argument("targets", nargs="+", metavar="TARGET", help="module:Kind, or a module for all its kinds")
    crd.add_argument("-o", "--output", required=True, metavar="DIR", help="directory of the CRD files")
    crd.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file differs or is missing")

    rbac = commands.add_parser("rbac", help="write one ClusterRole from the rules the modules declare")
    rbac.add_argument("modules", nargs="+", metavar="MODULE", help="a module declaring rules")
    rbac.add_argument("--role-name", required=True, metavar="NAME", help="the ClusterRole's name")
    rbac.add_argument("-o", "--output", required=True, metavar="FILE", help="the ClusterRole's file")
    rbac.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file differs or is missing")
    return parser


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise UsageError(f"cannot import module {name!r}: {error}") from error
    except Exception as error:  # the user's module failed while running: say which, and how
        raise UsageError(f"cannot import module {name!r}: {type(error).__name__}: {error}") from error


def kinds_of(target: str) -> list[type[CustomResource]]:
    """The kinds a TARGET names: `module:Kind` (a dotted name inside the module is followed), or every concrete
    CustomResource subclass (one with a `KIND`) a module defines — for a package, every one among its names that
    the package or one of its submodules defines. Raises UsageError naming what is wrong."""
    module_name, colon, attribute = target.partition(":")
    if not module_name or (colon and not attribute):
        raise UsageError(f"{target!r} is neither module:Kind nor a module")
    module = _import(module_name)
    if not colon:
        found = [
            value
            for value in vars(module).values()
            if inspect.isclass(value)
            and issubclass(value, CustomResource)
            and _defined_in(value, module)
            and "KIND" in vars(value)
        ]
        if not found:
            raise UsageError(f"module {module_name!r} defines no CustomResource subclass with a KIND")
        return found
    value: object = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise UsageError(f"module {module_name!r} has no {attribute!r}")
        value = getattr(value, part)
    if not (inspect.isclass(value) and issubclass(value, CustomResource)):
        raise UsageError(f"{target} is not a CustomResource subclass (it is {type(value).__name__} {value!r})")
    if "KIND" not in vars(value):
        raise UsageError(f"{target} declares no KIND: it is a base class, not a kind")
    return [value]


def _defined_in(kind: type, module: ModuleType) -> bool:
    # a package's kinds are those its own modules define (`api/v1/__init__.py` importing `api/v1/widget.py`)
    package = hasattr(module, "__path__")
    return kind.__module__ == module.__name__ or (package and kind.__module__.startswith(module.__name__ + "."))


def _crd(targets: Sequence[str], output: Path, *, check: bool) -> int:
    kinds: list[type[CustomResource]] = []
    for target in targets:
        kinds.extend(kind for kind in kinds_of(target) if kind not in kinds)
    try:
        files = rendered_crds(kinds, HEADER)
    except (StructuralSchemaError, TypeError, ValueError) as error:
        raise UsageError(str(error)) from error
    return _write(output, files, check=check)


def _rbac(modules: Sequence[str], role_name: str, output: Path, *, check: bool) -> int:
    rules: list[rbacgen.PolicyRule] = []
    for name in modules:
        module = _import(name)
        try:
            declared = rbacgen.declared_rules(module)
        except TypeError as error:
            raise UsageError(str(error)) from error
        if not declared:
            raise UsageError(f"module {name!r} declares no RBAC rules (@rbac(...) or {rbacgen.RBAC_RULES})")
        rules.extend(declared)
    text = HEADER + rbacgen.yaml_document(rbacgen.cluster_role(role_name, rules))
    return _write(output.parent, {output.name: text}, check=check)


def _write(directory: Path, files: dict[str, str], *, check: bool) -> int:
    changed = write_files(directory, files, check=check)
    if not check:
        for path in changed:
            print(f"wrote {path}")
        return 0
    for path in changed:
        print(f"{PROG}: {'out of date' if path.exists() else 'missing'}: {path}", file=sys.stderr)
    if changed:
        print(f"{PROG}: run it without --check to write them", file=sys.stderr)
    return 1 if changed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: `sys.argv[1:]`); returns the exit status: 0 done (or up to date),
    1 `--check` found files out of date, 2 bad input."""
    args = _parser().parse_args(argv)
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # user modules of the project it runs in, as `python -m` finds them
    try:
        if args.command == "crd":
            return _crd(args.targets, Path(args.output), check=args.check)
        return _rbac(args.modules, args.role_name, Path(args.output), check=args.check)
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

__all__ = [
    "PROG",
    "UsageError",
    "kinds_of",
    "main",
]
