"""Copying a single-instance history (the Go key layout) into a Cluster (the tagged layout):
`ballastd copy-history --from redis://… --to redis+cluster://…` (docs/design.md, difference 68).

Profile by profile, a batch of profiles per round trip per shard: each profile's series are read with their
times from the source and written in one script that skips a profile already present in the cluster. So a copy
run twice copies nothing the second time, a copy cut short is resumed by running it again, and a profile the
collector has already written into the cluster is left as it is. The source is only read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .cluster_backend import ClusterHistoryStore
from .redis_backend import RedisHistoryStore

BATCH = 100
"""Profiles per round (read from the source, then one round trip per shard to the cluster)."""


@dataclass(slots=True)
class CopyReport:
    """What a copy did: profiles copied and skipped (already in the cluster), series and samples copied."""

    copied: int = 0
    skipped: int = 0
    series: int = 0
    samples: int = 0

    def __str__(self) -> str:
        return (
            f"{self.copied} profiles copied ({self.series} series, {self.samples} samples), "
            f"{self.skipped} already in the cluster and left as they were"
        )


def copy_history(
    source: RedisHistoryStore,
    target: ClusterHistoryStore,
    *,
    progress: Callable[[CopyReport], None] | None = None,
) -> CopyReport:
    """Copy every profile's history of `source` into `target`; see the module docstring."""
    report = CopyReport()
    hashes = sorted(source.measurement_hashes())
    for start in range(0, len(hashes), BATCH):
        profiles = []
        for digest in hashes[start : start + BATCH]:
            keys = source.series_of(digest)
            if keys:
                profiles.append(source.read_many(keys, with_times=True))
        for series, copied in zip(profiles, target.import_profiles(profiles), strict=True):
            if copied:
                report.copied += 1
                report.series += len(series)
                report.samples += sum(len(item.values) for item in series)
            else:
                report.skipped += 1
        if progress is not None:
            progress(report)
    return report
