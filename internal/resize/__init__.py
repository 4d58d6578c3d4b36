"""The pure math of in-place resize (ballast-anchor.md §7): drift, the step cap, thresholds and QoS.

Quantities are Kubernetes strings (`"250m"`, `"1Gi"`) or int units (millicores for cpu, bytes otherwise);
percentages are Decimals or ints. Arithmetic is exact (architecture §5 item 13).
"""

from __future__ import annotations

from .coupled import coupled_move
from .drift import Percent, exceeds_drift
from .inplace import IN_PLACE_RESOURCES, resizable_in_place
from .qos import BEST_EFFORT, BURSTABLE, GUARANTEED, pod_qos
from .step import cap_change, step_toward
from .thresholds import (
    DEFAULT_MAX_CHANGE_PCT,
    DEFAULT_THRESHOLD_PCT,
    parse_percent,
    resolve_max_change,
    resolve_threshold,
)

__all__ = [
    "BEST_EFFORT",
    "BURSTABLE",
    "DEFAULT_MAX_CHANGE_PCT",
    "DEFAULT_THRESHOLD_PCT",
    "GUARANTEED",
    "IN_PLACE_RESOURCES",
    "Percent",
    "cap_change",
    "coupled_move",
    "exceeds_drift",
    "parse_percent",
    "pod_qos",
    "resizable_in_place",
    "resolve_max_change",
    "resolve_threshold",
    "step_toward",
]
