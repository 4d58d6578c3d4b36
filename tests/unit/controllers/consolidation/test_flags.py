"""`ballastd --consolidation-*` become the advisor's settings; `--controllers=*` leaves the advisor out."""

from __future__ import annotations

import pytest

from ballast.controllers.consolidation import AdvisorSettings
from ballast.internal.cmd import ballastd


def _settings(*flags: str) -> AdvisorSettings:
    settings: AdvisorSettings = ballastd.consolidation_settings(
        ballastd.build_parser().parse_args(["run", "--operator-namespace=ops", *flags])
    )
    return settings


def test_the_defaults() -> None:
    settings = _settings()
    assert settings.interval == 600.0
    assert settings.default_policy == "Balanced"
    assert settings.k == 2.0
    assert settings.read.catalogue == ("ops", "ballast-consolidation-catalogue")
    assert settings.read.pool_label == "node.kubernetes.io/instance-type"


def test_every_flag_is_read() -> None:
    settings = _settings(
        "--consolidation-interval=1h30m", "--consolidation-policy=WhenEmptyOrUnderutilized",
        "--consolidation-catalogue=prices/list", "--consolidation-pool-label=example.com/pool", "--consolidation-k=3",
    )  # fmt: skip
    assert (settings.interval, settings.default_policy, settings.k) == (5400.0, "WhenEmptyOrUnderutilized", 3.0)
    assert (settings.read.catalogue, settings.read.pool_label) == (("prices", "list"), "example.com/pool")


@pytest.mark.parametrize(
    ("flag", "named"),
    [
        ("--consolidation-interval=0s", "--consolidation-interval"),
        ("--consolidation-interval=soon", "--consolidation-interval"),
        ("--consolidation-k=0", "--consolidation-k"),
        ("--consolidation-k=2147483648", "--consolidation-k"),  # Karpenter's k is an int32
        ("--consolidation-catalogue=just-a-name", "--consolidation-catalogue"),
        ("--consolidation-catalogue=a/b/c", "--consolidation-catalogue"),
        ("--consolidation-pool-label=", "--consolidation-pool-label"),
    ],
)
def test_a_bad_value_names_the_flag(flag: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        _settings(flag)


def test_an_unknown_policy_is_refused_by_the_parser() -> None:
    with pytest.raises(SystemExit):
        _settings("--consolidation-policy=Sometimes")


def test_the_advisor_is_disabled_by_default_and_runs_when_named() -> None:
    assert "consolidation" not in ballastd.enabled_controllers("*")
    assert "balancer" in ballastd.enabled_controllers("*")
    assert "consolidation" in ballastd.enabled_controllers("*,consolidation")
    assert "consolidation" not in ballastd.enabled_controllers("*,consolidation,-consolidation")
