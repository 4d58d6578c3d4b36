"""Label selectors: the string syntax (`app=web,tier!=db,env in (a,b),!legacy`) and `metav1.LabelSelector`.

`parse(text)` and `from_label_selector(dict)` both give a `Selector` that matches label mappings the way the
API server does (apimachinery's `labels.Parse` and `metav1.LabelSelectorAsSelector`); `str(selector)` is the
canonical string to send as `labelSelector=`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_OPS = ("in", "notin", "exists", "doesnotexist", "=", "!=")
_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class SelectorError(ValueError):
    """A selector that does not parse or is not valid; the message names the offending part."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # one of _OPS
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "exists":
            return present
        if self.operator == "doesnotexist":
            return not present
        if self.operator in ("=", "in"):
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values  # "!=" / "notin"

    def __str__(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "doesnotexist":
            return f"!{self.key}"
        if self.operator in ("=", "!="):
            return f"{self.key}{self.operator}{self.values[0]}"
        return f"{self.key} {self.operator} ({','.join(sorted(self.values))})"


@dataclass(frozen=True, slots=True)
class Selector:
    """A conjunction of requirements; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(requirement.matches(labels) for requirement in self.requirements)

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector()
NOTHING_KEY = "\x00nothing"


def _check_key(key: str, where: str) -> str:
    if not _KEY.match(key) or len(key.rpartition("/")[2]) > 63:
        raise SelectorError(f"{where}: invalid label key {key!r}")
    return key


def _check_value(value: str, where: str) -> str:
    if len(value) > 63 or not _VALUE.match(value):
        raise SelectorError(f"{where}: invalid label value {value!r}")
    return value


def _split_terms(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise SelectorError(f"selector {text!r}: unbalanced ')'")
        if char == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth:
        raise SelectorError(f"selector {text!r}: unbalanced '('")
    terms.append("".join(current))
    return [t.strip() for t in terms]


_SET_TERM = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")


def _parse_term(term: str, text: str) -> Requirement:
    where = f"selector {text!r}"
    if not term:
        raise SelectorError(f"{where}: empty requirement")
    match = _SET_TERM.match(term)
    if match:
        # As apimachinery: empty entries are the empty value, and "()" means {""}.
        values = tuple(_check_value(v.strip(), where) for v in match["values"].split(","))
        return Requirement(_check_key(match["key"], where), match["op"], tuple(sorted(set(values))))
    for op in ("!=", "==", "="):
        if op in term:
            key, _, value = term.partition(op)
            return Requirement(
                _check_key(key.strip(), where), "!=" if op == "!=" else "=", (_check_value(value.strip(), where),)
            )
    if term.startswith("!"):
        return Requirement(_check_key(term[1:].strip(), where), "doesnotexist")
    return Requirement(_check_key(term, where), "exists")


def parse(text: str | None) -> Selector:
    """Parse the string form; '' or None selects everything. Raises SelectorError."""
    if not text or not text.strip():
        return EVERYTHING
    return Selector(tuple(_parse_term(term, text) for term in _split_terms(text)))


def from_set(labels: Mapping[str, str]) -> Selector:
    """The selector matching exactly these key=value pairs (`labels.SelectorFromSet`)."""
    return Selector(tuple(Requirement(k, "=", (v,)) for k, v in sorted(labels.items())))


def from_label_selector(selector: Mapping[str, Any] | None) -> Selector:
    """`metav1.LabelSelector` (matchLabels + matchExpressions) → Selector.

    None selects nothing (as in the API: a nil selector matches no objects); `{}` selects everything.
    Raises SelectorError naming the bad expression.
    """
    if selector is None:
        return Selector((Requirement(NOTHING_KEY, "exists"),))
    requirements: list[Requirement] = []
    for key, value in sorted((selector.get("matchLabels") or {}).items()):
        requirements.append(
            Requirement(_check_key(key, "matchLabels"), "=", (_check_value(str(value), "matchLabels"),))
        )
    for index, expression in enumerate(selector.get("matchExpressions") or []):
        where = f"matchExpressions[{index}]"
        key = _check_key(str(expression.get("key", "")), where)
        operator = str(expression.get("operator", ""))
        values: Iterable[str] = expression.get("values") or []
        mapped = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "doesnotexist"}.get(operator)
        if mapped is None:
            raise SelectorError(f"{where}: operator {operator!r} is not one of In, NotIn, Exists, DoesNotExist")
        values = tuple(sorted({_check_value(str(v), where) for v in values}))
        if mapped in ("in", "notin") and not values:
            raise SelectorError(f"{where}: operator {operator} needs values")
        if mapped in ("exists", "doesnotexist") and values:
            raise SelectorError(f"{where}: operator {operator} takes no values")
        requirements.append(Requirement(key, mapped, values))
    return Selector(tuple(requirements))


__all__ = [
    "EVERYTHING",
    "NOTHING_KEY",
    "Requirement",
    "Selector",
    "SelectorError",
    "from_label_selector",
    "from_set",
    "parse",
]
