"""What applying scheduling policies would change, before they are applied (`ballast scheduling preview`).

The previewed policies are merged together with the policies already in the cluster, in merge order, into
every existing object the webhook mutates that at least one previewed policy selects: the result is what the
next admission of that object gives, first writer wins included, so a previewed policy that loses every field
to an earlier one shows up as `unchanged` rather than as a change that would never happen. Pure: the caller
reads the cluster (`ballast.internal.scheduling.preview_report`) and passes what it read.

    policies = load_policies(text, "policy.yaml", namespace=None)  # PolicyFileError naming the document
    result = preview(policies, existing, namespace_labels, objects)
    for item in result.objects:
        item.diff()       # unified diff of the scheduling fields, as YAML
        item.outcomes     # one PolicyOutcome per matched policy, in merge order
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ballast.api.kupid.v1alpha1 import GROUP, VERSION

from .matching import policy_matches, select_policies
from .merge import SCHEDULING_FIELDS, merge_detailed, policy_problems
from .outcome import APPLIED, CONFLICT, ERROR, PolicyOutcome, denies
from .policies import CLUSTER_KIND, KINDS, NAMESPACED_KIND, InvalidPolicyError, is_enforced, policy_ref
from .targets import TARGETS, Target, is_daemonset_pod, is_mirror_pod, pod_template, target_for

API_VERSION = f"{GROUP}/{VERSION}"
OUR_NAME_LABEL = "app.kubernetes.io/name"
"""The label (value `ballast`) on every webhook configuration of ours; any other injecting webhook is foreign."""
OUR_NAME = "ballast"
_MUTATING_OPERATIONS = {"CREATE", "UPDATE", "*"}


class PolicyFileError(ValueError):
    """A document of the previewed file that is not a usable policy; the message names the document."""


def _document_problems(document: Any) -> list[str]:
    """Why one YAML document is not a policy this preview can use (kind, apiVersion, name, selectors, spec)."""
    if not isinstance(document, Mapping):
        return [f"is a {type(document).__name__}, not an object"]
    kind = document.get("kind")
    if kind not in KINDS:
        return [f"kind {kind!r} is neither {CLUSTER_KIND} nor {NAMESPACED_KIND}"]
    problems: list[str] = []
    if document.get("apiVersion") != API_VERSION:
        problems.append(f"apiVersion {document.get('apiVersion')!r} is not {API_VERSION}")
    metadata = document.get("metadata")
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        problems.append("metadata.name is missing")
    spec = document.get("spec") or {}
    if not isinstance(spec, Mapping):
        return [*problems, "spec is not an object"]
    if problems:
        return problems
    try:
        policy_matches(document, {}, {})  # compiles both selectors whatever the labels
    except InvalidPolicyError as error:
        problems.append(f"{error.path}: {error.message}" if error.path else error.message)
    problems.extend(policy_problems(spec))
    return problems


def _with_namespace(document: Mapping[str, Any], namespace: str | None) -> dict[str, Any]:
    """A PodSchedulingPolicy lands where `-n` says when it names no namespace; naming another is kubectl's error."""
    policy = dict(document)
    if policy["kind"] != NAMESPACED_KIND:
        return policy
    metadata = dict(policy["metadata"])
    own = metadata.get("namespace")
    if own and namespace and own != namespace:
        raise ValueError(f"its namespace {own!r} does not match -n {namespace!r}")
    if not own and not namespace:
        raise ValueError("a PodSchedulingPolicy without metadata.namespace needs -n")
    metadata["namespace"] = own or namespace
    policy["metadata"] = metadata
    return policy


def load_policies(text: str, source: str, namespace: str | None) -> list[dict[str, Any]]:
    """The policies of a YAML stream (several documents, or a `v1` List as `kubectl get -o yaml` prints).

    Raises PolicyFileError naming the document (`policy.yaml: document 2: kind 'Deployment' is neither …`) for
    anything that is not a valid policy, for a policy given twice, and for an empty file: a preview of a policy
    that admission would refuse, or that selects nothing because its selector is broken, would only mislead.
    """
    import yaml  # noqa: PLC0415 - the rest of the package does not need it

    try:
        documents = [document for document in yaml.safe_load_all(text) if document is not None]
    except yaml.YAMLError as error:
        raise PolicyFileError(f"{source}: not YAML: {error}") from error
    items: list[tuple[str, Any]] = []
    for position, document in enumerate(documents, start=1):
        where = f"document {position}" if len(documents) > 1 else "the document"
        if isinstance(document, Mapping) and document.get("kind") == "List":
            items.extend((f"{where}, item {i}", item) for i, item in enumerate(document.get("items") or (), start=1))
        else:
            items.append((where, document))
    policies: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for where, item in items:
        problems = _document_problems(item)
        if problems:
            raise PolicyFileError(f"{source}: {where}: {'; '.join(problems)}")
        try:
            policy = _with_namespace(item, namespace)
        except ValueError as error:
            raise PolicyFileError(f"{source}: {where} ({policy_ref(item)}): {error}") from error
        ref = policy_ref(policy)
        if ref in seen:
            raise PolicyFileError(f"{source}: {where}: {ref} is given twice (also {seen[ref]})")
        seen[ref] = where
        policies.append(policy)
    if not policies:
        raise PolicyFileError(f"{source}: no policy in it")
    return policies


def scheduling_fields(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a pod spec a policy can change (`SCHEDULING_FIELDS`), nothing else."""
    return {name: spec[name] for name in SCHEDULING_FIELDS if spec.get(name) not in (None, "", [], {})}


def _yaml_lines(fields: Mapping[str, Any]) -> list[str]:
    import yaml  # noqa: PLC0415

    return yaml.safe_dump(dict(fields), sort_keys=True, default_flow_style=False).splitlines() if fields else []


@dataclass(frozen=True, slots=True)
class ObjectPreview:
    """One selected object: its scheduling fields now and after its next admission, each matched policy's
    outcome in merge order, which of them are previewed, and the enforced policies that would deny it."""

    kind: str
    namespace: str
    name: str
    before: dict[str, Any]
    after: dict[str, Any]
    outcomes: tuple[PolicyOutcome, ...]
    previewed: frozenset[str]
    denied_by: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """`Deployment shop/web`."""
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def result(self) -> str:
        """The previewed policies' result on this object, the most telling first: `error`, `conflict`,
        `applied`, else `unchanged` (every previewed policy merged and changed nothing)."""
        mine = {outcome.result for outcome in self.outcomes if outcome.ref in self.previewed}
        return next((result for result in (ERROR, CONFLICT, APPLIED) if result in mine), "unchanged")

    def diff(self) -> list[str]:
        """The unified diff (YAML of the scheduling fields) from now to after admission; [] when nothing changes."""
        return list(
            difflib.unified_diff(
                _yaml_lines(self.before), _yaml_lines(self.after),
                fromfile=f"{self.label} (now)", tofile=f"{self.label} (with the policies)", lineterm="",
            )
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Preview:
    """The whole preview: the previewed refs (and which replace a policy of the same name in the cluster), the
    cluster's own, the selected objects, the pods skipped as the webhook skips them, and the cluster's policies
    that are invalid (they never apply, here as at admission)."""

    previewed: tuple[str, ...]
    replaced: tuple[str, ...]
    existing: tuple[str, ...]
    objects: tuple[ObjectPreview, ...]
    skipped_daemonset_pods: int = 0
    skipped_mirror_pods: int = 0
    invalid: tuple[PolicyOutcome, ...] = field(default=())


def _metadata(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def target_of(obj: Mapping[str, Any]) -> Target | None:
    """The target of an object read from the API (by its apiVersion and kind), or None."""
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    return target_for(group, str(obj.get("kind") or ""))


def _sort_key(obj: Mapping[str, Any]) -> tuple[bool, int, str, str]:
    target = target_of(obj)
    position = TARGETS.index(target) if target else len(TARGETS)
    metadata = _metadata(obj)
    return (
        bool(target and target.is_pod),
        position,
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
    )


def preview(
    previewed: Sequence[Mapping[str, Any]],
    existing: Iterable[Mapping[str, Any]],
    namespace_labels: Mapping[str, Mapping[str, str]],
    objects: Iterable[Mapping[str, Any]],
) -> Preview:
    """Preview `previewed` (valid policies, `load_policies`) over `objects` (workloads of every target kind and
    pods, as read), with `existing` (the cluster's policies; one with a previewed policy's ref is replaced by it)
    and each namespace's labels.

    An object is in the result when a previewed policy selects it; the merge is the webhook's: every matching
    policy of the cluster or of the object's namespace, in merge order, into the object's pod spec. Pods the
    webhook skips (DaemonSet-owned, mirrors) are only counted; objects being deleted and kinds that are not
    targets are left out. Workloads come first, then pods, each by kind, namespace and name.
    """
    refs = tuple(policy_ref(policy) for policy in previewed)
    mine = frozenset(refs)
    kept = [policy for policy in existing if policy_ref(policy) not in mine]
    existing_refs = {policy_ref(policy) for policy in existing}
    policies = [*kept, *previewed]
    by_ref = {policy_ref(policy): policy for policy in policies}
    results: list[ObjectPreview] = []
    skipped = {"daemonset": 0, "mirror": 0}
    invalid: dict[str, PolicyOutcome] = {}
    for obj in sorted(objects, key=_sort_key):
        target = target_of(obj)
        metadata = _metadata(obj)
        if target is None or metadata.get("deletionTimestamp"):
            continue
        namespace = str(metadata.get("namespace") or "")
        candidates = [
            policy
            for policy in policies
            if policy.get("kind") == CLUSTER_KIND or _metadata(policy).get("namespace") == namespace
        ]
        labels, spec = pod_template(obj, target)
        selection = select_policies(candidates, namespace_labels.get(namespace) or {}, labels)
        for error in selection.errors:
            invalid.setdefault(error.ref, error)
        matched_refs = [policy_ref(policy) for policy in selection.matched]
        if mine.isdisjoint(matched_refs):
            continue
        if target.is_pod and (is_daemonset_pod(obj) or is_mirror_pod(obj)):
            skipped["daemonset" if is_daemonset_pod(obj) else "mirror"] += 1
            continue
        merged = merge_detailed(spec, selection.matched)
        denied_by = tuple(o.ref for o in merged.outcomes if is_enforced(by_ref.get(o.ref) or {}) and denies(o))
        results.append(
            ObjectPreview(
                target.kind, namespace, str(metadata.get("name") or ""),
                scheduling_fields(spec), scheduling_fields(merged.spec), merged.outcomes, mine, denied_by,
            )
        )  # fmt: skip
    return Preview(
        previewed=refs,
        replaced=tuple(ref for ref in refs if ref in existing_refs),
        existing=tuple(sorted(policy_ref(policy) for policy in kept)),
        objects=tuple(results),
        skipped_daemonset_pods=skipped["daemonset"],
        skipped_mirror_pods=skipped["mirror"],
        invalid=tuple(invalid.values()),
    )


@dataclass(frozen=True, slots=True)
class ForeignWebhook:
    """A mutating webhook of someone else's that also intercepts kinds the scheduling webhook mutates."""

    configuration: str
    webhook: str
    resources: tuple[str, ...]


def _rule_resources(rule: Mapping[str, Any]) -> set[str]:
    """The target resources (`pods`, `deployments`, …) a webhook rule intercepts on CREATE or UPDATE."""
    if _MUTATING_OPERATIONS.isdisjoint(rule.get("operations") or ()):
        return set()
    groups, versions = set(rule.get("apiGroups") or ()), set(rule.get("apiVersions") or ())
    named = set(rule.get("resources") or ())  # `*` and `*/*` cover every resource; `pods/*` only subresources
    return {
        target.resource
        for target in TARGETS
        if (target.group in groups or "*" in groups)
        and (target.version in versions or "*" in versions)
        and (target.resource in named or "*" in named or "*/*" in named)
    }


def foreign_webhooks(configurations: Iterable[Mapping[str, Any]]) -> list[ForeignWebhook]:
    """The webhooks of MutatingWebhookConfigurations not labelled as ours that intercept a target kind on
    CREATE or UPDATE (e.g. upstream kupid's `gardener-extension-kupid`). Two webhooks injecting scheduling
    fields into the same objects are not idempotent together: each sees the other's result, and the order the
    API server calls them in decides what sticks."""
    found: list[ForeignWebhook] = []
    for configuration in configurations:
        metadata = _metadata(configuration)
        if (metadata.get("labels") or {}).get(OUR_NAME_LABEL) == OUR_NAME:
            continue
        for webhook in configuration.get("webhooks") or ():
            resources: set[str] = set()
            for rule in webhook.get("rules") or ():
                resources |= _rule_resources(rule)
            if resources:
                order = [target.resource for target in TARGETS if target.resource in resources]
                found.append(ForeignWebhook(str(metadata.get("name") or ""), str(webhook.get("name")), tuple(order)))
    return found
