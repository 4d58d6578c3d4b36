"""Figures a test measured, written where RELIABILITY.md's table is rendered from: `build/figures/<name>.json`
under the repository (git-ignored with the rest of `build/`; `make clean` removes it).

    write_figures("fuzz_reviews", {"cases": 1800, "crashes": 0})

Each file holds one JSON object: the figures, the test that measured them (`source`) and when (`measured_at`,
UTC, ISO 8601). A rerun overwrites it, so the file always says what the latest run measured.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from tests.paths import REPOSITORY

FIGURES_DIR = REPOSITORY / "build" / "figures"


def write_figures(name: str, figures: Mapping[str, Any], *, source: str) -> Path:
    """Write `figures` to `build/figures/<name>.json` (atomically: a reader never sees half a file); its path."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"figures name {name!r} must be a plain file name")
    FIGURES_DIR.mkdir(parents=True, exist_ok=True)
    measured_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    document = {"source": source, "measured_at": measured_at, **figures}
    path = FIGURES_DIR / f"{name}.json"
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    staging.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    staging.replace(path)
    return path
