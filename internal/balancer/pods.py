"""What the Balancer reads of a pod (a small projection for its pod informers) and the `PodState` summaries take."""

from __future__ import annotations

import datetime
from collections.abc import Iterable

import msgspec

from ballast.runtime import Projection

from .summary import PodState


class _PodStatus(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    phase: str = ""


class BalancerPod(Projection, frozen=True):
    """What the Balancer reads of a pod: metadata (labels, creationTimestamp) and the phase."""

    status: _PodStatus = _PodStatus()


def _created(pod: BalancerPod) -> datetime.datetime | None:
    stamp = pod.metadata.creation_timestamp
    if not stamp:
        return None
    try:
        return datetime.datetime.fromisoformat(stamp)
    except ValueError:
        return None


def pod_states(pods: Iterable[BalancerPod]) -> list[PodState]:
    """The phase and creation time of each pod (an unreadable time: the pod cannot be late)."""
    return [PodState(pod.status.phase or None, _created(pod)) for pod in pods]
