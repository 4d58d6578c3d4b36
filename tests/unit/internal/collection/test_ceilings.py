"""The ceilings of a profile's recommendations (docs/design.md, difference 25): a value of 0, or one above the
largest allocatable of the nodes the profile's pods ran on, is not applied."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.collection import (
    NODE_REFRESH_MS,
    MeasuredPod,
    MeasuredProfile,
    NotApplied,
    RecommendationCeilings,
    bounded,
    largest,
    node_allocatable,
    nodes_by_profile,
)

GI = 2**30
NOW_MS = 1_772_366_400_000


def node(allocatable: dict[str, Any] | None) -> dict[str, Any]:
    return {"metadata": {"name": "n"}, "status": {"allocatable": allocatable} if allocatable is not None else {}}


def test_a_nodes_allocatable_in_units_skipping_what_is_not_a_quantity() -> None:
    allocatable = {"cpu": "3920m", "memory": "16Gi", "pods": "110", "ephemeral-storage": "lots", "": "1"}
    assert node_allocatable(node(allocatable)) == {"cpu": 3920, "memory": 16 * GI, "pods": 110}
    assert node_allocatable(node(None)) == {}
    assert node_allocatable({"status": "bogus"}) == {}


def test_the_largest_allocatable_is_per_resource() -> None:
    assert largest([{"cpu": 4000, "memory": 8 * GI}, {"cpu": 2000, "memory": 32 * GI}, {"gpu": 1}]) == {
        "cpu": 4000, "memory": 32 * GI, "gpu": 1,
    }  # fmt: skip


def test_nodes_by_profile_skips_unscheduled_pods() -> None:
    api, web = MeasuredProfile("api", "h1", frozenset({"cpu"})), MeasuredProfile("web", "h2", frozenset({"cpu"}))
    pods = {
        ("shop", "api-1"): MeasuredPod(api, frozenset({"app"}), "node-a"),
        ("shop", "api-2"): MeasuredPod(api, frozenset({"app"}), "node-b"),
        ("shop", "api-3"): MeasuredPod(api, frozenset({"app"})),  # pending
        ("shop", "web-1"): MeasuredPod(web, frozenset({"app"})),
    }
    assert nodes_by_profile(pods) == {"api": frozenset({"node-a", "node-b"})}


@pytest.mark.parametrize(
    ("recommendation", "kept", "refused"),
    [
        ({"request": "2", "limit": "4"}, {"request": "2", "limit": "4"}, []),  # 4 cores: the ceiling itself
        ({"request": "0", "limit": "2"}, {"limit": "2"}, [("request", "0", "zero")]),
        ({"request": "4001m"}, {}, [("request", "4001m", "node")]),
        ({"request": "1e27"}, {}, [("request", "1e27", "range")]),  # beyond 2**63 − 1 millicores
    ],
)
def test_a_value_of_0_or_above_the_ceiling_is_not_applied(
    recommendation: dict[str, str], kept: dict[str, str], refused: list[tuple[str, str, str]]
) -> None:
    got, not_applied = bounded("app", "cpu", recommendation, {"cpu": 4000})
    assert got == kept
    assert [(n.field, n.value, n.reason) for n in not_applied] == refused


def test_without_a_ceiling_only_zero_and_the_quantity_bound_apply() -> None:
    got, not_applied = bounded("app", "memory", {"request": "1Ei", "limit": "0"}, {"cpu": 1000})
    assert got == {"request": "1Ei"}
    assert [n.field for n in not_applied] == ["limit"]


def test_what_was_not_applied_says_why() -> None:
    assert str(NotApplied("app", "memory", "request", "0", "zero")) == "app memory request 0 is 0"
    assert str(NotApplied("app", "memory", "limit", "300Gi", "node", 64 * GI)) == (
        "app memory limit 300Gi is above 64Gi, the largest allocatable memory of the nodes its pods ran on"
    )
    assert str(NotApplied("app", "cpu", "request", "1e27", "range")) == (
        "app cpu request 1e27 is not a quantity of at most 2**63 − 1 units"
    )


def test_a_node_is_read_again_only_after_the_refresh_period() -> None:
    ceilings = RecommendationCeilings()
    assert ceilings.due({"b", "a"}, NOW_MS) == ["a", "b"]
    ceilings.remember_node("a", {"cpu": 4000}, NOW_MS)
    ceilings.remember_node("b", {}, NOW_MS)  # not found: remembered too, so it is not asked every cycle
    assert ceilings.due({"a", "b"}, NOW_MS + NODE_REFRESH_MS - 1) == []
    assert ceilings.due({"a"}, NOW_MS + NODE_REFRESH_MS) == ["a"]


def test_a_node_read_again_counts_for_the_profiles_on_it() -> None:
    ceilings = RecommendationCeilings()
    ceilings.remember_node("a", {"cpu": 2000}, NOW_MS)
    ceilings.raise_for("api", "u1", frozenset({"a"}))
    ceilings.raise_for("web", "u2", frozenset({"a"}))  # the same nodes: one largest for both
    assert ceilings.of("web", "u2") == {"cpu": 2000}

    ceilings.remember_node("a", {"cpu": 8000}, NOW_MS + NODE_REFRESH_MS)  # resized
    ceilings.raise_for("api", "u1", frozenset({"a"}))
    assert ceilings.of("api", "u1") == {"cpu": 8000}

    assert ceilings.due({"b"}, NOW_MS + 4 * NODE_REFRESH_MS) == ["b"]  # "a" is forgotten, and with it its size
    ceilings.raise_for("new", "u3", frozenset({"a"}))
    assert ceilings.of("new", "u3") == {}


def test_a_profiles_ceilings_only_grow_and_start_over_with_a_new_uid() -> None:
    ceilings = RecommendationCeilings()
    ceilings.remember_node("small", {"cpu": 2000, "memory": 8 * GI}, NOW_MS)
    ceilings.remember_node("large", {"cpu": 16000}, NOW_MS)
    assert ceilings.of("api", "u1") == {}

    ceilings.raise_for("api", "u1", ["large", "unknown"])
    ceilings.raise_for("api", "u1", ["small"])  # its pods moved to a smaller node: the largest is remembered
    assert ceilings.of("api", "u1") == {"cpu": 16000, "memory": 8 * GI}
    assert ceilings.of("api", "u2") == {}

    ceilings.raise_for("api", "u2", ["small"])  # recreated profile
    assert ceilings.of("api", "u2") == {"cpu": 2000, "memory": 8 * GI}
    ceilings.keep_only({"web"})
    assert ceilings.of("api", "u2") == {}
