"""Write-time validation (docs/design.md, difference 18): every problem named by its field path."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.api.ballast.v1.policyspec import ResourcePolicySpec
from ballast.internal.policy import compile_policy, policy_problems, validate_policy

from .builders import crp

HEADROOM = 'must be a decimal number 0 < headroom ≤ 100 with at most 6 decimal places, such as "1.2"'
MAX_CV = 'must be a decimal number 0 ≤ maxCV ≤ 100 with at most 6 decimal places, such as "1.5"'
PERCENT = 'must be a number 0 < p ≤ 100 with at most 6 decimal places, optionally followed by %, such as "10%"'
QUANTITY = (
    'must be a quantity such as "25m" or "25Mi" ("0" always checks the CV), with an exponent of at most two digits'
)

METRICS = [
    {"resource": "cpu", "field": "request", "source": "kubernetes-metrics", "aggregation": "avg", "headroom": "1.25"},
    {"resource": "memory", "field": "request", "source": "kubernetes-metrics", "aggregation": "p75", "headroom": "1.0"},
    {"resource": "memory", "field": "limit", "source": "kubernetes-metrics", "aggregation": "p99", "headroom": "1.2"},
    {"resource": "ephemeral-storage", "field": "request", "source": "kubelet-summary", "aggregation": "p90"},
    {"resource": "ephemeral-storage", "field": "limit", "source": "kubelet-summary", "aggregation": "p99",
     "headroom": "1.2"},
]  # fmt: skip
HOMOGENEOUS_LARGE_FLEET = {
    "priority": 0,
    "selector": {},
    "metrics": METRICS,
    "readiness": {
        "minDataPoints": 250,
        "minTimeSpan": "24h",
        "maxCV": "1.5",
        "cvMeanFloor": {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"},
    },
    "behaviors": {"thresholds": {"default": "10%"}, "resize": {"maxChangePerCycle": "50%", "interval": "15m"}},
}
LOCAL_TESTING = {
    "metrics": METRICS[:3],
    "readiness": {"minDataPoints": 5, "minTimeSpan": "1m", "maxCV": "2.0"},
    "behaviors": {"resize": {"interval": "30s"}},
}
FULL_SELECTOR = {
    "kinds": ["Deployment", "StatefulSet"],
    "namespaces": {"include": ["team-a", "/team-[a-z]+/"], "exclude": ["/kube-.*/"]},
    "annotations": {"example.com/team": "/pay.*/", "tier": "web"},
    "labelSelector": {
        "matchLabels": {"app.kubernetes.io/name": "web"},
        "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}, {"key": "x", "operator": "Exists"}],
    },
}


@pytest.mark.parametrize(
    "spec",
    [
        {},
        HOMOGENEOUS_LARGE_FLEET,
        LOCAL_TESTING,
        {"selector": FULL_SELECTOR},
        {
            "behaviors": {
                "thresholds": {
                    "default": "15",
                    "resize": {"default": "5%", "resourceThresholds": {"memory": {"request": "20%", "limit": "0.5%"}}},
                },
                "resize": {"maxChangePerCycle": "100%", "interval": "0"},
            }
        },
        {"readiness": {"maxCV": "0", "cvMeanFloor": {"cpu": "0", "memory": "1e6"}, "minTimeSpan": "1h30m"}},
        {
            "behaviors": {
                "oom": {
                    "enabled": False,
                    "bumpRatio": "1",
                    "minBump": "0",
                    "window": "1h",
                    "maxLimit": "4Gi",
                    "maxKills": 10,
                }
            }
        },
        # Blank strings mean omitted, as in with_defaults().
        {"metrics": [{"resource": "cpu", "source": "m", "headroom": ""}], "behaviors": {"thresholds": {"default": ""}}},
    ],
)
def test_valid_specs_have_no_problems(spec: dict[str, Any]) -> None:
    assert validate_policy(spec) == []
    assert validate_policy(ResourcePolicySpec.model_validate(spec)) == []


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        (
            {"selector": {"namespaces": {"include": ["team-a", "/(/"]}}},
            ['spec.selector.namespaces.include[1]: invalid regex "/(/": missing closing ): `(`'],
        ),
        (
            {"selector": {"namespaces": {"exclude": ["/(a)\\1/"]}}},
            [
                'spec.selector.namespaces.exclude[0]: invalid regex "/(a)\\\\1/": invalid escape sequence: `\\1` '
                "(policies use RE2 syntax: no backreferences or look-around)"
            ],
        ),
        (
            {"selector": {"namespaces": {"include": ["team-*", "Team", "/team-.*/"]}}},
            [
                'spec.selector.namespaces.include[0]: "team-*" is neither a namespace name nor a /regex/ '
                "(write /…/ for a pattern)",
                'spec.selector.namespaces.include[1]: "Team" is neither a namespace name nor a /regex/ '
                "(write /…/ for a pattern)",
            ],
        ),
        (
            {"selector": {"annotations": {"example.com/team": "/[/", "bad key": "x"}}},
            [
                'spec.selector.annotations[bad key]: "bad key" is not a valid annotation key, so no pod can have it',
                'spec.selector.annotations[example.com/team]: invalid regex "/[/": missing closing ]: `[`',
            ],
        ),
        (
            {"selector": {"labelSelector": {"matchLabels": {"app": "a b"}}}},
            ["spec.selector.labelSelector.matchLabels[app]: invalid label value 'a b'"],
        ),
        (
            {
                "selector": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "env", "operator": "In"},
                            {"key": "ok", "operator": "Exists"},
                            {"key": "tier", "operator": "Exists", "values": ["x"]},
                            {"key": "app", "operator": "Like", "values": ["x"]},
                        ]
                    }
                }
            },
            [
                "spec.selector.labelSelector.matchExpressions[0]: operator In needs values",
                "spec.selector.labelSelector.matchExpressions[2]: operator Exists takes no values",
                "spec.selector.labelSelector.matchExpressions[3]: operator 'Like' is not one of In, NotIn, Exists, "
                "DoesNotExist",
            ],
        ),
        (
            {"metrics": [{"resource": "cpu", "source": "m", "headroom": h} for h in ("1.2", "x", "0", "-1", "NaN")]},
            [
                f'spec.metrics[{i}].headroom: invalid headroom "{h}": {HEADROOM}'
                for i, h in ((1, "x"), (2, "0"), (3, "-1"), (4, "NaN"))
            ],
        ),
        (
            {"readiness": {"minTimeSpan": "1 day", "maxCV": "-0.5", "cvMeanFloor": {"cpu": "25 m", "memory": "-1Mi"}}},
            [
                'spec.readiness.minTimeSpan: invalid duration "1 day": must be a Go duration such as "24h", "15m" '
                'or "90s"',
                f'spec.readiness.maxCV: invalid maxCV "-0.5": {MAX_CV}',
                f'spec.readiness.cvMeanFloor[cpu]: invalid quantity "25 m": {QUANTITY}',
                'spec.readiness.cvMeanFloor[memory]: invalid quantity "-1Mi": must not be negative',
            ],
        ),
        (
            {"readiness": {"minTimeSpan": "0s", "cvMeanFloor": {"cpu": ""}}},
            [
                'spec.readiness.minTimeSpan: invalid duration "0s": must be longer than 0',
                f'spec.readiness.cvMeanFloor[cpu]: invalid quantity "": {QUANTITY}',
            ],
        ),
        (
            {
                "behaviors": {
                    "thresholds": {
                        "default": "ten",
                        "resize": {"default": "0%", "resourceThresholds": {"memory": {"request": "5%", "limit": "-5"}}},
                    },
                    "resize": {"maxChangePerCycle": "50 percent", "interval": "-1m"},
                }
            },
            [
                f'{path}: invalid percentage "{value}": {PERCENT}'
                for path, value in (
                    ("spec.behaviors.thresholds.default", "ten"),
                    ("spec.behaviors.thresholds.resize.default", "0%"),
                    ("spec.behaviors.thresholds.resize.resourceThresholds[memory].limit", "-5"),
                    ("spec.behaviors.resize.maxChangePerCycle", "50 percent"),
                )
            ]
            + ['spec.behaviors.resize.interval: invalid duration "-1m": must be 0 or longer'],
        ),
        (
            {"behaviors": {"oom": {"bumpRatio": "0.9", "minBump": "-1Mi", "window": "0", "maxLimit": "lots"}}},
            [
                'spec.behaviors.oom.bumpRatio: invalid bumpRatio "0.9": must be a decimal number 1 ≤ bumpRatio ≤ 100 '
                'with at most 6 decimal places, such as "1.2"',
                'spec.behaviors.oom.minBump: invalid quantity "-1Mi": must not be negative',
                'spec.behaviors.oom.window: invalid duration "0": must be longer than 0',
                f'spec.behaviors.oom.maxLimit: invalid quantity "lots": {QUANTITY}',
            ],
        ),
        (
            {"behaviors": {"thresholds": {"resize": {"resourceThresholds": {"": {"request": "5%"}}}}}},
            ["spec.behaviors.thresholds.resize.resourceThresholds[]: resource name must not be empty"],
        ),
    ],
)
def test_problems_name_the_field(spec: dict[str, Any], messages: list[str]) -> None:
    assert validate_policy(spec) == messages
    # The compiled policy reports the same problems (the Valid condition's message).
    assert list(compile_policy(crp("p", **spec)).messages) == messages


# Every decimal's range (docs/design.md, difference 25): each bound, just inside and just outside.
@pytest.mark.parametrize(
    ("field", "inside", "outside"),
    [
        ("headroom", ["0.000001", "1.25", "100", "100.000000"], ["0", "0.0000001", "100.000001", "150", "1e-400",
                                                                   "1e400", "1e26", "1.0000001", "1e0", "+1", " 1.2"]),
        ("maxCV", ["0", "0.000001", "1.5", "100"], ["100.000001", "101", "1e3", "-0.5", "1.5e0", "0.0000001"]),
        ("threshold", ["0.000001%", "10%", "10", "100%", "100"], ["0%", "0", "100.000001%", "150%", "1e1%", "10 %"]),
        ("maxChangePerCycle", ["0.000001", "50%", "100%"], ["0%", "100.5%", "150%", "1e2%", "5.0000001%"]),
        ("cvMeanFloor", ["0", "25m", "25Mi", "1e6", "7Ei", "9223372036854775807"], ["8Ei", "-1", "1e100", "25 m", ""]),
    ],
)  # fmt: skip
def test_each_decimal_is_valid_within_its_range_and_refused_outside(
    field: str, inside: list[str], outside: list[str]
) -> None:
    for value in inside:
        assert validate_policy(_spec_with(field, value)) == [], value
    for value in outside:
        assert len(validate_policy(_spec_with(field, value))) == 1, value


def _spec_with(field: str, value: str) -> dict[str, Any]:
    if field == "headroom":
        return {"metrics": [{"resource": "cpu", "source": "m", "headroom": value}]}
    if field == "maxCV":
        return {"readiness": {"maxCV": value}}
    if field == "cvMeanFloor":
        return {"readiness": {"cvMeanFloor": {"memory": value}}}
    if field == "threshold":
        return {"behaviors": {"thresholds": {"default": value}}}
    return {"behaviors": {"resize": {"maxChangePerCycle": value}}}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"metrics": [{"resource": "memory", "source": "m", "headroom": "1e-400"}]},
            f'spec.metrics[0].headroom: invalid headroom "1e-400": {HEADROOM}',
        ),
        (
            {"metrics": [{"resource": "cpu", "source": "m", "headroom": "150"}]},
            f'spec.metrics[0].headroom: invalid headroom "150": {HEADROOM}',
        ),
        ({"readiness": {"maxCV": "100.5"}}, f'spec.readiness.maxCV: invalid maxCV "100.5": {MAX_CV}'),
        (
            {"behaviors": {"thresholds": {"resize": {"resourceThresholds": {"cpu": {"limit": "100.5%"}}}}}},
            f'spec.behaviors.thresholds.resize.resourceThresholds[cpu].limit: invalid percentage "100.5%": {PERCENT}',
        ),
        (
            {"behaviors": {"resize": {"maxChangePerCycle": "150%"}}},
            f'spec.behaviors.resize.maxChangePerCycle: invalid percentage "150%": {PERCENT}',
        ),
        (
            {"readiness": {"cvMeanFloor": {"cpu": "9300000000000000"}}},
            'spec.readiness.cvMeanFloor[cpu]: invalid quantity "9300000000000000": must be at most '
            "9223372036854775807 millicores (2**63 − 1)",
        ),
        (
            {"readiness": {"cvMeanFloor": {"memory": "8Ei"}}},
            'spec.readiness.cvMeanFloor[memory]: invalid quantity "8Ei": must be at most 9223372036854775807 bytes '
            "(2**63 − 1)",
        ),
        (
            {"readiness": {"cvMeanFloor": {"memory": "1e100"}}},
            f'spec.readiness.cvMeanFloor[memory]: invalid quantity "1e100": {QUANTITY}',
        ),
    ],
)
def test_an_out_of_range_decimal_is_refused_naming_the_field_and_the_range(spec: dict[str, Any], message: str) -> None:
    assert validate_policy(spec) == [message]


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        ({"priority": "high"}, ["spec.priority: Input should be a valid integer"]),
        (
            {"priority": 2**31},
            ["spec.priority: Value error, 2147483648 does not fit in int32 (-2147483648..2147483647)"],
        ),
        (
            {"readiness": {"minDataPoints": 0, "cvMeanFloor": {"cpu": 25}}},
            [
                "spec.readiness.minDataPoints: Input should be greater than or equal to 1",
                "spec.readiness.cvMeanFloor[cpu]: Input should be a valid string",
            ],
        ),
        (
            {"metrics": [{"resource": "cpu", "source": "m", "field": "requests", "aggregation": "p42"}]},
            [
                "spec.metrics[0].field: Input should be 'request' or 'limit'",
                "spec.metrics[0].aggregation: Input should be 'p50', 'p75', 'p90', 'p95', 'p99', 'max' or 'avg'",
            ],
        ),
        (
            {"selector": {"labelSelector": {"matchExpressions": [{"key": "app"}]}}},
            ["spec.selector.labelSelector.matchExpressions[0].operator: Field required"],
        ),
    ],
)
def test_schema_problems_of_json_name_the_field(spec: dict[str, Any], messages: list[str]) -> None:
    assert validate_policy(spec) == messages


def test_problems_say_which_block_matching() -> None:
    spec = {
        "selector": {"namespaces": {"include": ["/(/", "team-*"]}},
        "metrics": [{"resource": "cpu", "source": "m", "headroom": "x"}],
    }
    assert [(p.path, p.blocks_matching) for p in policy_problems(spec)] == [
        ("spec.selector.namespaces.include[0]", True),
        ("spec.selector.namespaces.include[1]", False),
        ("spec.metrics[0].headroom", False),
    ]


def test_validate_refuses_other_types() -> None:
    with pytest.raises(TypeError, match="expected a ResourcePolicySpec or a mapping, got list"):
        validate_policy([])  # type: ignore[arg-type]


_TEXT = st.text(max_size=12)


@given(
    st.fixed_dictionaries(
        {
            "selector": st.fixed_dictionaries(
                {
                    "namespaces": st.fixed_dictionaries({"include": st.lists(_TEXT, max_size=3)}),
                    "annotations": st.dictionaries(_TEXT, _TEXT, max_size=2),
                    "labelSelector": st.fixed_dictionaries({"matchLabels": st.dictionaries(_TEXT, _TEXT, max_size=2)}),
                }
            ),
            "metrics": st.lists(
                st.fixed_dictionaries({"resource": st.just("cpu"), "source": st.just("m"), "headroom": _TEXT}),
                max_size=2,
            ),
            "readiness": st.fixed_dictionaries(
                {"minTimeSpan": _TEXT, "maxCV": _TEXT, "cvMeanFloor": st.dictionaries(_TEXT, _TEXT, max_size=2)}
            ),
            "behaviors": st.fixed_dictionaries(
                {
                    "thresholds": st.fixed_dictionaries({"default": _TEXT}),
                    "resize": st.fixed_dictionaries({"maxChangePerCycle": _TEXT, "interval": _TEXT}),
                    "oom": st.fixed_dictionaries(
                        {"bumpRatio": _TEXT, "minBump": _TEXT, "window": _TEXT, "maxLimit": _TEXT}
                    ),
                }
            ),
        }
    )
)
def test_any_string_values_give_messages_never_exceptions(spec: dict[str, Any]) -> None:
    messages = validate_policy(spec)
    assert all(message.startswith("spec.") and ": " in message for message in messages)
    compiled = compile_policy(crp("p", **spec))
    assert list(compiled.messages) == messages
    assert compiled.matchable is not any(p.blocks_matching for p in compiled.problems)


# docs/design.md, difference 70: values no pod or profile can ever meet.
@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        (
            {"selector": {"kinds": ["", "x/y/z", "ReplicaSet", "apps/v1/Deployment"]}},
            [
                'spec.selector.kinds[0]: "" is not a kind name such as Deployment or ReplicaSet (no group or version; '
                "leave kinds out to match every pod)",
                'spec.selector.kinds[1]: "x/y/z" is not a kind name such as Deployment or ReplicaSet (no group or '
                "version; leave kinds out to match every pod)",
                'spec.selector.kinds[3]: "apps/v1/Deployment" is not a kind name such as Deployment or ReplicaSet (no '
                "group or version; leave kinds out to match every pod)",
            ],
        ),
        (
            {"readiness": {"minDataPoints": 99999999999}},
            [
                "spec.readiness.minDataPoints: 99999999999 samples can never be collected: at most 31536000 (a year "
                "of polls once a second)"
            ],
        ),
    ],
    ids=["kinds", "min-data-points"],
)
def test_values_that_can_never_match_or_be_met_are_problems(spec: dict[str, Any], messages: list[str]) -> None:
    assert validate_policy(spec) == messages
    compiled = compile_policy(crp("p", **spec))
    assert list(compiled.messages) == messages
    assert compiled.matcher is not None  # reported, never blocking: a stored policy matches as the Go operator's


@pytest.mark.parametrize("kinds", [["Deployment"], ["ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronTab"]])
def test_kind_names_are_not_problems(kinds: list[str]) -> None:
    assert validate_policy({"selector": {"kinds": kinds}, "readiness": {"minDataPoints": 31536000}}) == []
