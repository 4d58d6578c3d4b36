"""Cache indexes on enrolled pods, shared by the controllers that count and walk a profile's pods."""

from __future__ import annotations

from ballast.runtime import objects

from .keys import PROFILE_REF
from .pod import PodProjection

PROFILE_REF_INDEX = "profile-ref"
"""Pods by the value of their `ballast.tightlinesoftware.com/profile-ref` annotation."""


def profile_ref_index(pod: PodProjection) -> list[str]:
    ref = objects.annotations(pod).get(PROFILE_REF)
    return [ref] if ref else []
