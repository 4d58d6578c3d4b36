"""`limit_plan`, the apply rule admission writes and `explain` narrates: each rule, with its numbers."""

from __future__ import annotations

import pytest

from ballast.internal.limitplan import LimitRule, limit_plan
from ballast.internal.quantity import QuantityError


@pytest.mark.parametrize(
    ("request_", "limit", "current_request", "current_limit", "expected", "rule", "before"),
    [
        ("287m", "1", "500m", "2", "1", "recommended", None),  # the request fits under the recommended limit
        ("2", "1", None, None, "2", "raised-to-request", "1"),  # a recommended limit below the request
        (None, "100m", "250m", None, "250m", "raised-to-request", "100m"),  # only the limit managed: own request
        ("300m", None, "100m", None, None, "none", None),  # no limit anywhere: none is written
        ("300m", None, "100m", "1", None, "kept", "1"),  # the container's own limit still fits
        ("300m", None, "100m", "200m", "600m", "ratio", "200m"),  # 200m × 300m / 100m: its 2:1 ratio kept
        ("300m", None, None, "200m", "300m", "raised-to-request", "200m"),  # no ratio to keep: to the request
        ("3Gi", None, "1Gi", "1Gi", "3Gi", "raised-to-request", "1Gi"),  # a 1:1 ratio lands on the request
    ],
)
def test_each_rule(
    request_: str | None,
    limit: str | None,
    current_request: str | None,
    current_limit: str | None,
    expected: str | None,
    rule: LimitRule,
    before: str | None,
) -> None:
    resource = "memory" if (request_ or "").endswith("Gi") else "cpu"
    plan = limit_plan(
        resource, request=request_, limit=limit, current_request=current_request, current_limit=current_limit
    )
    assert (plan.limit, plan.rule, plan.before) == (expected, rule, before)
    assert plan.scaled == (rule in ("raised-to-request", "ratio"))
    assert plan.managed == (limit is not None)


def test_a_value_that_is_not_a_quantity_raises() -> None:
    with pytest.raises(QuantityError):
        limit_plan("cpu", request="300m", limit=None, current_request="100m", current_limit="lots")
