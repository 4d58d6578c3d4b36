"""The `Ready` condition of a profile: did every policy resource get samples in the latest cycle of its own source
(docs/design.md, difference 19)? A resource is judged by the source that owns it, whichever source's cycle writes.
Its message also names the recommended values left out of the status (difference 25), after `NOT_APPLIED`."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ballast.api.ballast.v1.workloadprofile import READY
from ballast.runtime.conditions import condition

from .policy_resources import PolicyView

SAMPLES_COLLECTED_REASON = "SamplesCollected"
MISSING_SAMPLES_REASON = "MissingSamples"
INVALID_SOURCE_REASON = "InvalidSource"
"""A resource is missing because the MetricsSource that owns it is invalid, hence not polled (difference 26)."""
ALL_COLLECTED_MESSAGE = "All policy resources produced samples in the latest collection cycle"
MISSING_PREFIX = "No samples in the latest collection cycle for: "
NOT_APPLIED = "; recommendations not applied: "
"""Joins the samples part of the message and the values left out of the status (each `str(NotApplied)`, `; `)."""


def previously_missing(condition: Mapping[str, Any] | None) -> frozenset[str] | None:
    """The resources a `Ready` condition reported as missing (empty when it is True); None without a condition."""
    if condition is None:
        return None
    if condition.get("status") == "True":
        return frozenset()
    message = str(condition.get("message") or "").partition("; ")[0]  # resource names hold no "; "
    if not message.startswith(MISSING_PREFIX):
        return None
    return frozenset(part.strip() for part in message[len(MISSING_PREFIX) :].split(",") if part.strip())


def ready_condition(
    policy: PolicyView,
    collected: Callable[[str], bool],
    previous: Mapping[str, Any] | None,
    now_text: str,
    not_applied: Iterable[object] = (),
    invalid_sources: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The `Ready` condition: True when every policy resource got samples in the latest cycle of its own source
    (`collected(resource)`), else False listing the missing ones; the message then names each value of
    `not_applied` after `NOT_APPLIED`, which changes neither status nor reason. `lastTransitionTime` moves only on
    a flip.

    `invalid_sources` (MetricsSource name → its problems) are not polled (difference 26): a resource one of them
    owns is missing, the reason is `InvalidSource` and the message names each such source after the missing
    resources: `No samples … for: cpu; MetricsSource "m" is invalid: spec.config.pollInterval: …`."""
    invalid = invalid_sources or {}
    missing = sorted(
        resource
        for resource in policy.resources
        if policy.owners.get(resource, "") in invalid or not collected(resource)
    )
    if missing:
        status, reason, message = "False", MISSING_SAMPLES_REASON, MISSING_PREFIX + ", ".join(missing)
        unpolled = sorted({policy.owners.get(resource, "") for resource in missing} & invalid.keys())
        if unpolled:
            reason = INVALID_SOURCE_REASON
            message += "".join(f'; MetricsSource "{name}" is invalid: {invalid[name]}' for name in unpolled)
    else:
        status, reason, message = "True", SAMPLES_COLLECTED_REASON, ALL_COLLECTED_MESSAGE
    left_out = "; ".join(str(value) for value in not_applied)
    if left_out:
        message += NOT_APPLIED + left_out
    return condition(READY, status, reason, message, previous=previous, now=now_text)


def collected_in_latest_cycles(
    policy: PolicyView,
    source: str,
    here: frozenset[str],
    delivered: Mapping[str, frozenset[str] | None],
    sources: Collection[str],
    previous: Mapping[str, Any] | None,
) -> Callable[[str], bool]:
    """Whether a policy resource got samples in the latest cycle of the source that owns it.

    - `source`, `here`: the running cycle's source and the resources it delivered for the profile;
    - `delivered`: for every source this process has polled, the resources its latest cycle delivered for the
      profile (None: the profile was not fed by that cycle);
    - `sources`: the names of the MetricsSources that exist (a missing one never delivers);
    - `previous`: the profile's current `Ready` condition — a fresh leader that has not polled a source yet keeps
      what the condition said about that source's resources.
    """
    missing_before = previously_missing(previous)

    def collected(resource: str) -> bool:
        owner = policy.owners.get(resource, "")
        if owner == source:
            return resource in here
        latest = delivered.get(owner)
        if latest is not None:
            return resource in latest
        if owner not in sources:
            return False
        return missing_before is not None and resource not in missing_before

    return collected
