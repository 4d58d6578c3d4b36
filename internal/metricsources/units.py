"""Usage quantities → integer units, fast: a cycle parses tens of thousands of them.

metrics-server writes `cpu` as integer nanocores (`2290178n`) and memory as integer kibibytes (`12345Ki`); those
forms are converted with integer arithmetic here, anything else (decimals, exponents, signs) goes through the
exact parser `ballast.internal.quantity.to_units`, and both round up as Go's `MilliValue()`/`Value()` do.
"""

from __future__ import annotations

import re

from ballast.internal.quantity import INT64_MAX, to_units

_SIMPLE = re.compile(r"([0-9]{1,30})(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?")
_SCALE: dict[str, tuple[int, int]] = {
    "": (1, 1),
    "n": (1, 10**9),
    "u": (1, 10**6),
    "m": (1, 10**3),
    "k": (10**3, 1),
    "M": (10**6, 1),
    "G": (10**9, 1),
    "T": (10**12, 1),
    "P": (10**15, 1),
    "E": (10**18, 1),
    "Ki": (2**10, 1),
    "Mi": (2**20, 1),
    "Gi": (2**30, 1),
    "Ti": (2**40, 1),
    "Pi": (2**50, 1),
    "Ei": (2**60, 1),
}


def usage_units(quantity: str, resource: str) -> int:
    """Return `quantity` in millicores for `cpu`, bytes (or counts) otherwise, rounded up.

    Same result as `to_units` for every input; raises `QuantityError` for a string that is not a quantity or
    is out of range.
    """
    match = _SIMPLE.fullmatch(quantity)
    if match is None:
        return to_units(quantity, resource)
    numerator, denominator = _SCALE[match[2] or ""]
    if resource == "cpu":
        numerator *= 1000
    units = -((-int(match[1]) * numerator) // denominator)  # ceiling division
    if units > INT64_MAX:
        return to_units(quantity, resource)  # raises with the exact parser's message
    return units
