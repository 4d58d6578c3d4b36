"""RELIABILITY.md's table (tests/e2e/reliability.py): rows come from this machine's figure files, and a
scenario measured elsewhere keeps the row the document holds."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.e2e import reliability
from tests.e2e.reliability import BEGIN, END, SCENARIOS


def _document(rows: list[str]) -> str:
    head = ["| Scenario | Asserts | Latest figure | Measured | Reproduce |", "|---|---|---|---|---|"]
    return "# Reliability\n\n" + BEGIN + "\n" + "\n".join([*head, *rows]) + "\n" + END + "\ntail\n"


def test_a_scenario_without_a_figure_here_keeps_its_recorded_row_and_one_measured_here_is_rendered(
    tmp_path: Path,
) -> None:
    kept, measured, never = SCENARIOS[0], SCENARIOS[6], SCENARIOS[1]
    kept_row = f"| {kept.title} | {kept.asserts} | an earlier figure | 2026-11-30 | {kept.command} |"
    stale_row = f"| {measured.title} | {measured.asserts} | a stale figure | 2026-11-01 | {measured.command} |"
    figures = {"refusal_seconds": 0.4, "stuck_terminating": 0}
    (tmp_path / f"{measured.key}.json").write_bytes(
        orjson.dumps({"figures": figures, "measured": "2026-12-02T16:00:00+00:00"})
    )

    rendered = reliability.render(_document([kept_row, stale_row]), tmp_path)

    assert kept_row in rendered
    assert "a stale figure" not in rendered
    assert f"| {measured.figure(figures)} | 2026-12-02 |" in rendered
    assert f"| {never.title} | {never.asserts} | not measured yet | — |" in rendered
    assert rendered.endswith(END + "\ntail\n")
    assert rendered.count("\n| ") == len(SCENARIOS) + 1  # the header and one row per scenario, no duplicate
