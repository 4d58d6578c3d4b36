"""`ballastd --balancer-reprocess-period` becomes the Balancer controller's period in seconds."""

from __future__ import annotations

import pytest

from ballast.internal.cmd import ballastd


def _period(*flags: str) -> float:
    return ballastd.balancer_reprocess_period(ballastd.build_parser().parse_args(["run", *flags]))


def test_the_default_is_upstreams_15_seconds() -> None:
    assert _period() == 15.0


def test_a_go_duration_is_read() -> None:
    assert _period("--balancer-reprocess-period=1m30s") == 90.0


@pytest.mark.parametrize("value", ["0s", "-5s", "banana"])
def test_a_bad_period_names_the_flag(value: str) -> None:
    with pytest.raises(ValueError, match="--balancer-reprocess-period"):
        _period(f"--balancer-reprocess-period={value}")
