"""Quantities as a person reads them in a view (`make dev`, `ballast explain`): binary suffixes for bytes.

The canonical form (`format_bytes`, what the Go operator writes into statuses and pods) prints a byte count that
is not a whole number of KiB as a bare integer — `258534604` next to `192Mi` and metrics-server's `197938Ki`.
`human_bytes` always uses the largest binary suffix the count reaches, exactly when it is a whole number of that
unit (`192Mi`), otherwise rounded to at most two decimals (`246.56Mi`, `193.3Mi`). Never for what is written
to the API: only for text shown to people.
"""

from __future__ import annotations

from fractions import Fraction

from .display import format_fixed
from .format import format_cpu_millis
from .parse import QuantityError, to_units

_BINARY = ((1 << 60, "Ei"), (1 << 50, "Pi"), (1 << 40, "Ti"), (1 << 30, "Gi"), (1 << 20, "Mi"), (1 << 10, "Ki"))


def human_bytes(count: int) -> str:
    """A byte count with the largest binary suffix it reaches: 201326592 → `192Mi`, 258534604 → `246.56Mi`,
    1610612736 → `1.5Gi`, 202688512 → `193.3Mi`, 512 → `512`. Two decimals at most, half to even, trailing zeros
    dropped. Raises TypeError for a non-int."""
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"a byte count must be an int, got {type(count).__name__} {count!r}")
    magnitude = abs(count)
    sign = "-" if count < 0 else ""
    for index, (unit, suffix) in enumerate(_BINARY):
        if magnitude >= unit:
            if magnitude % unit == 0:
                return f"{sign}{magnitude // unit}{suffix}"
            fixed = format_fixed(Fraction(magnitude, unit), 2)
            if fixed == "1024.00" and index > 0:  # rounded up to the next unit: 1Gi, not 1024Mi
                return f"{sign}1{_BINARY[index - 1][1]}"
            return f"{sign}{fixed.rstrip('0').rstrip('.')}{suffix}"
    return f"{sign}{magnitude}"


def human_quantity(quantity: str, resource: str) -> str:
    """A quantity string of `resource` as a view shows it: cpu in its canonical milli form (`1500m`, `1`), bytes
    (any other resource) with `human_bytes`. A string that is not a quantity is returned as it is, so a view
    never fails on a value it only displays."""
    try:
        units = to_units(quantity, resource)
    except (QuantityError, TypeError, ValueError):
        return quantity
    return format_cpu_millis(units) if resource == "cpu" else human_bytes(units)
