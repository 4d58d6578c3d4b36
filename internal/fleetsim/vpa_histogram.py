"""VPA's decaying exponential histograms, as the VPA-baseline (`vpa.VpaRecommender`) keeps them.

VPA does not keep usage samples: it keeps, per resource, a histogram whose buckets grow 5 % each and whose samples
weigh more the later they arrive (weight doubles every half-life, so older samples count half as much a day later).
Its percentiles return the END of the bucket that reaches the wanted share of the total weight, which is why every
VPA recommendation is quantised upward by up to 5 %. This module states those rules twice: once on one histogram
(`DecayingHistogram`, the readable version the tests check against hand arithmetic, and the unit of checkpoints) and
once over many rows at a time (`percentiles`, `bucket_of`), which the recommender uses for a whole fleet.

Rules (VPA 1.6.0 defaults):

* bucket 0 covers `[0, first)`; bucket n ≥ 1 starts at `first·(r^n − 1)/(r − 1)`; r = 1.05; a value falls into
  `floor(log(v·(r−1)/first + 1) / log r)`, clamped to the last bucket; there are
  `ceil(log_r(max·(r−1)/first + 1)) + 1` buckets (176 for cpu: 0.01 to 1000 cores; 176 for memory: 1e7 to 1e12 B);
* a bucket lighter than epsilon (1e-4) counts as empty; subtracting clamps a weight below epsilon to 0;
* a sample at time t weighs `w·2^((t − reference)/half-life)`; the reference is a whole number of half-lives and
  moves forward (all weights rescaled) when the exponent would pass 100;
* a checkpoint (version "v3") stores the weights rescaled so the largest is 10 000, rounded, zeros dropped, with the
  real total beside them; restoring scales them back to that total and drops the buckets that fall below epsilon.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

GROWTH_RATIO = 1.05
EPSILON = 1e-4
"""0.001 × the smallest sample weight (0.1, a cpu sample)."""
HALF_LIFE_S = 86_400
MAX_DECAY_EXPONENT = 100
CHECKPOINT_VERSION = "v3"
CHECKPOINT_MAX_WEIGHT = 10_000


@dataclass(frozen=True, slots=True)
class BucketScheme:
    """Exponential buckets from `first` to `maximum` (the unit of the resource: cores or bytes)."""

    first: float
    maximum: float
    ratio: float = GROWTH_RATIO

    @property
    def size(self) -> int:
        return math.ceil(math.log(self.maximum * (self.ratio - 1) / self.first + 1, self.ratio)) + 1

    def start(self, bucket: int) -> float:
        """Where bucket `bucket` starts (bucket 0 starts at 0)."""
        if bucket == 0:
            return 0.0
        return self.first * (self.ratio**bucket - 1) / (self.ratio - 1)

    def bucket(self, value: float) -> int:
        if value < self.first:
            return 0
        index = math.floor(math.log(value * (self.ratio - 1) / self.first + 1) / math.log(self.ratio))
        return min(index, self.size - 1)


CPU_SCHEME = BucketScheme(first=0.01, maximum=1000.0)
MEMORY_SCHEME = BucketScheme(first=1e7, maximum=1e12)


def bucket_of(scheme: BucketScheme, values: NDArray[np.float64]) -> NDArray[np.int64]:
    """`BucketScheme.bucket` over an array."""
    scaled = np.maximum(values, 0.0) * (scheme.ratio - 1) / scheme.first + 1
    index = np.floor(np.log(scaled) / math.log(scheme.ratio)).astype(np.int64)
    return np.clip(np.where(values < scheme.first, 0, index), 0, scheme.size - 1)


def percentiles(
    scheme: BucketScheme, weights: NDArray[np.float64], shares: tuple[float, ...]
) -> list[NDArray[np.float64]]:
    """Each of `shares`' percentile of every row of `weights` (rows: histograms, columns: buckets); 0 for an empty
    row.

    The bucket reached is the first whose running sum is at least `share × total`, never past the last non-empty
    bucket; the value is that bucket's end (its own start for the last bucket).
    """
    running = np.cumsum(weights, axis=1)
    totals = running[:, -1:]
    nonempty = weights >= EPSILON
    last = scheme.size - 1 - np.argmax(nonempty[:, ::-1], axis=1)
    empty = ~nonempty.any(axis=1)
    ends = _bucket_ends(scheme)
    results = []
    for share in shares:
        reached = np.minimum(np.sum(running < share * totals, axis=1), last)
        results.append(np.where(empty, 0.0, ends[reached]))
    return results


@functools.cache
def _bucket_ends(scheme: BucketScheme) -> NDArray[np.float64]:
    """What a percentile reaching each bucket returns: the next bucket's start (the last bucket's own start)."""
    starts = [scheme.start(b) for b in range(scheme.size)]
    return np.array([*starts[1:], starts[-1]])


@dataclass(slots=True)
class DecayingHistogram:
    """One decaying histogram: bucket weights, their total, and the reference time of weight 1 (seconds)."""

    scheme: BucketScheme
    weights: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    total: float = 0.0
    reference_s: int = 0

    def __post_init__(self) -> None:
        if self.weights.size == 0:
            self.weights = np.zeros(self.scheme.size)

    def add(self, value: float, weight: float, at_s: float) -> None:
        scaled = weight * self._decay(at_s)
        self.weights[self.scheme.bucket(value)] += scaled
        self.total += scaled

    def subtract(self, value: float, weight: float, at_s: float) -> None:
        bucket = self.scheme.bucket(value)
        scaled = weight * self._decay(at_s)
        self.weights[bucket] = _clamped(self.weights[bucket] - scaled)
        self.total = _clamped(self.total - scaled)

    def percentile(self, share: float) -> float:
        """Walk the buckets up from the first non-empty one until the weight reaches `share × total`."""
        nonempty = [b for b in range(self.scheme.size) if self.weights[b] >= EPSILON]
        if not nonempty:
            return 0.0
        threshold, reached = share * self.total, 0.0
        for bucket in range(nonempty[0], nonempty[-1]):
            reached += self.weights[bucket]
            if reached >= threshold:
                return self.scheme.start(bucket + 1)
        last = nonempty[-1]
        return self.scheme.start(last + 1) if last < self.scheme.size - 1 else self.scheme.start(last)

    def merge(self, other: DecayingHistogram) -> None:
        """Add `other` bucket-wise, after bringing both to the later reference time."""
        reference = max(self.reference_s, other.reference_s)
        self.shift_to(reference)
        theirs = other.weights * 2.0 ** ((other.reference_s - reference) / HALF_LIFE_S)
        self.weights += theirs
        self.total += float(theirs.sum())

    def shift_to(self, reference_s: int) -> None:
        """Move the reference time to `reference_s` (a whole number of half-lives): the same relative weights."""
        factor = 2.0 ** ((self.reference_s - reference_s) / HALF_LIFE_S)
        self.weights *= factor
        self.total *= factor
        self.reference_s = reference_s

    def _decay(self, at_s: float) -> float:
        if (at_s - self.reference_s) / HALF_LIFE_S > MAX_DECAY_EXPONENT:
            self.shift_to(round(at_s / HALF_LIFE_S) * HALF_LIFE_S)
        return float(2.0 ** ((at_s - self.reference_s) / HALF_LIFE_S))


def _clamped(weight: float) -> float:
    return 0.0 if weight < EPSILON else weight


def checkpoint(histogram: DecayingHistogram) -> dict[str, Any]:
    """The histogram as a VerticalPodAutoscalerCheckpoint stores it: integer weights, the largest 10 000."""
    largest = float(histogram.weights.max(initial=0.0))
    buckets: dict[str, int] = {}
    if largest > 0.0:
        for bucket, weight in enumerate(histogram.weights):
            stored = round(float(weight) * CHECKPOINT_MAX_WEIGHT / largest)
            if stored > 0:
                buckets[str(bucket)] = stored
    return {
        "version": CHECKPOINT_VERSION,
        "referenceTimestamp": histogram.reference_s,
        "bucketWeights": buckets,
        "totalWeight": histogram.total,
    }


def restore(stored: dict[str, Any], scheme: BucketScheme) -> DecayingHistogram:
    """A histogram back from `checkpoint`: weights rescaled to sum to the stored total, those under epsilon dropped
    (a bucket left that light would read as an empty histogram)."""
    if stored.get("version") != CHECKPOINT_VERSION:
        raise ValueError(f"checkpoint version {stored.get('version')!r}, want {CHECKPOINT_VERSION!r}")
    histogram = DecayingHistogram(scheme, reference_s=int(stored["referenceTimestamp"]))
    buckets = {int(b): float(w) for b, w in stored["bucketWeights"].items()}
    stored_sum = sum(buckets.values())
    if stored_sum <= 0.0:
        return histogram
    ratio = float(stored["totalWeight"]) / stored_sum
    for bucket, weight in buckets.items():
        histogram.weights[bucket] = _clamped(weight * ratio)
    histogram.total = float(histogram.weights.sum())
    return histogram
