"""The catalogue: offerings by (instance type, capacity type[, zone]); bad entries named and skipped."""

from __future__ import annotations

import pytest

from ballast.internal.consolidation import ConsolidationInputError, Offering, parse_catalogue

from .builders import offering


def test_offerings_are_read_in_units() -> None:
    result = parse_catalogue({"offerings": [offering("m.large", 0.1, "1930m", "7Gi", pods=29, zone="a")]})
    assert result.offerings == (Offering("m.large", "on-demand", "a", 1930, 7 * 2**30, 29, 0.1),)
    assert result.problems == ()


def test_one_type_can_be_spot_and_on_demand_and_priced_per_zone() -> None:
    result = parse_catalogue(
        [
            offering("m.large", 0.10, "2", "8Gi"),
            offering("m.large", 0.03, "2", "8Gi", capacity_type="spot"),
            offering("m.large", 0.12, "2", "8Gi", zone="b"),
        ]
    )
    assert result.price("m.large", "spot", "a") == 0.03
    assert result.price("m.large", "on-demand", "a") == 0.10  # the zone-less entry
    assert result.price("m.large", "on-demand", "b") == 0.12
    assert result.price("m.large", "reserved", "a") == 0.0  # unknown: worth nothing, as in Karpenter
    assert result.price("unknown", "on-demand", "a") == 0.0


def test_malformed_entries_are_named_and_skipped() -> None:
    good = offering("m.large", 0.1, "2", "8Gi")
    result = parse_catalogue(
        {
            "offerings": [
                good,
                {**good, "instanceType": "m.xlarge", "pricePerHour": "cheap"},
                {**good, "instanceType": "m.2xlarge", "cpu": "two"},
                {**good, "instanceType": "m.4xlarge", "capacityType": "lease"},
                {**good, "instanceType": ""},
                "m.8xlarge",
            ]
        }
    )
    assert [o.instance_type for o in result.offerings] == ["m.large"]
    assert (
        result.problems[0]
        == "offerings[1] (m.xlarge/on-demand): pricePerHour 'cheap' is not a finite number ≥ 0; skipped"
    )
    assert result.problems[1].startswith("offerings[2] (m.2xlarge/on-demand): ")
    assert result.problems[2] == (
        "offerings[3] (m.4xlarge/lease): capacityType 'lease' is not one of reserved, spot, on-demand; skipped"
    )
    assert result.problems[3] == "offerings[4] (on-demand): instanceType must be a non-empty string; skipped"
    assert result.problems[4] == "offerings[5]: is a str, not a mapping; skipped"


def test_an_offering_listed_twice_is_not_guessed_at() -> None:
    result = parse_catalogue([offering("m.large", 0.1, "2", "8Gi"), offering("m.large", 0.2, "2", "8Gi")])
    assert result.offerings == ()
    assert result.problems == ("offerings[0] (m.large/on-demand), offerings[1] (m.large/on-demand): the same offering "
                               "listed more than once; all skipped",)  # fmt: skip


def test_defaults_and_pools() -> None:
    result = parse_catalogue(
        {
            "defaults": {"capacityType": "spot", "zone": "z"},
            "offerings": [{k: v for k, v in offering("m.large", 0.1, "2", "8Gi").items() if k != "capacityType"}],
            "pools": {"general": ["m.large"], "bad": "m.large"},
        }
    )
    assert result.offerings[0].capacity_type == "spot"
    assert (result.default_capacity_type, result.default_zone) == ("spot", "z")
    assert result.pool_instance_types == {"general": frozenset({"m.large"})}
    assert result.problems == ("pools['bad']: not a list of instance type names; skipped",)
    assert result.launchable("general") == result.offerings
    assert result.launchable("other", frozenset({"m.xlarge"})) == ()


def test_a_document_that_is_not_a_mapping_or_list_is_refused() -> None:
    with pytest.raises(ConsolidationInputError, match="catalogue: is a str"):
        parse_catalogue("m.large")  # type: ignore[arg-type]
