"""Whether the API server resizes pods in place (GA in Kubernetes 1.35), and the profile condition
`InPlaceResize=False` (reason `Unsupported`) that says so on older servers."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.api.meta import Condition
from ballast.runtime.conditions import condition

IN_PLACE_RESIZE = "InPlaceResize"
"""Profile condition type written by the resize lane (False/Unsupported on API servers before 1.35)."""
UNSUPPORTED = "Unsupported"
IN_PLACE_RESIZE_GA = (1, 35)


def parse_server_version(text: str) -> tuple[int, int] | None:
    """(major, minor) from a version string such as `v1.34.2-eks-1` or `1.28+`; None when it has none."""
    match = re.match(r"^v?(\d+)\.(\d+)", text.strip())
    if match is None or int(match[1]) == 0:  # v0.0.0-master+… is an unstamped build: unknown, not old
        return None
    return int(match[1]), int(match[2])


def supports_in_place(version: str) -> bool:
    """Whether a server of `version` resizes in place; an unknown version is given the benefit of the doubt."""
    parsed = parse_server_version(version)
    return parsed is None or parsed >= IN_PLACE_RESIZE_GA


def unsupported_condition(version: str, current: Condition | None, now: datetime.datetime) -> dict[str, Any]:
    """`InPlaceResize=False` naming the server version; an unchanged status keeps its transition time."""
    major, minor = IN_PLACE_RESIZE_GA
    message = (f"in-place pod resize needs Kubernetes {major}.{minor} or later; the API server is {version}: "
               "pods in resize mode are not resized")  # fmt: skip
    return condition(IN_PLACE_RESIZE, "False", UNSUPPORTED, message, previous=current, now=now)


def wanted_condition(
    version: str, supported: bool, has_pods: bool, current: Condition | None, now: datetime.datetime
) -> dict[str, Any] | None:
    """The `InPlaceResize` condition a profile should carry: present only while the server is too old and the
    profile has pods in resize mode."""
    return None if supported or not has_pods else unsupported_condition(version, current, now)


def condition_differs(current: Condition | None, wanted: Mapping[str, Any] | None) -> bool:
    """Whether the profile's condition must be rewritten: added, removed, or a different status/reason/message."""
    if current is None or wanted is None:
        return (current is None) != (wanted is None)
    return (current.status, current.reason, current.message) != (wanted["status"], wanted["reason"], wanted["message"])


def condition_patch(profile: str, wanted: Mapping[str, Any] | None) -> dict[str, Any]:
    """The server-side apply body of the resize lane's status: the `InPlaceResize` condition, or nothing (which
    removes it: the field manager owns only what it sends)."""
    return {"apiVersion": WorkloadProfile.API_VERSION, "kind": WorkloadProfile.KIND, "metadata": {"name": profile},
            "status": {"conditions": [dict(wanted)]} if wanted else {}}  # fmt: skip
