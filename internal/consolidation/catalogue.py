"""The price list: what each offering (instance type, capacity type[, zone]) holds and costs per hour.

The catalogue arrives as a mapping (a ConfigMap's YAML or JSON, parsed by the caller):

    {"defaults": {"capacityType": "on-demand", "zone": None},
     "offerings": [{"instanceType": "m5.large", "capacityType": "spot", "zone": "eu-west-1a",
                    "cpu": "2", "memory": "7Gi", "pods": 29, "pricePerHour": 0.035}, ...],
     "pools": {"general": ["m5.large", "m5.xlarge"]}}

`cpu`, `memory` and `pods` are what a node of the type can give pods (allocatable, after the kubelet's and the
system's reservations). An offering without a zone prices the type in every zone that has no entry of its own;
one type can be listed as spot and as on-demand. `pools` says which instance types each pool may launch (a pool
not listed may launch any). An entry that is malformed is named in `problems` and skipped; two entries for the
same key are both skipped, since either price would be a guess.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ballast.internal.quantity import QuantityError, to_units

from .errors import ConsolidationInputError

ON_DEMAND = "on-demand"
SPOT = "spot"
RESERVED = "reserved"
CAPACITY_TYPES = (RESERVED, SPOT, ON_DEMAND)
"""Karpenter's capacity types, in the order a launch prefers them (and prices its worst case)."""


@dataclass(frozen=True, slots=True)
class Offering:
    """One way to buy an instance type: where, how, and for how much per hour."""

    instance_type: str
    capacity_type: str
    zone: str | None
    cpu: int  # millicores
    memory: int  # bytes
    pods: int
    price: float  # per hour
    available: bool = True

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.instance_type, self.capacity_type, self.zone)


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Offerings by key, the defaults for nodes that do not say their capacity type or zone, the instance types
    each pool may launch, and what was wrong with the entries left out."""

    offerings: tuple[Offering, ...] = ()
    default_capacity_type: str = ON_DEMAND
    default_zone: str | None = None
    pool_instance_types: Mapping[str, frozenset[str]] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def knows(self, instance_type: str | None) -> bool:
        return any(offering.instance_type == instance_type for offering in self.offerings)

    def offering(self, instance_type: str | None, capacity_type: str, zone: str | None) -> Offering | None:
        """The offering a node of this kind was bought as: its zone's entry, else the zone-less one."""
        exact = fallback = None
        for candidate in self.offerings:
            if candidate.instance_type == instance_type and candidate.capacity_type == capacity_type:
                if candidate.zone == zone:
                    exact = candidate
                elif candidate.zone is None:
                    fallback = candidate
        return exact or fallback

    def price(self, instance_type: str | None, capacity_type: str, zone: str | None) -> float:
        """What a node of this kind costs per hour; 0.0 when the catalogue does not say (as Karpenter prices an
        offering it does not know, which makes the node worth nothing to remove)."""
        found = self.offering(instance_type, capacity_type, zone)
        return 0.0 if found is None or math.isnan(found.price) else found.price

    def launchable(self, pool: str, instance_types: frozenset[str] | None = None) -> tuple[Offering, ...]:
        """The available offerings `pool` may launch: its own list if the pool declares one, else the catalogue's
        `pools` entry for it, else every offering."""
        allowed = instance_types if instance_types is not None else self.pool_instance_types.get(pool)
        return tuple(o for o in self.offerings if o.available and (allowed is None or o.instance_type in allowed))


def _entry_name(index: int, entry: Any) -> str:
    if not isinstance(entry, Mapping):
        return f"offerings[{index}]"
    parts = [str(entry.get(key)) for key in ("instanceType", "capacityType", "zone") if entry.get(key)]
    return f"offerings[{index}] ({'/'.join(parts)})" if parts else f"offerings[{index}]"


def _count(value: Any, resource: str) -> int:
    units = to_units(value, resource)
    if units < 0:
        raise QuantityError(f"{value!r} is negative")
    return units


def _offering(entry: Any, default_capacity_type: str) -> Offering:
    """One entry as an Offering; raises ValueError saying what is wrong with it."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"is a {type(entry).__name__}, not a mapping")
    instance_type = entry.get("instanceType")
    if not isinstance(instance_type, str) or not instance_type:
        raise ValueError("instanceType must be a non-empty string")
    capacity_type = entry.get("capacityType", default_capacity_type)
    if capacity_type not in CAPACITY_TYPES:
        raise ValueError(f"capacityType {capacity_type!r} is not one of {', '.join(CAPACITY_TYPES)}")
    zone = entry.get("zone")
    if zone is not None and (not isinstance(zone, str) or not zone):
        raise ValueError("zone must be a non-empty string when set")
    price = entry.get("pricePerHour")
    if isinstance(price, bool) or not isinstance(price, int | float) or not math.isfinite(price) or price < 0:
        raise ValueError(f"pricePerHour {price!r} is not a finite number ≥ 0")
    pods = entry.get("pods")
    if isinstance(pods, bool) or not isinstance(pods, int | str):
        raise ValueError(f"pods {pods!r} is not a count")
    available = entry.get("available", True)
    if not isinstance(available, bool):
        raise ValueError(f"available {available!r} is not a boolean")
    try:
        cpu = _count(entry.get("cpu"), "cpu")
        memory = _count(entry.get("memory"), "memory")
        pod_count = _count(pods, "pods")
    except (QuantityError, TypeError) as error:
        raise ValueError(str(error)) from None
    return Offering(instance_type, capacity_type, zone, cpu, memory, pod_count, float(price), available)


def _pools(value: Any, problems: list[str]) -> dict[str, frozenset[str]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.append("pools: not a mapping of pool name to instance types; ignored")
        return {}
    pools: dict[str, frozenset[str]] = {}
    for name, types in value.items():
        if not isinstance(types, list) or not all(isinstance(t, str) and t for t in types):
            problems.append(f"pools[{name!r}]: not a list of instance type names; skipped")
            continue
        pools[str(name)] = frozenset(types)
    return pools


def parse_catalogue(document: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> Catalogue:
    """The catalogue from its document (or from a bare list of offerings).

    Never raises for a bad entry: each is named in `Catalogue.problems` with what is wrong (`offerings[3]
    (m5.large/spot): pricePerHour 'cheap' is not a finite number ≥ 0; skipped`) and left out, so one bad line
    cannot hide the others. Raises `ConsolidationInputError` only when the document itself is not a mapping or a
    list.
    """
    if isinstance(document, Mapping):
        entries = document.get("offerings") or []
        defaults = document.get("defaults") or {}
        pools_value = document.get("pools")
    elif isinstance(document, list | tuple):
        entries, defaults, pools_value = list(document), {}, None
    else:
        raise ConsolidationInputError("catalogue", f"is a {type(document).__name__}, not a mapping or a list")
    problems: list[str] = []
    if not isinstance(defaults, Mapping):
        problems.append("defaults: not a mapping; ignored")
        defaults = {}
    default_capacity_type = defaults.get("capacityType", ON_DEMAND)
    if default_capacity_type not in CAPACITY_TYPES:
        problems.append(f"defaults.capacityType: {default_capacity_type!r} is not a capacity type; on-demand used")
        default_capacity_type = ON_DEMAND
    default_zone = defaults.get("zone")
    if default_zone is not None and not isinstance(default_zone, str):
        problems.append(f"defaults.zone: {default_zone!r} is not a string; ignored")
        default_zone = None
    if not isinstance(entries, list):
        problems.append("offerings: not a list; no offering read")
        entries = []
    parsed: list[tuple[str, Offering]] = []
    for index, entry in enumerate(entries):
        name = _entry_name(index, entry)
        try:
            parsed.append((name, _offering(entry, default_capacity_type)))
        except ValueError as error:
            problems.append(f"{name}: {error}; skipped")
    by_key: dict[tuple[str, str, str | None], list[str]] = {}
    for name, offering in parsed:
        by_key.setdefault(offering.key, []).append(name)
    duplicated = {key for key, names in by_key.items() if len(names) > 1}
    for key in sorted(duplicated, key=str):
        problems.append(f"{', '.join(by_key[key])}: the same offering listed more than once; all skipped")
    offerings = tuple(offering for _, offering in parsed if offering.key not in duplicated)
    pools = _pools(pools_value, problems)
    return Catalogue(offerings, default_capacity_type, default_zone or None, pools, tuple(problems))
