"""The layering of docs/design.md (Layout, dependency rules), read from the imports of every module: domain
packages never import the controllers or the webhook handlers (only the wiring, the dev harness, the fleet
simulator's operator harness and the manifests do), controllers and handlers never import one another, and no
companion imports another."""

from __future__ import annotations

from pathlib import Path

from tests.paths import REPOSITORY
from tests.unit.support import imported_names

ASSEMBLERS = ("cmd", "dev", "manifests", "fleetsim")
"""The packages of `internal/` that put lanes and handlers together (`fleetsim`: its operator harness runs the
real reconcilers and pod admission on a virtual clock)."""

COMPANIONS = ("scheduling", "balancer", "consolidation")
"""The companions' folders under `internal/`: kupid's scheduling policies, the Balancer, the consolidation advisor."""


def _imports(path: Path) -> list[str]:
    package = ("ballast", *path.relative_to(REPOSITORY).parent.parts)
    return imported_names(path, package)


def _module(path: Path) -> str:
    return ".".join(("ballast", *path.relative_to(REPOSITORY).with_suffix("").parts))


def _lane_imports(importer: Path, name: str) -> bool:
    """Whether `name` is a controller or a handler module other than `importer` itself (or something in one)."""
    own = _module(importer)
    for layer in ("ballast.controllers", "ballast.webhook"):
        if name.startswith(layer + ".") and not name.startswith(own + "."):
            module = name[len(layer) + 1 :].split(".", maxsplit=1)[0]
            return module != "__init__" and (REPOSITORY / layer.split(".")[1] / f"{module}.py").exists()
    return False


def test_domain_packages_never_import_controllers_or_handlers() -> None:
    domain = [
        path
        for path in sorted((REPOSITORY / "internal").rglob("*.py"))
        if path.relative_to(REPOSITORY / "internal").parts[0] not in ("runtime", *ASSEMBLERS)
    ]
    found = [f"{path.relative_to(REPOSITORY)}: {name}" for path in domain for name in _imports(path)
             if name.startswith(("ballast.controllers", "ballast.webhook"))]  # fmt: skip
    assert len(domain) > 60  # the walk covers the domain packages
    assert found == []


def test_controllers_and_handlers_never_import_one_another() -> None:
    lanes = sorted((REPOSITORY / "controllers").glob("*.py")) + sorted((REPOSITORY / "webhook").glob("*.py"))
    found = [
        f"{path.relative_to(REPOSITORY)}: {name}"
        for path in lanes
        for name in _imports(path)
        if _lane_imports(path, name) and not _same_layer_helper(path, name)
    ]
    assert found == []


def _same_layer_helper(importer: Path, name: str) -> bool:
    """A handler module may use the webhook package's own helpers (`webhook.recommendations`, `webhook.reader`);
    what it may not do is call another handler. Handlers are the modules with a `register` function."""
    if not name.startswith("ballast.webhook.") or importer.parent.name != "webhook":
        return False
    module = REPOSITORY / "webhook" / f"{name.split('.')[2]}.py"
    return "\ndef register(" not in module.read_text()


def test_the_checks_see_a_lane_importing_another() -> None:
    resize = REPOSITORY / "controllers" / "resize.py"
    assert _lane_imports(resize, "ballast.controllers.enrollment.EnrollmentReconciler")
    assert not _lane_imports(resize, "ballast.controllers.resize.NAME")
    assert not _lane_imports(resize, "ballast.internal.enrollment.PodProjection")


def _reaches_another_companion(own: str, name: str) -> bool:
    """Whether `name`, imported by a module of companion `own`, is (in) another companion's package."""
    return any(name == f"ballast.internal.{other}" or name.startswith(f"ballast.internal.{other}.")
               for other in COMPANIONS if other != own)  # fmt: skip


def test_no_companion_imports_another() -> None:
    found = [
        f"{path.relative_to(REPOSITORY)}: {name}"
        for own in COMPANIONS
        for path in sorted((REPOSITORY / "internal" / own).rglob("*.py"))
        for name in _imports(path)
        if _reaches_another_companion(own, name)
    ]
    assert sum(1 for own in COMPANIONS for _ in (REPOSITORY / "internal" / own).rglob("*.py")) > 40
    assert found == []


def test_the_check_sees_a_companion_importing_another() -> None:
    assert _reaches_another_companion("balancer", "ballast.internal.scheduling.TARGETS")
    assert _reaches_another_companion("scheduling", "ballast.internal.consolidation.inputs.read_inputs")
    assert not _reaches_another_companion("balancer", "ballast.internal.balancer.place")
    assert not _reaches_another_companion("consolidation", "ballast.internal.stats.fit_limit")
    assert not _reaches_another_companion("balancer", "ballast.internal.schedulingx.name")
