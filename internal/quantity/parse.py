"""Kubernetes quantity strings (`287m`, `192Mi`, `1e3`) to exact numbers and to integer units."""

from __future__ import annotations

import re
from decimal import MAX_EMAX, MIN_EMIN, ROUND_UP, Context, Decimal, Inexact
from functools import lru_cache

# The grammar of apimachinery's resource.Quantity, with at least one digit required (Go also reads "", "." and
# "Ki" as 0; we refuse them).
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<suffix>[KMGTPE]i|[numkMGTPE])|[eE](?P<exponent>[+-]?[0-9]+))?"
)
_BINARY_POWER = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_EXPONENT = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_INT32_MAX = 2**31 - 1
_NANO_EXPONENT = -9
_NANO = Decimal(1).scaleb(_NANO_EXPONENT)
_ROUNDING_CONTEXT = Context(prec=40, Emax=MAX_EMAX, Emin=MIN_EMIN)
# Integer units cross the store and the Go operator as int64 (millicores for cpu, bytes otherwise).
INT64_MAX = 2**63 - 1
_CACHED = 4096
"""Distinct strings remembered by the parsers (a Decimal each): far more than a cluster's distinct quantities."""


def _exact_context(digits: int) -> Context:
    # Enough precision that multiplying by 1024**6 or shifting the exponent never rounds; Inexact would say so.
    return Context(prec=digits + 25, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[Inexact])


class QuantityError(ValueError):
    """A string is not a Kubernetes quantity, or its value does not fit the units asked for."""


def parse_quantity(s: str) -> Decimal:
    """Return the exact value of the Kubernetes quantity `s` in base units (cores, bytes): `287m` → 0.287.

    Accepts apimachinery's grammar: an optional sign, digits with an optional fraction, then nothing, a decimal
    SI suffix (`n u m k M G T P E`), a binary suffix (`Ki Mi Gi Ti Pi Ei`) or an exponent (`e3`, `E-2`). As in
    apimachinery, a value finer than 1n is rounded up to the next nano-unit (`0.1n` → 1n). Raises
    QuantityError naming the string when it is not a quantity (whitespace, `K`, `ki`, a bare suffix…) or
    exceeds 2**63 − 1 base units (where Go silently caps), and TypeError when `s` is not a str (an int is
    already in units; see `to_units`).
    """
    if not isinstance(s, str):
        raise TypeError(f"a quantity must be a str such as '250m' or '1Gi', got {type(s).__name__} {s!r}")
    return _parse(s)


@lru_cache(maxsize=_CACHED)
def _parse(s: str) -> Decimal:
    # Memoized: the resize lane and the webhook parse the same few hundred strings on every pod of every cycle.
    match = _QUANTITY.fullmatch(s)
    if match is None:
        raise QuantityError(f"{s!r} is not a Kubernetes quantity (expected e.g. '250m', '1.5', '192Mi', '1e3')")
    number = match["number"]
    context = _exact_context(len(number))
    value = Decimal(number)
    suffix = match["suffix"]
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if abs(exponent) > _INT32_MAX:
            raise QuantityError(f"{s!r}: exponent {exponent} is out of range")
        value = value.scaleb(exponent, context)
    elif suffix in _BINARY_POWER:
        value = context.multiply(value, Decimal(1024 ** _BINARY_POWER[suffix]))
    elif suffix is not None:
        value = value.scaleb(_DECIMAL_EXPONENT[suffix], context)
    if value.copy_abs() > INT64_MAX:
        raise QuantityError(f"{s!r} is out of range (a Kubernetes quantity is at most {INT64_MAX} base units)")
    if value.as_tuple().exponent < _NANO_EXPONENT:  # type: ignore[operator]  # finite here, so an int
        # Like apimachinery, a value finer than a nano-unit is rounded up to the next nano-unit.
        value = value.quantize(_NANO, rounding=ROUND_UP, context=_ROUNDING_CONTEXT)
    return value


def to_units(quantity: str | int, resource: str) -> int:
    """Return `quantity` in integer units: millicores for `cpu`, bytes (or plain counts) for anything else.

    A str is parsed as a Kubernetes quantity and rounded up away from zero, as Go's `MilliValue()`/`Value()` do
    (`0.5m` cpu → 1). An int is taken to be in units already and returned as is. Raises QuantityError for a
    string that is not a quantity or a value beyond int64, TypeError for any other type, ValueError for an
    empty resource name.
    """
    if not resource:
        raise ValueError("resource name must not be empty")
    if isinstance(quantity, bool) or not isinstance(quantity, int | str):
        raise TypeError(
            f"a {resource} quantity must be a quantity string or int units, got {type(quantity).__name__} {quantity!r}"
        )
    if isinstance(quantity, int):
        return quantity
    return _units(quantity, resource)


@lru_cache(maxsize=_CACHED)
def _units(quantity: str, resource: str) -> int:
    value = parse_quantity(quantity)
    if resource == "cpu":
        value = value.scaleb(3, _exact_context(len(value.as_tuple().digits)))
    if value.copy_abs() > INT64_MAX:
        unit = "millicores" if resource == "cpu" else "units"
        raise QuantityError(f"{resource} quantity {quantity!r} is out of range (more than {INT64_MAX} {unit})")
    return int(value.to_integral_value(rounding=ROUND_UP))
