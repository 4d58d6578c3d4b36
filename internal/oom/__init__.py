"""OOM-aware right-sizing as pure code (docs/design.md, differences 62–65): OOM kills read from pods' statuses,
the memory-limit floor they set (VPA's bump, bounded), and that floor applied to a profile's recommendations.

    kills = observed_kills(pod)                                      # from the pod's container statuses
    state = record(kept, kills, OOMSettings.from_spec(spec), now=now, ceiling=ceiling)
    status_entry(container, state)                                    # status.oomKills[] of the profile
    with_floors(recommendations, status)                             # what admission and resize apply
"""

from __future__ import annotations

from .apply import (
    OOM_RAISED_FOR,
    Floor,
    active_floors,
    applicable_recommendations,
    coupled_containers,
    raised_for,
    with_floors,
)
from .floor import KEPT_KILLS, Kill, OOMSettings, OOMState, record, replay
from .kills import OOM_KILLED, ObservedKill, observed_kills
from .status import kills_from, status_entry

__all__ = [
    "KEPT_KILLS",
    "OOM_KILLED",
    "OOM_RAISED_FOR",
    "Floor",
    "Kill",
    "OOMSettings",
    "OOMState",
    "ObservedKill",
    "active_floors",
    "applicable_recommendations",
    "coupled_containers",
    "kills_from",
    "observed_kills",
    "raised_for",
    "record",
    "replay",
    "status_entry",
    "with_floors",
]
