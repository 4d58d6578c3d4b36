from __future__ import annotations

import pytest

from ballast.internal.stats import LimitFit, fit_limit


@pytest.mark.parametrize(
    ("new_request", "original_request", "original_limit", "resource", "fit"),
    [
        ("300m", "100m", None, "cpu", LimitFit(limit=None, scaled=False)),  # no limit, nothing to keep
        ("300m", "100m", "500m", "cpu", LimitFit(limit="500m", scaled=False)),
        ("500m", "100m", "500m", "cpu", LimitFit(limit="500m", scaled=False)),  # equal is fine
        ("600m", "100m", "0.5", "cpu", LimitFit(limit="3", scaled=True)),  # ratio 5:1 kept
        ("300m", "200m", "500m", "cpu", LimitFit(limit="500m", scaled=False)),
        ("1", "200m", "500m", "cpu", LimitFit(limit="2500m", scaled=True)),
        ("700m", "300m", "500m", "cpu", LimitFit(limit="1166m", scaled=True)),  # 500 × 700 / 300 truncated
        ("700m", None, "500m", "cpu", LimitFit(limit="700m", scaled=True)),  # no ratio: limit = request
        ("700m", "500m", "500m", "cpu", LimitFit(limit="700m", scaled=True)),  # request = limit: stays equal
        ("700m", "600m", "500m", "cpu", LimitFit(limit="700m", scaled=True)),
        ("384Mi", "128Mi", "256Mi", "memory", LimitFit(limit="768Mi", scaled=True)),
        (3 * 2**28, 2**27, 2**28, "memory", LimitFit(limit="1536Mi", scaled=True)),
        (100, 50, 200, "memory", LimitFit(limit="200", scaled=False)),  # int units format canonically
    ],
)
def test_a_request_above_an_unmanaged_limit_scales_the_limit_by_the_original_ratio(
    new_request: str | int,
    original_request: str | int | None,
    original_limit: str | int | None,
    resource: str,
    fit: LimitFit,
) -> None:
    assert fit_limit(new_request, original_request, original_limit, resource) == fit


def test_a_bad_quantity_is_named() -> None:
    with pytest.raises(ValueError, match="'lots' is not a Kubernetes quantity"):
        fit_limit("1", "1", "lots", "cpu")
