"""Rate limiters for the workqueues: how long an item waits before a retry (client-go `default_rate_limiters.go`).

A limiter answers `when(item)` — the delay in seconds before `item` may be retried, counting the call as one
more failure — `forget(item)`, which clears that item's failure history (a controller calls it after a
successful reconcile), and `num_requeues(item)`. Limiters never reject: a busy token bucket hands out a longer
delay instead. All limiters here are thread-safe.

Delays are floats in seconds; client-go's durations are integer nanoseconds, so a delay here can differ from
Go's by less than a nanosecond.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from ballast.runtime.clock import Clock, RealClock

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

# 2.0 ** 1024 overflows a float; past this exponent every sane base is far above any max delay anyway.
_MAX_EXPONENT = 1023


class RateLimiter(Protocol[T_contra]):
    """client-go's `TypedRateLimiter`: per-item retry delays."""

    def when(self, item: T_contra) -> float:
        """Count one more failure of `item` and return how many seconds it should wait before the retry."""
        ...

    def forget(self, item: T_contra) -> None:
        """Clear `item`'s failure history (call it once the item has been processed successfully)."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """How many failures of `item` are being tracked."""
        ...


class ItemExponentialFailureRateLimiter(Generic[T]):
    """Per-item exponential backoff: base × 2^failures, capped at `max_delay`.

    The exponent is the number of failures counted *before* this one, so with the controller defaults (5 ms,
    1000 s) the delays are 5 ms, 10 ms, 20 ms, …; the 18th consecutive failure waits 655.36 s and from the 19th
    on the 1000 s cap applies.
    """

    def __init__(self, base: float = 0.005, max_delay: float = 1000.0) -> None:
        if base < 0 or max_delay < 0:
            raise ValueError(f"delays cannot be negative (base={base}, max_delay={max_delay})")
        self._base = base
        self._max_delay = max_delay
        self._failures: dict[T, int] = {}
        self._lock = threading.Lock()

    def when(self, item: T) -> float:
        with self._lock:
            exponent = self._failures.get(item, 0)
            self._failures[item] = exponent + 1
        # A float product that overflows becomes inf, which the cap turns into max_delay.
        backoff = self._base * 2.0 ** min(exponent, _MAX_EXPONENT)
        return min(backoff, self._max_delay)

    def forget(self, item: T) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class ItemFastSlowRateLimiter(Generic[T]):
    """`fast_delay` for the first `max_fast_attempts` failures of an item, `slow_delay` afterwards."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self._fast_delay = fast_delay
        self._slow_delay = slow_delay
        self._max_fast_attempts = max_fast_attempts
        self._failures: dict[T, int] = {}
        self._lock = threading.Lock()

    def when(self, item: T) -> float:
        with self._lock:
            failures = self._failures.get(item, 0) + 1
            self._failures[item] = failures
        return self._fast_delay if failures <= self._max_fast_attempts else self._slow_delay

    def forget(self, item: T) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class BucketRateLimiter(Generic[T]):
    """An overall token bucket (`golang.org/x/time/rate`): `qps` tokens per second, at most `burst` saved up.

    Every `when` reserves a token and returns how long to wait for it — 0 while tokens are left — so it shapes
    the retry rate of the whole queue without ever rejecting. It keeps no per-item state: `num_requeues` is 0.
    The bucket starts full.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError(f"qps must be positive, got {qps}")
        if burst < 1:
            # x/time/rate would return an infinite delay for every reservation; that is a configuration error.
            raise ValueError(f"burst must be at least 1, got {burst}")
        self._qps = qps
        self._burst = burst
        self._clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self._clock.monotonic()
        self._lock = threading.Lock()

    def when(self, item: T) -> float:
        with self._lock:
            now = self._clock.monotonic()
            # x/time/rate's advance(): a clock that seems to go backwards refills nothing.
            elapsed = max(0.0, now - self._last)
            tokens = min(float(self._burst), self._tokens + elapsed * self._qps) - 1.0
            self._last = now
            self._tokens = tokens
        return -tokens / self._qps if tokens < 0 else 0.0

    def forget(self, item: T) -> None:
        return

    def num_requeues(self, item: T) -> int:
        return 0


class MaxOfRateLimiter(Generic[T]):
    """Asks every limiter and returns the longest delay (and the highest requeue count); `forget` goes to all.

    Every child counts the failure, so with a token bucket among them the bucket's burst can appear exceeded
    when items were delayed by another child (client-go's caveat).
    """

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        self._limiters = limiters

    def when(self, item: T) -> float:
        delay = 0.0
        for limiter in self._limiters:
            delay = max(delay, limiter.when(item))
        return delay

    def forget(self, item: T) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return max((limiter.num_requeues(item) for limiter in self._limiters), default=0)


class WithMaxWaitRateLimiter(Generic[T]):
    """Wraps a limiter and clamps every delay it returns to `max_delay`."""

    def __init__(self, limiter: RateLimiter[T], max_delay: float) -> None:
        self._limiter = limiter
        self._max_delay = max_delay

    def when(self, item: T) -> float:
        return min(self._limiter.when(item), self._max_delay)

    def forget(self, item: T) -> None:
        self._limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self._limiter.num_requeues(item)


def default_controller_rate_limiter(*, clock: Clock | None = None) -> MaxOfRateLimiter[T]:
    """client-go's `DefaultTypedControllerRateLimiter`: per-item exponential 5 ms … 1000 s, overall 10 qps / 100.

    The default for the plain rate-limiting queue. The bucket only shapes retries (`add_rate_limited`).
    """
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter[T]:
    """client-go's `DefaultTypedItemBasedRateLimiter`: per-item exponential 1 ms … 1000 s, no overall limit."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)


def default_priority_queue_rate_limiter() -> ItemExponentialFailureRateLimiter[T]:
    """controller-runtime's limiter for its priority queue: per-item exponential 5 ms … 1000 s, no token bucket."""
    return ItemExponentialFailureRateLimiter(0.005, 1000.0)


__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
    "default_priority_queue_rate_limiter",
]
