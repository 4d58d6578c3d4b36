"""Plain-text tables as kubectl prints them, for the `ballast` commands' reports (the companions' included).

print("\n".join(columns([["NAME", "REPLICAS"], ["web", "3"]])))
"""

from __future__ import annotations

from collections.abc import Sequence


def columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """`rows` (a header first) as aligned plain-text lines, three spaces between columns, as kubectl prints."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
