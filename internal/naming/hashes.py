"""Identity hashes: the tuple hash and the measurement hash (the history store's key namespace)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping


def _canonical_lines(labels: Mapping[str, str]) -> str:
    return "".join(f"{key}={labels[key]}\n" for key in sorted(labels))


def tuple_hash(labels: Mapping[str, str]) -> str:
    """Return 16 hex characters: the first 8 bytes of SHA-256 over the sorted lines `key=value\\n`.

    Used for per-identity backoff keys and to find the history of legacy profiles that have no measurement hash.
    The labels are hashed as given (no placeholder substitution), so a map read back from a profile's status
    hashes as the writer hashed it.
    """
    return hashlib.sha256(_canonical_lines(labels).encode()).hexdigest()[:16]


def measurement_hash(labels: Mapping[str, str], policy_key: str) -> str:
    """Return 16 hex characters: SHA-256 over the sorted `key=value\\n` lines + `\\0policy=` + policy_key + `\\n`.

    `labels` are a profile's tuple labels; `policy_key` is `policy_key(kind, namespace, name)` of the matched
    policy, or `""` when none matched. The result is `status.measurementHash` and the history store's namespace:
    `{app.kubernetes.io/name: billing, app.kubernetes.io/component: api}` with `ClusterResourcePolicy//default`
    gives `8746f67fe9f3d343`.
    """
    payload = f"{_canonical_lines(labels)}\x00policy={policy_key}\n"
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
