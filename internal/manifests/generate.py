"""`hack/gen-manifests`: write the parts of `config/` that follow from the code, so they never drift from it;
`--check` only reports.

- `config/crd/bases/`, the chart's `crds/` and `config/crd/kustomization.yaml`: the CRDs (`ballast_crds`);
- `config/rbac/` and the chart's `templates/rbac.yaml`: the operator's RBAC (`rbac`);
- `config/webhook/manifests.yaml` and the chart's `templates/webhookconfigurations.yaml`: the webhook
  configurations (`webhooks`);
- the chart's `values.schema.json`, with the policy objects' CRD schemas in it (`values_schema`).

The directories of CRDs and RBAC (`OWNED`) hold generated files only: a YAML file there that the code no longer
generates (a kind or a role that is gone) is reported by `--check` and removed otherwise, so the chart never
installs it. Files that already hold the generated text are left alone.

Usage: hack/gen-manifests [--check] [--root DIR]   (exit 1 with --check when a file is missing, stale or unexpected)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import ballast_crds, rbac, values_schema, webhooks

OWNED = (ballast_crds.CONFIG_OUTPUT, ballast_crds.HELM_OUTPUT, rbac.CONFIG_OUTPUT)
"""Directories (under the repository root) whose every YAML file is generated."""


def generated(root: Path) -> dict[Path, str]:
    """Every generated file under the repository `root` → its text."""
    return ballast_crds.rendered(root) | rbac.rendered(root) | webhooks.rendered(root) | values_schema.rendered(root)


def stale(root: Path) -> list[Path]:
    """Generated files under `root` that are missing or hold another text."""
    return [path for path, text in generated(root).items() if not _holds(path, text)]


def unexpected(root: Path) -> list[Path]:
    """YAML files in the `OWNED` directories under `root` that are not generated."""
    files = generated(root)
    return sorted(path for directory in OWNED for path in (root / directory).rglob("*.yaml") if path not in files)


def _holds(path: Path, text: str) -> bool:
    return path.is_file() and path.read_text(encoding="utf-8") == text


def write(root: Path) -> tuple[list[Path], list[Path]]:
    """Remove the unexpected files and write every generated file whose text changed; returns both lists."""
    removed = unexpected(root)
    for path in removed:
        path.unlink()
    written = []
    for path, text in generated(root).items():
        if not _holds(path, text):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return removed, written


def main(argv: Sequence[str] | None = None, *, root: Path) -> int:
    """Write (exit 0), or with `--check` only report what is stale, missing or unexpected (exit 1 if anything)."""
    parser = argparse.ArgumentParser(prog="gen-manifests", description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail if a file is stale or missing")
    parser.add_argument("--root", type=Path, default=root, help=f"repository root (default {root})")
    args = parser.parse_args(argv)
    if args.check:
        problems = [f"unexpected: {path}" for path in unexpected(args.root)]
        problems += [f"stale or missing: {path}" for path in stale(args.root)]
        for problem in problems:
            print(f"{problem} (run hack/gen-manifests)", file=sys.stderr)
        return 1 if problems else 0
    removed, written = write(args.root)
    for path in removed:
        print(f"removed {path}")
    for path in written:
        print(f"wrote {path}")
    return 0
