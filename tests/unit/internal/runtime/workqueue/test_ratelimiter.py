"""Rate limiters: the delay sequences client-go produces, with literal numbers."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from ballast.runtime import FakeClock
from ballast.runtime.ratelimiter import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
    default_priority_queue_rate_limiter,
)


def delays(limiter: RateLimiter[str], item: str, count: int) -> list[float]:
    return [limiter.when(item) for _ in range(count)]


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (1, 0.005),
        (2, 0.01),
        (3, 0.02),
        (4, 0.04),
        (10, 2.56),
        (17, 327.68),
        (18, 655.36),
        (19, 1000.0),
        (20, 1000.0),
        (2000, 1000.0),  # far past the point where 2**n overflows a float
    ],
)
def test_exponential_delay_of_the_nth_consecutive_failure(failure: int, expected: float) -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    assert delays(limiter, "a", failure)[-1] == pytest.approx(expected)
    assert limiter.num_requeues("a") == failure


def test_exponential_reaches_655_36_seconds_exactly_at_the_18th_failure() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    sequence = delays(limiter, "a", 19)
    assert sequence[17] == 655.36
    assert sequence[18] == 1000.0
    assert sum(sequence[:18]) == pytest.approx(1310.715)  # ≈ 21.8 min before the cap


def test_exponential_counts_items_separately_and_forget_resets() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.001, 1000.0)
    assert delays(limiter, "a", 3) == pytest.approx([0.001, 0.002, 0.004])
    assert limiter.when("b") == pytest.approx(0.001)
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.num_requeues("b") == 1
    assert limiter.when("a") == pytest.approx(0.001)


@pytest.mark.parametrize(("base", "max_delay"), [(-1.0, 10.0), (1.0, -10.0)])
def test_exponential_rejects_negative_delays(base: float, max_delay: float) -> None:
    with pytest.raises(ValueError, match="negative"):
        ItemExponentialFailureRateLimiter(base, max_delay)


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        (default_item_based_rate_limiter, [0.001, 0.002, 0.004, 0.008]),
        (default_priority_queue_rate_limiter, [0.005, 0.01, 0.02, 0.04]),
    ],
)
def test_default_per_item_limiters(factory: Callable[[], RateLimiter[str]], expected: list[float]) -> None:
    limiter: RateLimiter[str] = factory()
    assert delays(limiter, "a", 4) == pytest.approx(expected)


def test_fast_slow_switches_after_max_fast_attempts() -> None:
    limiter: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(0.1, 5.0, 3)
    assert delays(limiter, "a", 5) == [0.1, 0.1, 0.1, 5.0, 5.0]
    assert limiter.num_requeues("a") == 5
    assert limiter.when("b") == 0.1
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.1


@pytest.mark.parametrize(
    ("qps", "burst", "script", "expected"),
    [
        # The bucket starts full: `burst` reservations are free, then one token every 1/qps seconds.
        (10.0, 100, [("when", 100)], [0.0] * 100),
        (10.0, 100, [("when", 103)], [0.0] * 100 + [0.1, 0.2, 0.3]),
        # Two tokens owed, one second refills ten: eight free, then the queue builds again.
        (10.0, 100, [("when", 102), ("advance", 1.0), ("when", 9)], [0.0] * 100 + [0.1, 0.2] + [0.0] * 8 + [0.1]),
        (1.0, 1, [("when", 3), ("advance", 0.5), ("when", 1)], [0.0, 1.0, 2.0, 2.5]),
        # Refill stops at the burst size.
        (1.0, 2, [("advance", 60.0), ("when", 3)], [0.0, 0.0, 1.0]),
    ],
)
def test_bucket_reserves_and_returns_the_wait(
    qps: float, burst: int, script: list[tuple[str, float]], expected: list[float]
) -> None:
    clock = FakeClock()
    limiter: BucketRateLimiter[str] = BucketRateLimiter(qps, burst, clock=clock)
    observed: list[float] = []
    for step, amount in script:
        if step == "advance":
            clock.advance(amount)
        else:
            observed.extend(limiter.when(f"item-{len(observed)}") for _ in range(int(amount)))
    assert observed == pytest.approx(expected)
    assert limiter.num_requeues("item-0") == 0


def test_bucket_forget_changes_nothing() -> None:
    clock = FakeClock()
    limiter: BucketRateLimiter[str] = BucketRateLimiter(1.0, 1, clock=clock)
    limiter.when("a")
    limiter.forget("a")
    assert limiter.when("a") == 1.0


@pytest.mark.parametrize(("qps", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_bucket_rejects_a_configuration_that_could_never_hand_out_a_token(qps: float, burst: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        BucketRateLimiter(qps, burst)


def test_max_of_takes_the_longest_delay_and_forwards_forget() -> None:
    clock = FakeClock()
    exponential: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(0.25, 100.0)
    fast_slow: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(0.0, 3.0, 4)
    bucket: BucketRateLimiter[str] = BucketRateLimiter(1.0, 2, clock=clock)
    limiter = MaxOfRateLimiter(exponential, fast_slow, bucket)
    # exponential 0.25, 0.5, 1, 2, 4, 8; bucket 0, 0, 1, 2, 3, 4; fast-slow 0 ×4 then 3.
    assert delays(limiter, "a", 6) == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
    assert limiter.num_requeues("a") == 6
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 5.0  # the bucket still remembers the earlier reservations


def test_max_of_nothing_never_delays() -> None:
    limiter: MaxOfRateLimiter[str] = MaxOfRateLimiter()
    assert limiter.when("a") == 0.0
    assert limiter.num_requeues("a") == 0


def test_with_max_wait_clamps_every_delay() -> None:
    inner: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 1000.0)
    limiter = WithMaxWaitRateLimiter(inner, 3.0)
    assert delays(limiter, "a", 4) == [1.0, 2.0, 3.0, 3.0]
    assert limiter.num_requeues("a") == 4
    limiter.forget("a")
    assert inner.num_requeues("a") == 0


def test_default_controller_limiter_is_exponential_until_the_bucket_runs_dry() -> None:
    clock = FakeClock()
    limiter: MaxOfRateLimiter[str] = default_controller_rate_limiter(clock=clock)
    first = [limiter.when(f"item-{index}") for index in range(100)]
    assert first == [0.005] * 100
    assert limiter.when("item-100") == pytest.approx(0.1)  # 101st retry in the same instant: 10 qps
    assert limiter.when("item-0") == pytest.approx(0.2)  # the bucket dominates the exponential's 10 ms
    assert limiter.num_requeues("item-0") == 2


@pytest.mark.parametrize(
    "factory",
    [
        lambda: ItemExponentialFailureRateLimiter(0.0, 0.0),
        lambda: ItemFastSlowRateLimiter(0.0, 0.0, 10),
    ],
)
def test_per_item_counts_are_exact_under_concurrent_failures(factory: Callable[[], RateLimiter[str]]) -> None:
    limiter: RateLimiter[str] = factory()
    start = threading.Barrier(4)

    def fail_many() -> None:
        start.wait()
        for _ in range(2000):
            limiter.when("shared")

    threads = [threading.Thread(target=fail_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert limiter.num_requeues("shared") == 8000
