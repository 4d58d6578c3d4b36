"""Where the repository is, for tests that read its files (README, config/, the chart) wherever they sit."""

from __future__ import annotations

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
CRD_DIR = REPOSITORY / "config" / "crd" / "bases"
