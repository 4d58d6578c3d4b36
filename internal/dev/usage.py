"""Synthetic usage for `make dev`: what metrics-server would report for the demo's containers, as pure functions.

Each app has a daily mean per resource. Its usage follows a day-shaped curve (low at 03:00, high at 15:00), with
a stable per-pod offset (two replicas never use exactly the same) and noise that changes every metrics window
(15 s, metrics-server's resolution). Everything is a function of a seed and the time elapsed since the demo
started, so a run is reproducible and two reads in the same window agree, as two metrics-server scrapes do.

The day is compressed (`Timeline.day_seconds`, 12 minutes by default) so the curve visibly moves while the demo
runs; the demo says so on screen.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

MEBIBYTE = 2**20
WINDOW_SECONDS = 15.0
"""metrics-server's resolution: usage is an average over a window of this length, and changes once per window."""
DEMO_DAY_SECONDS = 12 * 60.0
"""How long a compressed demo day lasts (24 h of curve in 12 real minutes)."""
PEAK_HOUR = 15.0
"""Hour of the day at which usage peaks (and, twelve hours later, bottoms out)."""
MIN_FACTOR = 0.2
"""Usage never drops below this fraction of the daily mean, whatever the noise says."""
POD_SPREAD = 0.08
"""Largest per-pod offset from the app's mean (± 8 %): replicas differ a little, as real ones do."""


@dataclass(frozen=True, slots=True)
class UsageProfile:
    """How one app's container uses resources: daily means, how far the day swings them, how noisy they are.

    Swings and noise are fractions of the mean: `cpu_swing=0.35` puts the afternoon peak 35 % above the mean.
    """

    cpu_millicores: int
    memory_bytes: int
    cpu_swing: float = 0.35
    memory_swing: float = 0.08
    cpu_noise: float = 0.10
    memory_noise: float = 0.02


@dataclass(frozen=True, slots=True)
class Usage:
    """Usage of one container over one window, in metrics-server's integer units."""

    cpu_nanocores: int
    memory_bytes: int

    def quantities(self) -> dict[str, str]:
        """As metrics-server writes them: cpu in nanocores (`231456789n`), memory in kibibytes (`187340Ki`)."""
        return {"cpu": f"{self.cpu_nanocores}n", "memory": f"{self.memory_bytes // 1024}Ki"}


@dataclass(frozen=True, slots=True)
class Timeline:
    """Maps real seconds since the demo started to the compressed demo day and to metrics windows."""

    day_seconds: float = DEMO_DAY_SECONDS
    start_hour: float = 9.0
    window_seconds: float = WINDOW_SECONDS

    def window(self, elapsed: float) -> int:
        """Index of the metrics window `elapsed` seconds fall in (0 for the first window)."""
        return math.floor(max(elapsed, 0.0) / self.window_seconds)

    def hour(self, elapsed: float) -> float:
        """Demo-day hour (0 ≤ h < 24) at the *start* of the window of `elapsed`, so a window has one value."""
        window_start = self.window(elapsed) * self.window_seconds
        return (self.start_hour + window_start / self.day_seconds * 24.0) % 24.0


def diurnal_factor(hour: float, swing: float) -> float:
    """1 + swing × a cosine peaking at 15:00: 1 + swing at the peak, 1 − swing at 03:00, 1 at 09:00 and 21:00."""
    return 1.0 + swing * math.cos(2.0 * math.pi * (hour - PEAK_HOUR) / 24.0)


def unit_noise(seed: int, key: str) -> float:
    """A standard normal deviate determined by `seed` and `key` alone (stable across runs and processes)."""
    return random.Random(f"{seed}/{key}").gauss(0.0, 1.0)  # noqa: S311 - a demo curve, not cryptography


def pod_offset(seed: int, pod: str) -> float:
    """A stable factor in [1 − POD_SPREAD, 1 + POD_SPREAD] for the pod `namespace/name`."""
    spread = random.Random(f"{seed}/offset/{pod}").uniform(-POD_SPREAD, POD_SPREAD)  # noqa: S311
    return 1.0 + spread


def usage_factor(swing: float, noise: float, *, hour: float, offset: float, deviate: float) -> float:
    """Fraction of the daily mean used: day curve × pod offset × (1 + noise × deviate), never below MIN_FACTOR."""
    return max(MIN_FACTOR, diurnal_factor(hour, swing) * offset * (1.0 + noise * deviate))


@dataclass(frozen=True, slots=True)
class SyntheticUsage:
    """Usage of the demo's containers: `usage(profile, pod, container, elapsed)` for any pod and container.

    `pod` is `namespace/name`; `elapsed` is seconds since the demo started. The same arguments always give the
    same answer, and every answer within one metrics window is the same.
    """

    seed: int = 7
    timeline: Timeline = field(default_factory=Timeline)

    def usage(self, profile: UsageProfile, pod: str, container: str, elapsed: float) -> Usage:
        window = self.timeline.window(elapsed)
        hour = self.timeline.hour(elapsed)
        offset = pod_offset(self.seed, pod)
        cpu = usage_factor(
            profile.cpu_swing,
            profile.cpu_noise,
            hour=hour,
            offset=offset,
            deviate=unit_noise(self.seed, f"{pod}/{container}/cpu/{window}"),
        )
        memory = usage_factor(
            profile.memory_swing,
            profile.memory_noise,
            hour=hour,
            offset=offset,
            deviate=unit_noise(self.seed, f"{pod}/{container}/memory/{window}"),
        )
        return Usage(
            cpu_nanocores=round(profile.cpu_millicores * 1_000_000 * cpu),
            memory_bytes=round(profile.memory_bytes * memory),
        )
