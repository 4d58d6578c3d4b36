"""The next in-place resize of one pod: which containers and fields move, by how much, as a `pods/resize` patch.

Each cpu/memory field whose recommendation drifts beyond its threshold moves one capped step toward it (snapping
when close); a step that rounds to the current value is no change. Guaranteed pods move request and limit together
(docs/design.md, difference 10); elsewhere a limit below the new request is raised keeping the container's
limit:request ratio (item 4). Other resources are never patched: when they drift they are reported as not
resizable in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ballast.api.ballast.v1 import WorkloadProfileStatus
from ballast.internal.enrollment import managed_container_bodies
from ballast.internal.oom import applicable_recommendations
from ballast.internal.quantity import QuantityError, to_units
from ballast.internal.stats import fit_limit
from ballast.runtime import objects

from .coupled import coupled_move
from .drift import exceeds_drift
from .inplace import resizable_in_place
from .qos import GUARANTEED, pod_qos
from .settings import ResizeSettings
from .step import cap_change

_R = TypeVar("_R")

Recommendations = Mapping[str, Mapping[str, tuple[str | None, str | None]]]
"""container name → resource → (recommended request, recommended limit)."""


def recommendations_from(status: WorkloadProfileStatus | None) -> dict[str, dict[str, tuple[str | None, str | None]]]:
    """The recommendations of a profile's ready containers with its OOM floors (the rule admission uses), as
    `Recommendations`."""
    return {
        name: {resource: (rec.request, rec.limit) for resource, rec in by_resource.items()}
        for name, by_resource in applicable_recommendations(status).items()
    }


@dataclass(frozen=True)
class ContainerChange:
    """The new values of one container: only the fields that change."""

    group: str
    """`containers` or `initContainers` (restartable-init sidecars)."""
    name: str
    requests: Mapping[str, str]
    limits: Mapping[str, str]


@dataclass(frozen=True)
class Plan:
    """What one resize would do to a pod."""

    changes: tuple[ContainerChange, ...] = ()
    not_resizable: frozenset[str] = frozenset()
    """Resources beyond their threshold that cannot be resized in place (left out of the patch)."""
    limits_scaled: tuple[str, ...] = ()
    """The resource of each limit raised to keep request ≤ limit (docs/design.md, difference 4)."""

    def patch(self) -> dict[str, Any]:
        """The strategic-merge patch of `pods/<name>/resize`: changed containers by name, changed fields only."""
        spec: dict[str, list[dict[str, Any]]] = {}
        for change in self.changes:
            resources: dict[str, dict[str, str]] = {}
            if change.requests:
                resources["requests"] = dict(change.requests)
            if change.limits:
                resources["limits"] = dict(change.limits)
            spec.setdefault(change.group, []).append({"name": change.name, "resources": resources})
        return {"spec": spec}

    def apply_to(self, pod: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of `pod` with the changes merged in (to compute the QoS class after the resize)."""
        after: dict[str, Any] = objects.thaw(pod)
        by_key = {(c.group, c.name): c for c in self.changes}
        for group in ("containers", "initContainers"):
            for container in (after.get("spec") or {}).get(group) or ():
                change = by_key.get((group, container.get("name")))
                if change is None:
                    continue
                resources = container.setdefault("resources", {})
                resources.setdefault("requests", {}).update(change.requests)
                resources.setdefault("limits", {}).update(change.limits)
        return after


@dataclass(frozen=True)
class _Values:
    request: str | None
    limit: str | None


def _units(value: Any, resource: str) -> int | None:
    """A quantity in int units, or None when absent or not a quantity."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        return to_units(value if isinstance(value, str | int) else str(value), resource)
    except (QuantityError, TypeError, ValueError):
        return None


def _drifts(resource: str, field_name: str, current: str | None, recommended: str | None, s: ResizeSettings) -> bool:
    target = _units(recommended, resource)
    if target is None:
        return False
    return exceeds_drift(_units(current, resource) or 0, target, s.threshold(resource, field_name))


def _planned(
    s: ResizeSettings, function: Callable[..., _R], resource: str, current: _Values, recommended: _Values, *rest: bool
) -> _R:
    """`function(s, resource, current, recommended, *rest)`, a pure function of its arguments: remembered under `s`
    when every quantity is a string or absent, as the API server sends them (every pod of a workload asks the same
    at every interval). A number from a YAML manifest is not: `cpu: 2` equals `cpu: 2.0` as a key, not in units."""
    values = (current.request, current.limit, recommended.request, recommended.limit)
    if all(value is None or type(value) is str for value in values):
        return s.remembered(function, resource, current, recommended, *rest)
    return function(s, resource, current, recommended, *rest)


def _either_drifts(s: ResizeSettings, resource: str, current: _Values, recommended: _Values) -> bool:
    return _drifts(resource, "request", current.request, recommended.request, s) or _drifts(
        resource, "limit", current.limit, recommended.limit, s
    )


def _step(
    resource: str, field_name: str, current: str | None, recommended: str | None, s: ResizeSettings
) -> str | None:
    """This cycle's value of one field, or None when it stays (no drift, or a step that rounds to the current)."""
    if not _drifts(resource, field_name, current, recommended, s):
        return None
    assert recommended is not None
    current_units = _units(current, resource) or 0
    target = cap_change(current_units, recommended, s.max_change, s.threshold(resource, field_name), resource=resource)
    return None if to_units(target, resource) == current_units else target


def _within_limit(resource: str, current: _Values, new: _Values) -> tuple[_Values, bool]:
    """Keep request ≤ limit: a limit below the new request is fitted (ratio kept); returns (values, scaled)."""
    request, limit = new.request or current.request, new.limit or current.limit
    request_units, limit_units = _units(request, resource), _units(limit, resource)
    if request is None or request_units is None or limit_units is None or request_units <= limit_units:
        return new, False
    fitted = fit_limit(request, current.request, current.limit, resource)
    fitted_limit = fitted.limit if fitted.limit is not None else request
    if _units(fitted_limit, resource) == _units(current.limit, resource):
        return _Values(new.request, None), False  # the step below the request is dropped; the limit stays
    return _Values(new.request, fitted_limit), True


def _plan_values(
    s: ResizeSettings, resource: str, current: _Values, recommended: _Values, coupled: bool
) -> tuple[_Values, bool]:
    """New (request, limit) of one cpu/memory resource (None = unchanged) and whether a limit was scaled."""
    if coupled:
        base = current.limit or current.request
        if base is None:
            return _Values(None, None), False
        request_units = _units(recommended.request, resource)
        limit_units = _units(recommended.limit, resource)
        from_limit = limit_units is not None and (request_units is None or limit_units >= request_units)
        threshold = s.threshold(resource, "limit" if from_limit else "request")
        value = coupled_move(
            base, recommended.request if request_units is not None else None,
            recommended.limit if limit_units is not None else None, s.max_change, threshold, resource=resource,
        )  # fmt: skip
        if value is None or to_units(value, resource) == _units(base, resource):
            return _Values(None, None), False
        return _Values(value, value), False
    stepped = _Values(
        _step(resource, "request", current.request, recommended.request, s),
        _step(resource, "limit", current.limit, recommended.limit, s),
    )
    return _within_limit(resource, current, stepped)


def _changed(value: str | None, current: str | None, resource: str) -> bool:
    return value is not None and _units(value, resource) != _units(current, resource)


def plan_resize(pod: Mapping[str, Any], recommendations: Recommendations, settings: ResizeSettings) -> Plan:
    """The next resize of `pod` (a dict as the API returns it) toward `recommendations` under `settings`.

    Only cpu and memory are changed; other drifting resources are reported in `not_resizable`. Guaranteed pods
    move request and limit together (both to the same value).
    """
    coupled = pod_qos(pod) == GUARANTEED
    changes: list[ContainerChange] = []
    not_resizable: set[str] = set()
    scaled: list[str] = []
    for group, container in managed_container_bodies(pod):  # regular containers, then sidecars
        wanted = recommendations.get(str(container.get("name")))
        if not wanted:
            continue
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        new_requests: dict[str, str] = {}
        new_limits: dict[str, str] = {}
        for resource, (rec_request, rec_limit) in sorted(wanted.items()):
            current = _Values(requests.get(resource), limits.get(resource))
            recommended = _Values(rec_request, rec_limit)
            if not resizable_in_place(resource):
                if _planned(settings, _either_drifts, resource, current, recommended):
                    not_resizable.add(resource)
                continue
            new, limit_scaled = _planned(settings, _plan_values, resource, current, recommended, coupled)
            scaled.extend([resource] if limit_scaled else [])
            if _changed(new.request, current.request, resource):
                new_requests[resource] = str(new.request)
            if _changed(new.limit, current.limit, resource):
                new_limits[resource] = str(new.limit)
        if new_requests or new_limits:
            changes.append(ContainerChange(group, str(container.get("name")), new_requests, new_limits))
    return Plan(tuple(changes), frozenset(not_resizable), tuple(scaled))
