"""Wire names, strict validation, unknown-field preservation and the fixed-width integer types."""

from __future__ import annotations

import string
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from ballast.api.scheme import KINDS
from ballast.api.wire import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, Int32, Int64, IntOrString, WireModel, wire_name


@pytest.mark.parametrize(
    ("python", "wire"),
    [
        ("orphan_ttl", "orphanTTL"),
        ("max_cv", "maxCV"),
        ("cv_mean_floor", "cvMeanFloor"),
        ("cv", "cv"),
        ("api_version", "apiVersion"),
        ("min_data_points", "minDataPoints"),
        ("std_dev", "stdDev"),
        ("p50", "p50"),
        ("scale_target_ref", "scaleTargetRef"),
        ("required_during_scheduling_ignored_during_execution", "requiredDuringSchedulingIgnoredDuringExecution"),
    ],
)
def test_wire_name(python: str, wire: str) -> None:
    assert wire_name(python) == wire


@given(st.lists(st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=8), min_size=1, max_size=5))
def test_wire_name_keeps_the_first_word_and_drops_underscores(words: list[str]) -> None:
    wire = wire_name("_".join(words))

    assert wire.startswith(words[0])
    assert "_" not in wire
    assert wire.lower() == "".join(words)


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> None:
    if model in seen:
        return
    seen.add(model)
    for field in model.model_fields.values():
        stack: list[Any] = [field.annotation]
        while stack:
            annotation = stack.pop()
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                _models(annotation, seen)
            stack.extend(get_args(annotation))


def all_models() -> list[type[BaseModel]]:
    """Every model class reachable from the kinds' fields."""
    seen: set[type[BaseModel]] = set()
    for kind in KINDS:
        _models(kind, seen)
    return sorted(seen, key=lambda m: m.__qualname__)


@pytest.mark.parametrize("model", all_models(), ids=lambda m: m.__qualname__)
def test_every_field_is_camel_case_on_the_wire_and_unique(model: type[BaseModel]) -> None:
    aliases = [field.alias for field in model.model_fields.values()]

    assert aliases == [wire_name(name) for name in model.model_fields]
    assert len(set(aliases)) == len(aliases)
    assert all(alias is not None and "_" not in alias for alias in aliases)


class Sample(WireModel):
    orphan_ttl: str = "168h"
    count: Int32 | None = None
    big: Int64 | None = None
    port: IntOrString | None = None
    child: Sample | None = None


@pytest.mark.parametrize("key", ["orphanTTL", "orphan_ttl"])
def test_fields_are_accepted_by_wire_and_python_name(key: str) -> None:
    assert Sample.model_validate({key: "1h"}).orphan_ttl == "1h"


def test_unknown_fields_are_kept_at_every_level_and_written_back() -> None:
    wire = {"orphanTTL": "1h", "futureField": {"a": [1, 2]}, "child": {"orphanTTL": "2h", "newer": True}}

    parsed = Sample.model_validate(wire)

    assert parsed.to_wire() == wire
    assert parsed.model_extra == {"futureField": {"a": [1, 2]}}


def test_to_wire_leaves_out_unset_optional_fields_but_keeps_defaults() -> None:
    assert Sample().to_wire() == {"orphanTTL": "168h"}
    assert Sample(count=0).to_wire() == {"orphanTTL": "168h", "count": 0}


@pytest.mark.parametrize(
    ("wire", "field", "message"),
    [
        ({"count": "5"}, "count", "valid integer"),
        ({"count": 1.5}, "count", "valid integer"),
        ({"count": True}, "count", "valid integer"),
        ({"orphanTTL": 5}, "orphanTTL", "valid string"),
        ({"count": INT32_MAX + 1}, "count", "does not fit in int32"),
        ({"count": INT32_MIN - 1}, "count", "does not fit in int32"),
        ({"big": INT64_MAX + 1}, "big", "does not fit in int64"),
        ({"port": 1.5}, "port", "valid integer"),
        ({"child": {"count": "x"}}, "child.count", "valid integer"),
    ],
)
def test_bad_input_fails_naming_the_wire_field(wire: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ValidationError) as invalid:
        Sample.model_validate(wire)

    error = invalid.value.errors()[0]
    assert ".".join(str(part) for part in error["loc"]).startswith(field)
    assert message in str(invalid.value)


@pytest.mark.parametrize(
    "wire",
    [{"count": INT32_MAX}, {"count": INT32_MIN}, {"big": INT64_MAX}, {"big": INT64_MIN}, {"port": 80}, {"port": "50%"}],
)
def test_values_in_range_round_trip(wire: dict[str, Any]) -> None:
    assert Sample.model_validate(wire).to_wire() == {"orphanTTL": "168h", **wire}


def test_int_or_string_keeps_the_type_it_was_given() -> None:
    assert Sample.model_validate({"port": "8080"}).port == "8080"
    assert Sample.model_validate({"port": 8080}).port == 8080
