"""A policy's selector compiled once: kinds, namespace include/exclude, annotation patterns and a label selector."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ballast.api.ballast.v1.policyspec import PolicySelector
from ballast.runtime.labels import Selector, SelectorError, from_label_selector

from .facts import PodFacts
from .pattern import Pattern, PatternError, compile_pattern
from .problems import PolicyProblem, index, key, quote

_log = logging.getLogger(__name__)

SELECTOR_PATH = "spec.selector"
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def _is_namespace_name(text: str) -> bool:
    return len(text) <= 63 and _DNS_LABEL.fullmatch(text) is not None


def _is_annotation_key(text: str) -> bool:
    prefix, slash, name = text.rpartition("/")
    if slash and (len(prefix) > 253 or _DNS_SUBDOMAIN.fullmatch(prefix) is None):
        return False
    return len(name) <= 63 and _QUALIFIED_NAME.fullmatch(name) is not None


@dataclass(frozen=True, slots=True)
class PolicyMatcher:
    """A compiled selector: `matches(pod)` is the Go operator's selector check, except that kinds are matched against
    both ends of the pod's owner chain (docs/design.md, difference 9). Empty parts match everything."""

    kinds: frozenset[str] = frozenset()
    include: tuple[Pattern, ...] = ()
    exclude: tuple[Pattern, ...] = ()
    annotations: tuple[tuple[str, Pattern], ...] = ()
    labels: Selector | None = None

    def matches(self, pod: PodFacts) -> bool:
        """Return whether every selector part passes for `pod`, checked in the Go operator's order: kinds, namespaces,
        annotations, labelSelector.

        Kinds: the pod's direct controller kind or its top-level owner kind is listed (a Deployment's pod
        matches `ReplicaSet` and `Deployment`); a standalone pod has kind "" and matches only empty `kinds`.
        Namespaces: listed in include (or include is empty) and not in exclude; exclude wins. Annotations:
        every key present with a matching value. Labels: the label selector's full semantics.
        """
        if self.kinds and pod.direct_owner_kind not in self.kinds and pod.top_owner_kind not in self.kinds:
            return False
        if not self.matches_namespace(pod.namespace):
            return False
        for name, pattern in self.annotations:
            value = pod.annotations.get(name)
            if value is None or not pattern.matches(value):
                return False
        return self.labels is None or self.labels.matches(pod.labels)

    def matches_namespace(self, namespace: str) -> bool:
        """Return whether `namespace` is included (include empty, or an entry matches) and no exclude matches."""
        included = not self.include or any(pattern.matches(namespace) for pattern in self.include)
        if any(pattern.matches(namespace) for pattern in self.exclude):
            if included:
                _log.debug(
                    "namespace matches both include and exclude; treating as excluded", extra={"namespace": namespace}
                )
            return False
        return included


def _namespace_patterns(texts: list[str] | None, path: str, problems: list[PolicyProblem]) -> tuple[Pattern, ...]:
    patterns: list[Pattern] = []
    for position, text in enumerate(texts or ()):
        where = index(path, position)
        try:
            pattern = compile_pattern(text)
        except PatternError as error:
            problems.append(PolicyProblem(where, str(error), blocks_matching=True))
            continue
        if pattern.regex is None and not _is_namespace_name(text):
            problems.append(
                PolicyProblem(
                    where, f"{quote(text)} is neither a namespace name nor a /regex/ (write /…/ for a pattern)"
                )
            )
        patterns.append(pattern)
    return tuple(patterns)


_KIND_NAME = re.compile(r"^[A-Za-z]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?$")
"""An owner kind as ownerReferences carry it (`Deployment`, a custom resource's `CronTab`): the API server wants a
kind whose lower case is a DNS-1035 label."""


def _kinds(kinds: list[str] | None, problems: list[PolicyProblem]) -> None:
    """Entries no owner reference can carry (`""`, `apps/v1/Deployment`): reported (refused at write), never
    blocking — a stored one matches as in the Go operator: `""` only pods without an owner, the others nothing
    (docs/design.md, difference 70)."""
    for position, kind in enumerate(kinds or ()):
        if not _KIND_NAME.match(kind):
            problems.append(
                PolicyProblem(
                    index(f"{SELECTOR_PATH}.kinds", position),
                    f"{quote(kind)} is not a kind name such as Deployment or ReplicaSet (no group or version; leave "
                    "kinds out to match every pod)",
                )
            )


def _annotations(selector: Mapping[str, str] | None, problems: list[PolicyProblem]) -> tuple[tuple[str, Pattern], ...]:
    path = f"{SELECTOR_PATH}.annotations"
    compiled: list[tuple[str, Pattern]] = []
    for name, text in sorted((selector or {}).items()):
        where = key(path, name)
        if not _is_annotation_key(name):
            problems.append(PolicyProblem(where, f"{quote(name)} is not a valid annotation key, so no pod can have it"))
        try:
            compiled.append((name, compile_pattern(text)))
        except PatternError as error:
            problems.append(PolicyProblem(where, str(error), blocks_matching=True))
    return tuple(compiled)


def _selector_message(error: SelectorError) -> str:
    # from_label_selector prefixes its own location ("matchLabels: …"); the problem path already says it.
    _, separator, rest = str(error).partition(": ")
    return rest if separator else str(error)


def _label_selector(wire: Mapping[str, Any] | None, problems: list[PolicyProblem]) -> Selector | None:
    if wire is None:
        return None
    path = f"{SELECTOR_PATH}.labelSelector"
    before = len(problems)
    for name, value in (wire.get("matchLabels") or {}).items():
        try:
            from_label_selector({"matchLabels": {name: value}})
        except SelectorError as error:
            problems.append(PolicyProblem(key(f"{path}.matchLabels", name), _selector_message(error), True))
    for position, expression in enumerate(wire.get("matchExpressions") or ()):
        try:
            from_label_selector({"matchExpressions": [expression]})
        except SelectorError as error:
            problems.append(PolicyProblem(index(f"{path}.matchExpressions", position), _selector_message(error), True))
    if len(problems) > before:
        return None
    return from_label_selector(wire)


def compile_selector(selector: PolicySelector | None) -> tuple[PolicyMatcher | None, tuple[PolicyProblem, ...]]:
    """Compile a policy's selector; return the matcher (None when a part cannot be compiled) and every problem.

    A regex RE2 cannot compile or an invalid label selector blocks matching (`blocks_matching=True`, matcher
    None): the policy is skipped by resolution. A namespace entry that is neither a namespace name nor a
    `/regex/`, or an annotation key no pod can carry, is reported but does not block: it simply never matches,
    as in the Go operator. Never raises for bad content.
    """
    if selector is None:
        return PolicyMatcher(), ()
    problems: list[PolicyProblem] = []
    namespaces = selector.namespaces
    include = _namespace_patterns(
        namespaces.include if namespaces else None, f"{SELECTOR_PATH}.namespaces.include", problems
    )
    exclude = _namespace_patterns(
        namespaces.exclude if namespaces else None, f"{SELECTOR_PATH}.namespaces.exclude", problems
    )
    _kinds(selector.kinds, problems)
    annotations = _annotations(selector.annotations, problems)
    labels = _label_selector(
        selector.label_selector.to_wire() if selector.label_selector is not None else None, problems
    )
    if any(problem.blocks_matching for problem in problems):
        return None, tuple(problems)
    matcher = PolicyMatcher(frozenset(selector.kinds or ()), include, exclude, annotations, labels)
    return matcher, tuple(problems)
