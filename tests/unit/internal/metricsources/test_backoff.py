"""One backoff per source: 1 s after a failure, doubling to 5 min; a success resets it."""

from __future__ import annotations

import pytest

from ballast.internal.metricsources import BackingOffError, Backoff, FetchError, FetchResult, FetchTarget, PolledSource
from ballast.runtime import FakeClock


class Flaky:
    def __init__(self) -> None:
        self.fail = True
        self.calls = 0

    def fetch(self, target: FetchTarget) -> FetchResult:
        self.calls += 1
        if self.fail:
            raise FetchError("down")
        return FetchResult([])


def test_delays_double_up_to_five_minutes() -> None:
    backoff = Backoff(FakeClock())

    delays = [backoff.failure() for _ in range(12)]

    assert delays == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]


def test_remaining_follows_the_clock_and_a_success_resets() -> None:
    clock = FakeClock()
    backoff = Backoff(clock)
    assert backoff.remaining() == 0
    backoff.failure()
    backoff.failure()
    assert backoff.remaining() == 2
    clock.advance(1.5)
    assert backoff.remaining() == pytest.approx(0.5)
    backoff.success()
    assert backoff.remaining() == 0
    assert backoff.failure() == 1


def test_a_polled_source_is_not_called_while_backing_off() -> None:
    clock = FakeClock()
    flaky = Flaky()
    polled = PolledSource("metrics", "kubernetesMetrics", flaky, clock)
    target = FetchTarget(0)

    with pytest.raises(FetchError):
        polled.fetch(target)
    with pytest.raises(BackingOffError) as backing_off:
        polled.fetch(target)
    assert backing_off.value.remaining == 1
    assert flaky.calls == 1

    clock.advance(1)
    flaky.fail = False
    assert polled.fetch(target).samples == []
    assert flaky.calls == 2
    assert polled.backoff.remaining() == 0


def test_backoff_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="initial"):
        Backoff(FakeClock(), initial=0)
