"""Human display forms of usage figures (`85m`, `176.00Mi`, `0.400`), as the Go operator writes usageStats."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from .format import format_cpu_millis

_KI, _MI, _GI = 1 << 10, 1 << 20, 1 << 30


def format_fixed(value: int | Fraction | Decimal, places: int) -> str:
    """Return `value` with exactly `places` decimals, like Go's `%.<places>f` (ties to even on the exact value).

    Raises ValueError for a negative `places` or a NaN/infinite Decimal.
    """
    if places < 0:
        raise ValueError(f"places must be ≥ 0, got {places}")
    if isinstance(value, int | Fraction):  # ints and Fractions carry their ratio: no conversion
        return _fixed_ratio(value.numerator, value.denominator, places)
    if not value.is_finite():
        raise ValueError(f"cannot format non-finite {value}")
    exact = value.as_integer_ratio()
    return _fixed_ratio(exact[0], exact[1], places)


def _fixed_ratio(numerator: int, denominator: int, places: int) -> str:
    """numerator / denominator (denominator > 0) with `places` decimals, the exact value rounded half to even."""
    scaled, remainder = divmod(abs(numerator) * 10**places, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and scaled % 2):
        scaled += 1
    sign = "-" if numerator < 0 else ""
    whole, fraction = divmod(scaled, 10**places)
    return f"{sign}{whole}.{fraction:0{places}d}" if places else f"{sign}{whole}"


def display_cpu(millis: int | Fraction | Decimal) -> str:
    """Return a cpu figure in millicores as the canonical quantity of its truncated value: 85.9 → `85m`."""
    return format_cpu_millis(math.trunc(millis))


def display_bytes(count: int | Fraction | Decimal) -> str:
    """Return a byte figure with two decimals in Gi, Mi or Ki, whichever is the largest ≤ it: `176.00Mi`."""
    exact = Fraction(count) if isinstance(count, Decimal) else count
    numerator, denominator = exact.numerator, exact.denominator
    for unit, suffix in ((_GI, "Gi"), (_MI, "Mi")):
        if count >= unit:
            return f"{_fixed_ratio(numerator, denominator * unit, 2)}{suffix}"
    return f"{_fixed_ratio(numerator, denominator * _KI, 2)}Ki"


def display_units(units: int | Fraction | Decimal, resource: str) -> str:
    """Return the usageStats display form of a figure of `resource`: `display_cpu` for cpu, else `display_bytes`."""
    if not resource:
        raise ValueError("resource name must not be empty")
    return display_cpu(units) if resource == "cpu" else display_bytes(units)
