"""docs/simulate.md shows the default run's table and verdict exactly as the report computes them from that run's
JSON (docs/data/simulate-demo/), and the verdict there follows from the figures; the README's headline agrees."""

from __future__ import annotations

import orjson
import pytest

from ballast.internal.fleetsim.docs import DATA, PAGE, block, load_figures, page_block, recomputed_verdict
from ballast.internal.fleetsim.figures import figures_json
from tests.paths import REPOSITORY

DATA_DIR = REPOSITORY / DATA


def test_the_page_s_table_and_verdict_are_the_report_s_of_the_committed_run() -> None:
    page = (REPOSITORY / PAGE).read_text(encoding="utf-8")

    assert page_block(page) == block(DATA_DIR), "run `hack/simulate-docs demo` after `make demo`"


def test_the_committed_verdict_follows_from_the_committed_figures() -> None:
    committed = orjson.loads((DATA_DIR / "verdict.json").read_bytes())

    assert recomputed_verdict(DATA_DIR) == committed


def test_the_committed_figures_read_back_as_written() -> None:
    raw = orjson.loads((DATA_DIR / "figures.json").read_bytes())

    assert {name: figures_json(fig) for name, fig in load_figures(DATA_DIR).items()} == raw


def test_the_readme_headline_has_the_committed_outcome() -> None:
    passed = orjson.loads((DATA_DIR / "verdict.json").read_bytes())["passed"]
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")

    assert f"the verdict is **{'passed' if passed else 'failed'}**" in readme


@pytest.mark.parametrize("name", ["none", "vpa", "ballast"])
def test_every_recommender_carries_the_disruption_figures(name: str) -> None:
    raw = orjson.loads((DATA_DIR / "figures.json").read_bytes())[name]

    assert raw["disruptions"] == raw["ooms"] + raw["evictions"] + raw["pressure_evictions"]
    assert set(raw["under_requested_windows"]) == {"cpu", "memory"}
    assert set(raw["waste_nodes"]) == {"cpu", "memory"}


def test_the_page_s_reading_of_the_cpu_waste_clause_holds_for_the_committed_figures() -> None:
    """docs/simulate.md explains the failed cpu waste clause by the first day: Ballast keeps the manifests' requests
    until the preset's readiness (24 h), wastes less than VPA on every day after, and the first day alone puts its
    run-long mean above VPA's whatever the cpu request rule. A run where that stops being so needs a new paragraph."""
    raw = orjson.loads((DATA_DIR / "figures.json").read_bytes())
    ballast, vpa, manifests = (raw[name]["waste_nodes_per_day"]["cpu"] for name in ("ballast", "vpa", "none"))

    assert ballast[0] == manifests[0]
    assert all(ours < theirs for ours, theirs in zip(ballast[1:], vpa[1:], strict=True))
    assert ballast[0] / len(ballast) > raw["vpa"]["waste_nodes"]["cpu"]
