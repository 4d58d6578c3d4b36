"""What `ballast explain` reads about a pod, and how: the pod reference, the pod with its controller chain, the
BallastConfig's identity labels, the candidate policies and the WorkloadProfile. `gather` is the only reader;
what it returns (`PodContext`) is all the pure functions of this package see."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy, ResourcePolicy, WorkloadProfile
from ballast.internal.enrollment import (
    APPLIED_PREFIX,
    BALLAST_CONFIG_NAME,
    LAST_RESIZE,
    PROFILE_REF,
    managed_container_bodies,
)
from ballast.internal.policy import MAX_OWNER_DEPTH, OwnerLookup, Policy, controller_reference
from ballast.internal.scheduling import CLUSTER_KIND, NAMESPACED_KIND
from ballast.runtime import APIStatusError

KUPID = "kupid.gardener.cloud/v1alpha1"


@dataclass(frozen=True, slots=True)
class Owner:
    """One step of the pod's controller chain; `obj` is None when it could not be read."""

    kind: str
    name: str
    obj: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PodContext:
    """What `explain` reads: the pod, its owners (direct controller first), the BallastConfig's identityLabels
    (None when unreadable), the candidate policies (ClusterResourcePolicies and the pod namespace's
    ResourcePolicies), the profile named by `profile-ref` (None when absent or missing), the labels of the pod's
    namespace and the scheduling policies (ClusterPodSchedulingPolicies and the namespace's
    PodSchedulingPolicies, as dicts) — each None when it could not be read."""

    pod: Mapping[str, Any]
    owners: tuple[Owner, ...] = ()
    identity_labels: tuple[str, ...] | None = None
    policies: tuple[Policy, ...] = ()
    profile: WorkloadProfile | None = None
    namespace_labels: Mapping[str, str] | None = None
    scheduling_policies: tuple[Mapping[str, Any], ...] | None = None


def parse_pod_ref(text: str, namespace: str | None) -> tuple[str, str]:
    """`pod/NS/NAME`, `NS/NAME`, `pod/NAME` or `NAME` (the last two with `namespace`) → (namespace, name).

    Raises ValueError for anything else.
    """
    parts = text.split("/")
    if parts[0] in ("pod", "pods", "po") and len(parts) > 1:
        parts = parts[1:]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    if len(parts) == 1 and parts[0] and namespace:
        return namespace, parts[0]
    raise ValueError(f"expected pod/NAMESPACE/NAME (or NAME with -n), got {text!r}")


def gather(client: Any, namespace: str, name: str) -> PodContext:
    """Read everything `explain` needs. Raises NotFoundError when the pod does not exist; anything else that
    cannot be read (no BallastConfig, no profile, a forbidden owner) is left out and explained as missing."""
    failures = (APIStatusError, LookupError, ValueError)
    pod = client.get("v1/Pod", name, namespace)
    owners = _owners(client, pod, failures)
    try:
        identity: tuple[str, ...] | None = tuple(client.get(BallastConfig, BALLAST_CONFIG_NAME).spec.identity_labels)
    except failures:
        identity = None
    policies: list[Policy] = []
    for kind, scope in ((ClusterResourcePolicy, None), (ResourcePolicy, namespace)):
        # An uninstalled or unreadable kind leaves its policies out; explain then reports what matched without them.
        with contextlib.suppress(*failures):
            policies.extend(client.list_all(kind, scope))
    profile = None
    profile_ref = ((pod.get("metadata") or {}).get("annotations") or {}).get(PROFILE_REF)
    if profile_ref:
        try:
            profile = client.get(WorkloadProfile, profile_ref)
        except failures:
            profile = None
    namespace_labels, scheduling = _scheduling(client, namespace, failures)
    return PodContext(pod, owners, identity, tuple(policies), profile, namespace_labels, scheduling)


def _scheduling(
    client: Any, namespace: str, failures: tuple[type[Exception], ...]
) -> tuple[Mapping[str, str] | None, tuple[Mapping[str, Any], ...] | None]:
    """The namespace's labels and the scheduling policies (dicts), each None when unreadable (the kupid CRDs may
    not be installed): the scheduling section then says what it cannot tell."""
    try:
        labels: Mapping[str, str] | None = dict(client.get("v1/Namespace", namespace)["metadata"].get("labels") or {})
    except failures:
        labels = None
    try:
        policies: tuple[Mapping[str, Any], ...] | None = (
            *client.list_all(f"{KUPID}/{CLUSTER_KIND}"),
            *client.list_all(f"{KUPID}/{NAMESPACED_KIND}", namespace),
        )
    except failures:
        policies = None
    return labels, policies


def _owners(client: Any, pod: Mapping[str, Any], failures: tuple[type[Exception], ...]) -> tuple[Owner, ...]:
    """The controller chain, read live; an owner that cannot be read ends it (its kind and name stay known)."""
    chain: list[Owner] = []
    current: Mapping[str, Any] | None = pod
    namespace = str((pod.get("metadata") or {}).get("namespace") or "")
    while current is not None and len(chain) < MAX_OWNER_DEPTH:
        reference = controller_reference(current)
        if reference is None:
            break
        kind, name = str(reference["kind"]), str(reference.get("name") or "")
        try:
            current = client.get(f"{reference.get('apiVersion')}/{kind}", name, namespace or None)
        except failures:
            current = None
        chain.append(Owner(kind, name, current))
    return tuple(chain)


def owner_lookup(owners: Sequence[Owner]) -> OwnerLookup:
    """The owners already read, as the `OwnerLookup` policy matching wants: no second round of reads."""
    by_name = {(owner.kind, owner.name): owner.obj for owner in owners}

    def lookup(namespace: str, reference: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return by_name.get((str(reference.get("kind")), str(reference.get("name"))))

    return lookup


def template_container(owners: Sequence[Owner], name: str) -> Mapping[str, Any] | None:
    """The container `name` of the nearest owner's pod template: the resources the pod was created from."""
    for owner in owners:
        template = ((owner.obj or {}).get("spec") or {}).get("template")
        if template:
            return next((c for _, c in managed_container_bodies(template) if c.get("name") == name), None)
    return None


@dataclass(frozen=True, slots=True)
class Original:
    """The resources a container was created with (`container`), or None and why they are not known."""

    container: Mapping[str, Any] | None
    why_unknown: str = ""


def original_container(ctx: PodContext, container: Mapping[str, Any]) -> Original:
    """What the pod's container `container` was created with, as admission saw it.

    A pod with owners: the nearest owner's pod template (unknown when no owner could be read). A bare pod has no
    template: its own spec holds its creation values as long as neither admission (an `applied-*` annotation)
    nor a resize (`last-resize`) has changed them; otherwise they are not kept anywhere.
    """
    name = str(container.get("name") or "")
    if ctx.owners:
        found = template_container(ctx.owners, name)
        return Original(found) if found is not None else Original(None, "the pod template could not be read")
    annotations = (ctx.pod.get("metadata") or {}).get("annotations") or {}
    if any(key.startswith(APPLIED_PREFIX) or key == LAST_RESIZE for key in annotations):
        return Original(None, "a bare pod has no template, and its spec no longer holds the values it was created with")
    return Original(container)
