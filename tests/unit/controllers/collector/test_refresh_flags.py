"""`ballastd --stats-refresh-fraction/--stats-refresh-max-age` become the collector's RefreshPolicy."""

from __future__ import annotations

import datetime

import pytest

from ballast.internal.cmd import ballastd
from ballast.internal.collection import RefreshPolicy


def _policy(*flags: str) -> RefreshPolicy:
    policy: RefreshPolicy = ballastd.refresh_policy(ballastd.build_parser().parse_args(["run", *flags]))
    return policy


def test_the_defaults_are_the_documented_rules() -> None:
    policy = _policy()
    assert (policy.min_new_fraction, policy.max_age) == (0.02, datetime.timedelta(minutes=15))
    assert policy.stagger  # the production spread of recomputations over cycles


def test_the_flags_set_both_knobs() -> None:
    policy = _policy("--stats-refresh-fraction=0", "--stats-refresh-max-age=1h30m")
    assert (policy.min_new_fraction, policy.max_age) == (0.0, datetime.timedelta(hours=1, minutes=30))


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--stats-refresh-fraction=1.5"], "--stats-refresh-fraction: 1.5 must be within"),
        (["--stats-refresh-max-age=15"], "--stats-refresh-max-age: .*'15'"),
        (["--stats-refresh-max-age=-1m"], "--stats-refresh-max-age: '-1m' must be positive"),
    ],
)
def test_bad_values_name_the_flag(flags: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _policy(*flags)
