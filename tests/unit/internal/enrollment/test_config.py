"""`validate_ballast_config`: what makes a BallastConfig unusable, each problem named by its field path (the issue's
identity key `"not a label!!"`, repeated keys and `orphanTTL`/`retentionWindow: banana`)."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.api.ballast.v1 import BallastConfigSpec
from ballast.internal.enrollment.config import validate_ballast_config

NAME = "app.kubernetes.io/name"
COMPONENT = "app.kubernetes.io/component"
BAD_NAME = (
    'the name must consist of alphanumerics, "-", "_" or "." and start and end with an alphanumeric, '
    'such as "app" or "app.kubernetes.io/name"'
)


def spec(*keys: str, **fields: Any) -> dict[str, Any]:
    return {"identityLabels": list(keys), **fields}


@pytest.mark.parametrize(
    "body",
    [
        spec(NAME, COMPONENT),
        spec("app", "example.com/Tier_1", "team.x-y.io/a.b-c"),
        spec(NAME, orphanTTL="2s", retentionWindow="336h"),
        spec(NAME, orphanTTL="0", retentionWindow="-1h"),  # Go's meanings: delete at once; no window
        spec("x" * 63, "p" * 253 + "/n"),
    ],
)
def test_qualified_keys_and_go_durations_are_valid(body: dict[str, Any]) -> None:
    assert validate_ballast_config(body) == []
    assert validate_ballast_config(BallastConfigSpec.model_validate(body)) == []


def test_a_key_that_is_not_a_label_key_is_named_by_its_position() -> None:
    assert validate_ballast_config(spec(NAME, "not a label!!")) == [
        f'spec.identityLabels[1]: invalid label key "not a label!!": {BAD_NAME}'
    ]


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", 'the name must not be empty, such as "app" or "app.kubernetes.io/name"'),
        ("/app", 'the prefix before "/" must not be empty'),
        ("a/b/c", 'at most one "/" may separate a prefix from the name, such as "app" or "app.kubernetes.io/name"'),
        ("Example.com/app", 'the prefix must be a DNS subdomain: lower-case alphanumerics, "-" and ".", each part '
                            "starting and ending with an alphanumeric"),
        ("example.com/", 'the name must not be empty, such as "app" or "app.kubernetes.io/name"'),
        ("x" * 64, "the name must be at most 63 characters, got 64"),
        ("p" * 254 + "/n", "the prefix must be at most 253 characters, got 254"),
        ("-app", BAD_NAME),
        ("app.", BAD_NAME),
    ],
)  # fmt: skip
def test_each_label_key_rule_is_explained(key: str, reason: str) -> None:
    assert validate_ballast_config(spec(key)) == [f'spec.identityLabels[0]: invalid label key "{key}": {reason}']


def test_a_repeated_key_is_named_with_its_first_position() -> None:
    assert validate_ballast_config(spec(NAME, COMPONENT, NAME)) == [
        f'spec.identityLabels[2]: label key "{NAME}" appears more than once (first at spec.identityLabels[0])'
    ]


def test_too_many_keys_are_refused() -> None:
    keys = [f"k{index}" for index in range(33)]
    assert validate_ballast_config(spec(*keys)) == ["spec.identityLabels: at most 32 label keys, got 33"]


@pytest.mark.parametrize("field", ["orphanTTL", "retentionWindow"])
def test_a_duration_that_is_not_go_syntax_is_named(field: str) -> None:
    assert validate_ballast_config(spec(NAME, **{field: "banana"})) == [
        f'spec.{field}: invalid duration "banana": must be a Go duration such as "168h", "15m" or "1h30m"'
    ]


def test_every_problem_is_listed_in_field_order() -> None:
    problems = validate_ballast_config(spec("not a label!!", "a", "a", orphanTTL="banana", retentionWindow="7d"))
    assert [problem.split(":", 1)[0] for problem in problems] == [
        "spec.identityLabels[0]", "spec.identityLabels[2]", "spec.orphanTTL", "spec.retentionWindow",
    ]  # fmt: skip


def test_json_that_does_not_fit_the_model_gives_the_models_problems() -> None:
    assert validate_ballast_config({"identityLabels": []}) == [
        "spec.identityLabels: List should have at least 1 item after validation, not 0"
    ]
    assert validate_ballast_config({"identityLabels": ["app", 7]}) == [
        "spec.identityLabels[1]: Input should be a valid string"
    ]
    with pytest.raises(TypeError, match="expected a BallastConfigSpec or a mapping, got str"):
        validate_ballast_config("app")  # type: ignore[arg-type]
