"""The testing kit's waits: `eventually` returns the first truthy value and quotes the last error when it times
out; `consistently` fails on the first falsy value, naming how long it held."""

from __future__ import annotations

import pytest

from ballast.runtime.envtest.wait import WaitTimeoutError
from ballast.runtime.testing import consistently, eventually


def test_eventually_quotes_the_last_error_and_consistently_names_when_it_broke() -> None:
    def missing() -> None:
        raise LookupError("configmaps 'x' not found")

    with pytest.raises(WaitTimeoutError, match=r"the ConfigMap.*configmaps 'x' not found"):
        eventually(missing, timeout=0.3, what="the ConfigMap")
    values = iter([True, True, False])
    with pytest.raises(WaitTimeoutError, match=r"the count stopped holding after .* \(got False\)"):
        consistently(lambda: next(values), duration=5.0, interval=0.01, what="the count")
    assert eventually(lambda: "ready", what="a value") == "ready"


def test_consistently_returns_when_the_condition_held_for_the_duration() -> None:
    calls: list[int] = []

    def holds() -> bool:
        calls.append(1)
        return True

    consistently(holds, duration=0.05, interval=0.01, what="always")
    assert len(calls) >= 2
