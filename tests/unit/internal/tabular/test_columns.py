"""`columns`: kubectl's plain-text table layout, shared by the `ballast` commands' reports."""

from __future__ import annotations

from ballast.internal.tabular import columns


def test_cells_are_padded_to_the_widest_with_three_spaces_and_no_trailing_blanks() -> None:
    assert columns([["NAME", "REPLICAS", "POLICY"], ["web-frontend", "3", ""], ["db", "12", "priority"]]) == [
        "NAME           REPLICAS   POLICY",
        "web-frontend   3",
        "db             12         priority",
    ]
