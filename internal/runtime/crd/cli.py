"""`ballast-crdgen`: CRDs and RBAC from the code, as `controller-gen crd` and `controller-gen rbac` write them.

ballast-crdgen crd TARGET [TARGET ...] -o DIR [--check]
    One `<group>_<plural>.yaml` per kind into DIR. A TARGET is `module:Kind` (one CustomResource subclass) or
    `module` (every CustomResource subclass with a `KIND` defined in that module; for a package, those of its
    names defined in the package or its submodules).
ballast-crdgen rbac MODULE [MODULE ...] --role-name NAME -o FILE [--check]
    One ClusterRole NAME into FILE, from the rules the modules declare (`@rbac(...)` on a reconciler, or a
    module-level `RBAC_RULES` list: `ballast.runtime.rbacgen`), merged and sorted as controller-gen does.
ballast-crdgen webhook TARGET [TARGET ...] -o FILE [--check]
    The Mutating/ValidatingWebhookConfiguration controller-gen's `webhook` writes (config/webhook/manifests.yaml)
    for the webhooks the targets register: `module:function` is a setup function taking the manager
    (`setup_cronjob_webhook_with_manager(manager)`: it is called with a stand-in that records what
    `WebhookBuilder(...).complete()` registers), `module` a module-level `WEBHOOKS` list of `KindWebhooks`.

A module may be given by its source path as well (controller-gen's `paths=` habit): `api/v1/cronjob.py`, `api/v1`
(a package directory), or `./api/...` (every module under the directory) — each imported under the dotted name
its package directories (those with an `__init__.py`) give it.

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
from typing import Any

from ballast import __version__
from ballast.runtime import rbacgen
from ballast.runtime.webhookbuilder import KindWebhooks, webhook_configurations

from .customresource import CustomResource
from .generate import HEADER, rendered_crds, write_files
from .schema import StructuralSchemaError

PROG = "ballast-crdgen"
WEBHOOKS = "WEBHOOKS"
"""The module-level name `ballast-crdgen webhook MODULE` reads: a sequence of `KindWebhooks`."""


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

    webhook = commands.add_parser("webhook", help="write the webhook configurations of the registered webhooks")
    webhook.add_argument(
        "targets", nargs="+", metavar="TARGET", help="module:setup_function, or a module with WEBHOOKS"
    )
    webhook.add_argument("-o", "--output", required=True, metavar="FILE", help="e.g. config/webhook/manifests.yaml")
    webhook.add_argument("--service-name", default="webhook-service", help="the webhook Service (%(default)s)")
    webhook.add_argument("--service-namespace", default="system", help="its namespace (%(default)s)")
    webhook.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file differs or is missing")
    return parser


def module_names(target: str) -> list[str]:
    """The module names a module TARGET (the part before any `:`) stands for: a dotted name as it is; a source
    path — a `.py` file, a package directory, or `DIR/...` for every module under DIR — as the dotted name its
    package directories give it, their parent made importable. Raises UsageError for a path that is not there."""
    recursive = target.endswith("/...")
    path_text = target.removesuffix("/...") if recursive else target
    looks_like_path = recursive or path_text.endswith(".py") or "/" in path_text or path_text in (".", "..")
    if not looks_like_path:
        return [target]
    path = Path(path_text).resolve()
    if not path.exists():
        raise UsageError(f"no such source path: {path_text}")
    if recursive:
        if not path.is_dir():
            raise UsageError(f"{target}: {path_text} is not a directory")
        files = sorted(p for p in path.rglob("*.py") if p.name != "__init__.py" and not _test_module(p.stem))
        packages = sorted(p.parent for p in path.rglob("__init__.py"))
        return [_module_of(p) for p in [*packages, *files]]
    return [_module_of(path)]


def _test_module(stem: str) -> bool:
    # pytest's files are not the project's code: importing them needs pytest and runs their fixtures' imports.
    return stem == "conftest" or stem.startswith("test_") or stem.endswith("_test")


def _module_of(path: Path) -> str:
    if path.is_dir() and not (path / "__init__.py").exists():
        raise UsageError(f"{path} is a directory without __init__.py, not a package")
    parts = [path.stem] if path.is_file() else [path.name]
    root = path.parent
    while (root / "__init__.py").exists():
        parts.insert(0, root.name)
        root = root.parent
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return ".".join(parts)


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
    the package or one of its submodules defines. The module may be a source path (`module_names`). Raises
    UsageError naming what is wrong."""
    module_part, colon, attribute = target.rpartition(":") if _has_attribute(target) else (target, "", "")
    if not module_part or (colon and not attribute):
        raise UsageError(f"{target!r} is neither module:Kind nor a module")
    names = module_names(module_part)
    if len(names) > 1:
        if colon:
            raise UsageError(f"{target!r}: a Kind names one module, not every module under a directory")
        found: list[type[CustomResource]] = []
        for name in names:
            found.extend(kind for kind in _kinds_in(_import(name)) if kind not in found)
        if not found:
            raise UsageError(f"no module under {module_part} defines a CustomResource subclass with a KIND")
        return found
    module_name = names[0]
    module = _import(module_name)
    if not colon:
        kinds = _kinds_in(module)
        if not kinds:
            raise UsageError(f"module {module_name!r} defines no CustomResource subclass with a KIND")
        return kinds
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


def _has_attribute(target: str) -> bool:
    # `module:Name` or `path/file.py:Name`; a Windows drive letter never reaches here (POSIX paths only).
    return ":" in target


def _kinds_in(module: ModuleType) -> list[type[CustomResource]]:
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, CustomResource)
        and _defined_in(value, module)
        and "KIND" in vars(value)
    ]


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
    for target in modules:
        names = module_names(target)
        found: list[rbacgen.PolicyRule] = []
        for name in names:
            module = _import(name)
            try:
                found.extend(rbacgen.declared_rules(module))
            except TypeError as error:
                raise UsageError(str(error)) from error
        if not found:
            where = f"module {names[0]!r} declares no" if len(names) == 1 else f"no module under {target} declares"
            raise UsageError(f"{where} RBAC rules (@rbac(...) or {rbacgen.RBAC_RULES})")
        rules.extend(found)
    text = HEADER + rbacgen.yaml_document(rbacgen.cluster_role(role_name, rules))
    return _write(output.parent, {output.name: text}, check=check)


class _RecordingManager:
    """What a webhook setup function gets instead of a Manager: it keeps the webhook servers it is given."""

    def __init__(self) -> None:
        self.webhook_servers: list[Any] = []

    def add_webhook_server(self, server: Any) -> None:
        self.webhook_servers.append(server)


def webhooks_of(target: str) -> list[KindWebhooks]:
    """The webhooks a TARGET registers: `module:function` called with a recording stand-in for the manager, or a
    module's `WEBHOOKS` (a sequence of `KindWebhooks`). Raises UsageError naming what is wrong."""
    module_part, colon, attribute = target.rpartition(":") if _has_attribute(target) else (target, "", "")
    found: list[KindWebhooks] = []
    for name in module_names(module_part):
        module = _import(name)
        if not colon:
            declared = getattr(module, WEBHOOKS, None)
            if declared is None:
                raise UsageError(
                    f"module {name!r} declares no {WEBHOOKS}; name its setup function instead (module:function)"
                )
            if not all(isinstance(hooks, KindWebhooks) for hooks in declared):
                raise UsageError(f"{name}.{WEBHOOKS} must be a sequence of KindWebhooks (KindWebhooks.of(Kind))")
            found.extend(declared)
            continue
        setup = getattr(module, attribute, None)
        if not callable(setup):
            raise UsageError(f"module {name!r} has no function {attribute!r}")
        manager = _RecordingManager()
        try:
            setup(manager)
        except AttributeError as error:
            raise UsageError(
                f"{target} used the manager beyond registering webhooks ({error}); declare {WEBHOOKS} in its module"
            ) from error
        registered = [hooks for server in manager.webhook_servers for hooks in server.kind_webhooks]
        if not registered:
            raise UsageError(f"{target} registered no webhook (WebhookBuilder(manager).for_(Kind)...complete())")
        found.extend(registered)
    return found


def _webhook(targets: Sequence[str], output: Path, service: tuple[str, str], *, check: bool) -> int:
    webhooks: list[KindWebhooks] = []
    for target in targets:
        webhooks.extend(hooks for hooks in webhooks_of(target) if hooks not in webhooks)
    name, namespace = service
    documents = webhook_configurations(webhooks, service_name=name, service_namespace=namespace)
    text = HEADER + "".join(rbacgen.yaml_document(document) for document in documents)
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
        if args.command == "webhook":
            service = (args.service_name, args.service_namespace)
            return _webhook(args.targets, Path(args.output), service, check=args.check)
        return _rbac(args.modules, args.role_name, Path(args.output), check=args.check)
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

__all__ = [
    "PROG",
    "WEBHOOKS",
    "UsageError",
    "kinds_of",
    "main",
    "module_names",
    "webhooks_of",
]
