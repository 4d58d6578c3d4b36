"""Canonical Kubernetes quantity strings from integer units, as Go's `Quantity.String()` prints them."""

from __future__ import annotations

_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def _require_int(value: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")


def _decimal_si(mantissa: int, exponent: int) -> str:
    """Canonical DecimalSI form of mantissa × 10**exponent: trailing zeros folded into an SI suffix."""
    if mantissa == 0:
        return "0"
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    # SI suffixes step by three decimal places; give the remainder back to the mantissa.
    surplus = exponent % 3
    mantissa *= 10**surplus
    exponent -= surplus
    suffix = _DECIMAL_SUFFIX.get(exponent)
    if suffix is None:
        # Beyond exa (or below nano) there is no SI suffix; the exponent form still parses.
        return f"{mantissa}e{exponent}"
    return f"{mantissa}{suffix}"


def format_cpu_millis(millis: int) -> str:
    """Return the canonical cpu quantity for `millis` millicores: 287 → `287m`, 1000 → `1`, 1500 → `1500m`.

    This is Go's `NewMilliQuantity(millis, DecimalSI).String()` (so 1,000,000 → `1k`). Raises TypeError for a
    non-int.
    """
    _require_int(millis, "millicores")
    return _decimal_si(millis, -3)


def format_bytes(count: int) -> str:
    """Return the canonical quantity for `count` bytes (or plain units): 201326592 → `192Mi`, 330 → `330`.

    This is Go's `NewQuantity(count, BinarySI).String()`: a binary suffix when `count` is a whole number of
    Ki/Mi/…/Ei, the plain integer otherwise, and below 1024 the decimal form (1000 → `1k`). Raises TypeError for
    a non-int.
    """
    _require_int(count, "a byte count")
    if -1024 < count < 1024:
        return _decimal_si(count, 0)
    magnitude, power = abs(count), 0
    while power < len(_BINARY_SUFFIX) - 1 and magnitude % 1024 == 0:
        magnitude //= 1024
        power += 1
    sign = "-" if count < 0 else ""
    return f"{sign}{magnitude}{_BINARY_SUFFIX[power]}"


def format_units(units: int, resource: str) -> str:
    """Return the canonical quantity for integer units of `resource`: millicores for `cpu`, bytes otherwise.

    Raises ValueError for an empty resource name, TypeError for non-int units.
    """
    if not resource:
        raise ValueError("resource name must not be empty")
    return format_cpu_millis(units) if resource == "cpu" else format_bytes(units)
