"""`ballast consolidation plan [--what-if recommended] [--k 2] [--catalogue FILE|cm/NS/NAME] [-o table|json]`.

The flags: `--k`, the catalogue (a local file — the document itself, YAML or JSON, or a ConfigMap manifest
holding it under `catalogue.yaml` — or `cm/NAMESPACE/NAME`, the ConfigMap in the cluster), `--what-if`, the
policy and pool label of pools no NodePool describes, `-o`. What is read, planned and printed is
`ballast.internal.consolidation.plan_report`'s. Writes nothing. Exit 0, or 1 for a bad `--k`, a catalogue that
is missing, unreadable or has no offering, or an unreachable API server.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ballast.internal.cmd.ballast import ConnectError, connect, fail
from ballast.internal.consolidation import ConsolidationInputError, check_k
from ballast.internal.consolidation.plan_report import (
    RECOMMENDED,
    PlanError,
    catalogue_from_text,
    gather,
    render_json,
    render_table,
)

CONFIGMAP_PREFIX = "cm/"
DEFAULT_CATALOGUE = "cm/ballast-system/ballast-consolidation-catalogue"
"""Where the catalogue is when `--catalogue` is not given: the sample's ConfigMap, applied."""


def parse_k(text: str) -> float:
    """`--k`: a positive integer the planner accepts (`check_k`: Karpenter's int32), or `inf` (every move the
    price filter passes, as WhenEmptyOrUnderutilized)."""
    if text.strip().lower() in ("inf", "+inf"):
        return math.inf
    try:
        return check_k(int(text))
    except ValueError:  # not an integer, or one check_k refuses (ConsolidationInputError)
        raise PlanError(f"--k {text!r}: not a positive integer (or inf)") from None


def read_catalogue_file(path: str) -> Mapping[str, Any]:
    """`--catalogue FILE` (`-` for stdin); raises PlanError for a file that cannot be read or parsed."""
    if path == "-":
        return catalogue_from_text(sys.stdin.read(), "catalogue from stdin")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"catalogue file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    return catalogue_from_text(text, f"catalogue file {path}")


def configmap_ref(spec: str) -> tuple[str, str] | None:
    """(namespace, name) of `cm/NAMESPACE/NAME`, None for a file; raises PlanError for a malformed reference."""
    if not spec.startswith(CONFIGMAP_PREFIX):
        return None
    parts = spec[len(CONFIGMAP_PREFIX) :].split("/")
    if len(parts) != 2 or not all(parts):
        raise PlanError(f"--catalogue {spec!r}: a ConfigMap is cm/NAMESPACE/NAME (a file named so: ./{spec})")
    return parts[0], parts[1]


def run(args: argparse.Namespace) -> int:
    """`ballast consolidation plan` with parsed flags; returns 0, or 1 naming what was wrong: a bad --k, a
    catalogue that is missing, unreadable or empty, input the planner refuses, an unreachable API server."""
    from ballast.runtime import APIStatusError  # noqa: PLC0415

    source = args.catalogue or DEFAULT_CATALOGUE
    catalogue: tuple[str, str] | Mapping[str, Any]
    try:
        k = parse_k(args.k)
        if not args.pool_label.strip():
            raise PlanError("--pool-label: must not be empty")
        catalogue = configmap_ref(source) or read_catalogue_file(source)  # a bad file is named before connecting
    except PlanError as exc:
        return fail(exc)
    try:
        client = connect(args, typed=False)
    except ConnectError as exc:
        return fail(exc)
    try:
        analysis = gather(client, catalogue, source, k, what_if=args.what_if == RECOMMENDED, policy=args.policy,
                          pool_label=args.pool_label)  # fmt: skip
    except LookupError as exc:  # the REST mapper: WorkloadProfiles are not served
        return fail(f"{exc} (are the Ballast CRDs installed?)")
    except (PlanError, ConsolidationInputError, APIStatusError, OSError) as exc:
        return fail(exc)
    finally:
        client.close()
    print(render_json(analysis) if args.output == "json" else "\n".join(render_table(analysis)))
    return 0
