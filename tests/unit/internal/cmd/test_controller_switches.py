"""`ballastd --balancer=true|false` and `--consolidation=true|false`: one flag per optional controller, applied
after `--controllers` wherever it stands, so separate kustomize components can each set their own."""

from __future__ import annotations

import pytest

from ballast.internal.cmd.ballastd import CONTROLLER_SWITCHES, build_parser, selected_controllers
from ballast.internal.cmd.wiring import CONTROLLERS, DISABLED_BY_DEFAULT

DEFAULT = set(CONTROLLERS) - set(DISABLED_BY_DEFAULT)


def _selected(*argv: str) -> set[str]:
    return selected_controllers(build_parser().parse_args(list(argv)))


def test_without_switches_controllers_decides_as_before() -> None:
    assert _selected() == DEFAULT
    assert _selected("--controllers=*,-balancer") == DEFAULT - {"balancer"}
    assert _selected("--controllers=*,consolidation") == set(CONTROLLERS)
    assert _selected("--controllers=*,-balancer", "--controllers=*,consolidation") == set(CONTROLLERS)  # last wins
    assert _selected("--controllers=killswitch") == {"killswitch"}


@pytest.mark.parametrize(
    "argv",
    [
        ["--balancer=false", "--consolidation=true"],
        ["--consolidation=true", "--balancer=false"],
        ["--balancer=false", "--controllers=*,consolidation"],
        ["--consolidation", "--controllers=*,-balancer", "--balancer=false"],
        ["--controllers=*,balancer", "--balancer=false", "--consolidation=true"],
    ],
)
def test_each_switch_wins_over_controllers_in_any_order(argv: list[str]) -> None:
    assert _selected(*argv) == set(CONTROLLERS) - {"balancer"}


def test_a_switch_turns_on_what_controllers_left_out_and_off_what_it_named() -> None:
    assert _selected("--controllers=killswitch", "--balancer=true") == {"killswitch", "balancer"}
    assert _selected("--controllers=*,consolidation", "--consolidation=false") == DEFAULT
    assert _selected("--balancer=false", "--balancer=true") == DEFAULT  # the later switch wins
    assert _selected("--balancer=0", "--consolidation=t") == set(CONTROLLERS) - {"balancer"}  # Go's booleans


def test_the_switches_are_known_controllers_and_unset_by_default() -> None:
    assert set(CONTROLLER_SWITCHES) <= set(CONTROLLERS)
    args = build_parser().parse_args([])
    assert (args.balancer, args.consolidation) == (None, None)


def test_a_bad_switch_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--balancer=off"])
    assert "--balancer" in capsys.readouterr().err
