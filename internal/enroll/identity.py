"""Which pod-label keys a workload must carry to be enrolled: the identity tuple, and where it came from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ballast.internal.enrollment import MODE_LABEL

DEFAULT_IDENTITY_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/component")
"""The chart's `ballastConfig.identityLabels`, used when no BallastConfig can be read."""

FLAG_SOURCE = "--identity-labels"
DEFAULT_SOURCE = "chart default (no BallastConfig 'ballast' reachable)"


class IdentityError(ValueError):
    """No identity label is left once the list is parsed; the message names where the list came from."""


@dataclass(frozen=True, slots=True)
class Identity:
    """The identity tuple (ordered label keys) and a human description of its source."""

    labels: tuple[str, ...]
    source: str

    def describe(self) -> str:
        """`Identity tuple (all required, non-empty): a,b [source: …]`, the line the dry-run plan starts with."""
        return f"Identity tuple (all required, non-empty): {','.join(self.labels)} [source: {self.source}]"


def config_source(context: str | None) -> str:
    """The source text of a tuple read from the live BallastConfig `ballast`."""
    return f"BallastConfig 'ballast' (context: {context or 'current'})"


def resolve_identity(flag: str | None, configured: Sequence[str] | None, context: str | None = None) -> Identity:
    """The identity tuple, in the enroll script's order: `--identity-labels` (comma-separated), else the
    BallastConfig's `spec.identityLabels` (`configured`; None or empty when it could not be read), else the chart
    default. Keys are trimmed and empty ones dropped. Raises IdentityError when none is left."""
    if flag:
        keys, source = flag.split(","), FLAG_SOURCE
    elif configured and any(key.strip() for key in configured):
        keys, source = list(configured), config_source(context)
    else:
        keys, source = list(DEFAULT_IDENTITY_LABELS), DEFAULT_SOURCE
    labels = tuple(key.strip() for key in keys if key.strip())
    if not labels:
        raise IdentityError(f"no identity labels resolved (source: {source})")
    return Identity(labels, source)


def has_tuple(labels: Mapping[str, str] | None, identity: Identity) -> bool:
    """Whether `labels` carry every identity key with a non-empty value (the operator treats empty as absent)."""
    present = labels or {}
    return all(present.get(key) for key in identity.labels)


def template_mode(labels: Mapping[str, str] | None) -> str:
    """The mode label's value on a pod template, "" when absent."""
    return str((labels or {}).get(MODE_LABEL) or "")


def qualifies(labels: Mapping[str, str] | None, identity: Identity, mode: str, *, remode: bool) -> bool:
    """Whether a StatefulSet's or DaemonSet's template is a target: it carries the tuple and is not enrolled yet
    or, with `remode`, is not at `mode` yet."""
    if not has_tuple(labels, identity):
        return False
    current = template_mode(labels)
    return current != mode if remode else not current
