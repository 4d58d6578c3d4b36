"""batch.tutorial.kubebuilder.io/v1: the CronJob kind, and `add_to_scheme` (Go's `AddToScheme`)."""

from __future__ import annotations

from ballast.runtime import Scheme

from .cronjob_types import CronJob, CronJobSpec, CronJobStatus
from .groupversion_info import GROUP, VERSION


def add_to_scheme(scheme: Scheme) -> Scheme:
    """Register this group version's kinds, so clients read them as models."""
    scheme.add(CronJob)
    return scheme


__all__ = ["GROUP", "VERSION", "CronJob", "CronJobSpec", "CronJobStatus", "add_to_scheme"]
