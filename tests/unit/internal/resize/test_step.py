from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ballast.internal.quantity import to_units
from ballast.internal.resize import cap_change, exceeds_drift, step_toward


def _walk(current: str, recommended: str, max_change: int, threshold: int, **kwargs: str) -> list[str]:
    steps: list[str] = []
    while current != recommended and len(steps) < 50:
        current = cap_change(current, recommended, max_change, threshold, **kwargs)
        steps.append(current)
    return steps


def test_the_anchor_walk_from_1000m_to_288m_is_exact() -> None:
    # Go's binary floats give 644m, 465m, 376m, 331m, 288m (docs/design.md, difference 13).
    assert _walk("1000m", "288m", 50, 10) == ["644m", "466m", "377m", "332m", "288m"]
    assert _walk("1", "288m", 50, 10, resource="cpu") == ["644m", "466m", "377m", "332m", "288m"]


def test_the_same_walk_in_int_units() -> None:
    walk, current = [], 1000
    while current != 288:
        current = step_toward(current, 288, 50, 10)
        walk.append(current)
    assert walk == [644, 466, 377, 332, 288]


@pytest.mark.parametrize(
    ("step", "resource", "expected"),
    [
        (("300m", "100m", 50, 10), None, "200m"),
        (("100m", "300m", 50, 10), None, "200m"),
        (("310m", "288m", 50, 10), None, "288m"),  # the step lands within 10 %: snap to the target
        (("0", "250m", 50, 10), None, "250m"),  # current 0 jumps straight to the target
        (("100m", "301m", 50, 10), None, "200m"),  # 200.5 truncates toward zero
        (("100m", "200m", 100, 10), None, "200m"),
        (("100m", "200m", 150, 10), None, "250m"),  # not capped at 100 %: overshoots, as the Go operator does
        (("100m", "1000m", 25, 10), None, "325m"),
        (("1Gi", "512Mi", 50, 10), None, "768Mi"),
        (("1Gi", "1", 50, 10), None, "512Mi"),  # 536870912.5 bytes truncates to whole bytes
        (("333", "0", 50, 10), None, "166"),  # 166.5 bytes truncates
        (("1", "2", 50, 10), None, "1"),  # the Go operator's rule without resource: whole cores truncate
        (("1", "2", 50, 10), "cpu", "1500m"),  # with resource: exact millicores
        (("1", "2000m", 50, 10), "cpu", "1500m"),
        (("4", "1", 50, 10), "cpu", "2500m"),
        (("900m", "1", 50, 10), "cpu", "1"),  # a snap returns the recommendation as given
        ((1000, 288, 50, 10), "cpu", "644m"),
        ((2**30, 2**29, 50, 10), "memory", "768Mi"),
        (("1Gi", 2**29, 50, 10), "memory", "768Mi"),
        ((1000, 900, Decimal("33.3"), Decimal("2.5")), "cpu", "966m"),  # 966.7 truncates
    ],
)
def test_cap_change_steps_a_fraction_of_the_gap(
    step: tuple[str | int, str | int, Decimal | int, Decimal | int], resource: str | None, expected: str
) -> None:
    current, recommended, max_change, threshold = step
    assert cap_change(current, recommended, max_change, threshold, resource=resource) == expected


@pytest.mark.parametrize(
    ("values", "max_change", "resource", "error", "message"),
    [
        ((1000, 288), 50, None, TypeError, "needs resource= to format int units"),
        (("1", "1"), 0, None, ValueError, "max_change_pct must be > 0"),
        (("1", "1"), -5, None, ValueError, "max_change_pct must be ≥ 0"),
        (("1", "x"), 50, None, ValueError, "'x' is not a Kubernetes quantity"),
        (("1", "x"), 50, "cpu", ValueError, "'x' is not a Kubernetes quantity"),
    ],
)
def test_bad_arguments_are_named(
    values: tuple[str | int, str | int], max_change: int, resource: str | None, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        cap_change(*values, max_change, 10, resource=resource)


def test_step_toward_takes_only_int_units() -> None:
    with pytest.raises(TypeError, match="step_toward takes int units"):
        step_toward("1000m", 288, 50, 10)  # type: ignore[arg-type]


_UNITS = st.integers(0, 10**12)


@example(152, 14, 94, 37)  # truncation lands inside the threshold (see below)
@given(_UNITS, _UNITS, st.integers(1, 100), st.integers(0, 50))
def test_a_step_never_moves_away_from_or_past_the_target(
    current: int, recommended: int, max_change: int, threshold: int
) -> None:
    result = step_toward(current, recommended, max_change, threshold)
    assert min(current, recommended) <= result <= max(current, recommended)
    # Either the target, a value still beyond the threshold, or (a sub-unit step truncated away) unchanged. The
    # drift is judged on the exact step, which is then truncated toward zero (as the Go operator does): a step
    # down may land within a unit inside the threshold (152 → 14 at 94 %/37 % gives 22), its exact value did not.
    assert (
        result in (recommended, current)
        or exceeds_drift(result, recommended, threshold)
        or (result > recommended and exceeds_drift(result + 1, recommended, threshold))
    )


@given(st.integers(1, 10**12), st.integers(100, 10**12))
def test_the_default_cap_converges_on_the_target(current: int, recommended: int) -> None:
    for _ in range(64):
        if current == recommended:
            break
        current = step_toward(current, recommended, 50, 10)
    assert current == recommended


@given(st.integers(0, 10**9), st.integers(0, 10**9))
def test_strings_and_units_give_the_same_cpu_step(current: int, recommended: int) -> None:
    from_units = cap_change(current, recommended, 50, 10, resource="cpu")
    from_strings = cap_change(f"{current}m", f"{recommended}m", 50, 10)
    # A snap returns the recommendation as given (`1000m`), a step the canonical form (`1`): same value.
    assert to_units(from_units, "cpu") == to_units(from_strings, "cpu") == step_toward(current, recommended, 50, 10)
