"""Kubernetes quantities: exact parsing, canonical formatting and usage display forms.

Quantities cross the domain as Kubernetes strings (`287m`, `192Mi`) or as integer units: millicores for `cpu`,
bytes for memory and ephemeral-storage (plain counts for any other resource).
"""

from __future__ import annotations

from .display import display_bytes, display_cpu, display_units, format_fixed
from .format import format_bytes, format_cpu_millis, format_units
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
    "parse_quantity",
    "to_units",
]
