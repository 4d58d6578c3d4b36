"""Policy identity: the `Kind/namespace/name` key and the discriminator that puts a policy into profile names."""

from __future__ import annotations

import hashlib

from .segment import sanitize_segment

CLUSTER_RESOURCE_POLICY = "ClusterResourcePolicy"
RESOURCE_POLICY = "ResourcePolicy"
NO_POLICY = "nopolicy"
"""Discriminator of a profile whose pods match no policy (no hash: it names no object)."""

_READABLE_MAX = 24


def policy_key(kind: str, namespace: str, name: str) -> str:
    """Return `Kind/namespace/name`, e.g. `ClusterResourcePolicy//default` or `ResourcePolicy/team-a/local`.

    This is the `policy_key` of `measurement_hash`. Raises `ValueError` for a kind other than
    ClusterResourcePolicy / ResourcePolicy, an empty name, a ClusterResourcePolicy with a namespace (it is
    cluster-scoped) or a ResourcePolicy without one — each would silently give another policy's hash.
    """
    if kind not in (CLUSTER_RESOURCE_POLICY, RESOURCE_POLICY):
        raise ValueError(f"policy kind {kind!r}: must be {CLUSTER_RESOURCE_POLICY} or {RESOURCE_POLICY}")
    if not name:
        raise ValueError(f"{kind} name is empty")
    if kind == CLUSTER_RESOURCE_POLICY and namespace:
        raise ValueError(f"{kind} {name!r} is cluster-scoped but namespace {namespace!r} was given")
    if kind == RESOURCE_POLICY and not namespace:
        raise ValueError(f"{kind} {name!r} is namespaced but no namespace was given")
    return f"{kind}/{namespace}/{name}"


def policy_discriminator(kind: str, namespace: str, name: str) -> str:
    """Return the policy's discriminator: a readable part, `-`, and 8 hex of SHA-256(`Kind/namespace/name`).

    The readable part is `sanitize_segment(name)` cut to 24 characters (then trimmed of `-`), or `policy` when
    nothing is left. ClusterResourcePolicy `default` gives `default-a9696153`; ResourcePolicy `team-a/local` gives
    `local-84fadaa0`. This is `status.profileDiscriminator` and the suffix of profile names. Raises `ValueError`
    as `policy_key` does.
    """
    key = policy_key(kind, namespace, name)
    readable = sanitize_segment(name)
    if len(readable) > _READABLE_MAX:
        readable = readable[:_READABLE_MAX].strip("-")
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    return f"{readable or 'policy'}-{digest}"
