"""Figures the reliability tests measure, one JSON file per scenario under build/figures/, from which
RELIABILITY.md's table is rendered (`hack/render-reliability`)."""

from __future__ import annotations

import datetime
import os
import platform
from collections.abc import Mapping
from typing import Any

import orjson

from tests.paths import REPOSITORY

FIGURES_DIR = REPOSITORY / "build" / "figures"


def record(scenario: str, figures: Mapping[str, Any]) -> None:
    """Write `figures` for `scenario`, with the machine and the date they were measured on."""
    FIGURES_DIR.mkdir(parents=True, exist_ok=True)
    document = {
        "scenario": scenario,
        "figures": dict(figures),
        "measured": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
    }
    (FIGURES_DIR / f"{scenario}.json").write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
