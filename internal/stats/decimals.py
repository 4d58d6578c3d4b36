"""Decimal numbers written in policy fields (`"1.25"`, `"1.5"`, `"20"`), parsed exactly."""

from __future__ import annotations

import re
from decimal import Decimal

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


def parse_decimal(text: str | None) -> Decimal | None:
    """Return the exact value of a decimal literal such as `1.25`, ` 2 `, `1e-1`, or None when it is not one.

    Surrounding whitespace is ignored. Blank text, NaN, infinities and exponents beyond three digits give None,
    so callers apply their documented fallback (the Go operator's `strconv.ParseFloat` error path).
    """
    if text is None:
        return None
    stripped = text.strip()
    if _DECIMAL.fullmatch(stripped) is None:
        return None
    return Decimal(stripped)
