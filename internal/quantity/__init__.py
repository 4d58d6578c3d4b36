"""Kubernetes quantities: exact parsing, canonical formatting, usage display forms and the forms views show
(`human_bytes`, `human_quantity`: binary suffixes, never written to the API).

Quantities cross the domain as Kubernetes strings (`287m`, `192Mi`) or as integer units: millicores for `cpu`,
bytes for memory and ephemeral-storage (plain counts for any other resource).
"""

from __future__ import annotations

from .display import display_bytes, display_cpu, display_units, format_fixed
from .format import format_bytes, format_cpu_millis, format_units
from .human import human_bytes, human_quantity
from .parse import INT64_MAX, QuantityError, parse_quantity, to_units

__all__ = [
    "INT64_MAX",
    "QuantityError",
    "display_bytes",
    "display_cpu",
    "display_units",
    "format_bytes",
    "format_cpu_millis",
    "format_fixed",
    "format_units",
    "human_bytes",
    "human_quantity",
    "parse_quantity",
    "to_units",
]
