"""`eviction_cost` and the node cost, as Karpenter v1.15.0's `EvictionCost` and `ComputeRescheduleDisruptionCost`
compute them."""

from __future__ import annotations

import logging

import pytest

from ballast.internal.consolidation import (
    ConsolidationInputError,
    eviction_cost,
    is_reschedulable,
    parse_int32,
    reschedule_disruption_cost,
    savings_ratio,
)

from .builders import daemon, pod

DISRUPTION = "karpenter.sh/disruption-cost"
DELETION = "controller.kubernetes.io/pod-deletion-cost"


def annotated(**annotations: str) -> dict[str, object]:
    return pod("p", "n", annotations={DISRUPTION if k == "disruption" else DELETION: v for k, v in annotations.items()})


def test_a_default_pod_costs_one() -> None:
    assert eviction_cost(pod("p", "n")) == 1.0


@pytest.mark.parametrize(
    ("text", "value"),
    [("42", 42), ("+7", 7), ("-0", 0), ("007", 7), ("2147483647", 2**31 - 1), ("-2147483648", -(2**31))],
)
def test_go_parses_these_as_int32(text: str, value: int) -> None:
    assert parse_int32(text) == value


@pytest.mark.parametrize(
    "text", ["1.5", "1e3", " 5", "5 ", "1_000", "", "+", "abc", "0x10", "2147483648", "-2147483649", "٣", "5\n"]
)
def test_go_refuses_these(text: str) -> None:
    assert parse_int32(text) is None


@pytest.mark.parametrize("value", ["1.5", "1e3", " 5", "abc", "2147483648"])
def test_a_deletion_cost_go_refuses_adds_nothing_and_is_logged(value: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ballast.internal.consolidation.cost"):
        assert eviction_cost(annotated(deletion=value)) == 1.0
    assert "pod-deletion-cost" in caplog.text
    assert "default/p" in caplog.text


def test_the_annotations_add_value_over_two_to_the_27() -> None:
    assert eviction_cost(annotated(deletion="134217728")) == 2.0
    assert eviction_cost(annotated(disruption="-67108864")) == 0.5
    assert eviction_cost(annotated(deletion="2147483647")) == 10.0  # 17 clamps to 10
    assert eviction_cost(annotated(deletion="-2147483648")) == -10.0  # -15 clamps to -10


def test_the_disruption_cost_wins_over_the_deletion_cost() -> None:
    assert eviction_cost(annotated(disruption="134217728", deletion="-134217728")) == 2.0


def test_an_invalid_disruption_cost_does_not_fall_back_to_the_deletion_cost() -> None:
    assert eviction_cost(annotated(disruption="1.5", deletion="134217728")) == 1.0
    assert eviction_cost(annotated(disruption="abc", deletion="134217728")) == 1.0


def test_with_pod_deletion_cost_management_only_the_disruption_cost_is_read() -> None:
    assert eviction_cost(annotated(deletion="134217728"), pod_deletion_cost_management=True) == 1.0
    assert eviction_cost(annotated(disruption="134217728"), pod_deletion_cost_management=True) == 2.0


def test_priority_adds_value_over_two_to_the_25_and_the_sum_is_clamped() -> None:
    assert eviction_cost(pod("p", "n", priority=2**25)) == 2.0
    assert eviction_cost(pod("p", "n", priority=-(2**24))) == 0.5
    assert eviction_cost(pod("p", "n", priority=1_000_000_000)) == 10.0  # 30.8 → 10
    assert eviction_cost(pod("p", "n", priority=-(2**31))) == -10.0  # -63 → -10
    both = pod("p", "n", priority=2**25, annotations={DELETION: "134217728"})
    assert eviction_cost(both) == 3.0


@pytest.mark.parametrize("priority", [1.5, "5", True, 2**31])
def test_a_priority_that_is_not_an_int32_is_refused_by_name(priority: object) -> None:
    value = pod("p", "n")
    value["spec"]["priority"] = priority
    with pytest.raises(ConsolidationInputError, match=r"pods\['default/p'\]\.spec\.priority"):
        eviction_cost(value)


def test_a_node_costs_one_plus_its_positive_pod_costs() -> None:
    assert reschedule_disruption_cost([]) == 1.0
    assert reschedule_disruption_cost([1.0, 1.0, 1.0]) == 4.0
    assert reschedule_disruption_cost([-10.0, 2.5]) == 3.5  # a negative cost counts as 0


def test_daemonset_and_mirror_pods_are_not_rescheduled() -> None:
    assert is_reschedulable(pod("p", "n"))
    assert not is_reschedulable(daemon("d", "n"))
    assert not is_reschedulable(pod("m", "n", owner=("v1", "Node")))
    finished = pod("done", "n")
    finished["status"]["phase"] = "Succeeded"
    assert not is_reschedulable(finished)
    leaving = pod("db-0", "n", owner=("apps/v1", "StatefulSet"))
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert is_reschedulable(leaving)  # a StatefulSet pod must go before its replacement comes


def test_the_savings_ratio_is_price_per_disruption() -> None:
    # Karpenter's test: 4.84 with three default pods (1 + 3) is 1.21.
    assert savings_ratio(4.84, 4.0) == pytest.approx(1.21)
    with pytest.raises(ValueError, match=r"at least 1\.0"):
        savings_ratio(1.0, 0.0)
