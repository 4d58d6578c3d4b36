"""Names on the wire, exactly as the Go operator uses them (docs/compatibility.md)."""

from __future__ import annotations

from collections.abc import Mapping

GROUP = "ballast.tightlinesoftware.com"
MODE_LABEL = f"{GROUP}/mode"
MODES = ("measure", "apply", "resize")

PROFILE_REF = f"{GROUP}/profile-ref"
POLICY_REF = f"{GROUP}/policy-ref"
APPLIED_PREFIX = f"{GROUP}/applied-"
LAST_RESIZE = f"{GROUP}/last-resize"
RESIZE_BLOCKED = f"{GROUP}/resize-blocked"
RESIZE_BLOCKED_AT = f"{GROUP}/resize-blocked-at"

LEGACY_POD_FINALIZER = f"{GROUP}/workloadwatcher"
"""The Go operator's pod finalizer; we never add it and remove it where we find it (docs/design.md, difference 17)."""
PROFILE_CLEANUP_FINALIZER = f"{GROUP}/profile-cleanup"
WORKLOAD_PROFILE_CRD = f"workloadprofiles.{GROUP}"
UNINSTALLING_ANNOTATION = f"{GROUP}/uninstalling"
"""Set on the BallastConfig by `ballastd uninstall` (its value: when, RFC 3339): profiles deleted within the hour
after keep their history (docs/design.md, difference 53)."""

KILL_SWITCH_CONFIGMAP = "ballast-kill-switch"
BALLAST_CONFIG_NAME = "ballast"
LEADER_ELECTION_ID = "910c37cf.tightlinesoftware.com"


def invalid_mode_message(value: str) -> str:
    """The Go operator's denial message for a bad mode value, word for word."""
    return f'invalid Ballast {MODE_LABEL} label "{value}": must be one of {", ".join(MODES)}'


def mode_of(labels: Mapping[str, str] | None) -> str | None:
    """The mode label's value, or None when the label is absent."""
    return (labels or {}).get(MODE_LABEL)


def is_enrolled(labels: Mapping[str, str] | None) -> bool:
    """A valid mode label is present (an invalid value does not enroll)."""
    return mode_of(labels) in MODES


def wants_apply(labels: Mapping[str, str] | None) -> bool:
    """apply and resize pods get recommendations at admission (each rung implies the ones below)."""
    return mode_of(labels) in ("apply", "resize")


def wants_resize(labels: Mapping[str, str] | None) -> bool:
    return mode_of(labels) == "resize"


def applied_annotation(resource: str, field: str) -> str:
    """`ballast.tightlinesoftware.com/applied-<resource>-<request|limit>`."""
    return f"{APPLIED_PREFIX}{resource}-{field}"
