"""WorkloadProfile names: the identity tuple and the policy discriminator joined into a DNS subdomain."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence

from .labels import missing_label_placeholder
from .segment import sanitize_segment

MAX_NAME_LENGTH = 253
"""Kubernetes' limit for a DNS-subdomain object name."""

_SEGMENT = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def profile_name(tuple_labels: Mapping[str, str], identity_labels: Sequence[str], discriminator: str) -> str:
    """Return the WorkloadProfile name for a tuple under a policy discriminator.

    The sanitized tuple values are joined with `--` in `identity_labels` order (keys missing from
    `tuple_labels` are skipped), then `--` + `discriminator` is appended when it is not empty:
    `billing--api--default-a9696153`, `billing--api--nopolicy`. When that would exceed 253 characters the tuple
    part is cut to fit and `-` + 8 hex of SHA-256(the whole joined tuple) goes before the suffix, so long tuples
    stay distinct. An empty tuple value counts as absent and gets its `no<suffix>` placeholder, as in
    `tuple_labels`.

    Raises `ValueError` when no identity label is in `tuple_labels`, when a value sanitizes to nothing or to
    something that is not a DNS label (only invalid label values do: `...`, non-ASCII letters), or when the
    discriminator is not a DNS label — each would give a name the API server rejects.
    """
    segments = []
    for key in identity_labels:
        if key not in tuple_labels:
            continue
        value = tuple_labels[key] or missing_label_placeholder(key)
        segment = sanitize_segment(value)
        if not _SEGMENT.fullmatch(segment):
            raise ValueError(
                f"tuple label {key}={value!r} gives name segment {segment!r}, which is not a DNS label "
                "(a valid label value always gives one)"
            )
        segments.append(segment)
    if not segments:
        raise ValueError(f"none of the identity labels {list(identity_labels)} is in the tuple labels")
    if discriminator and not _SEGMENT.fullmatch(discriminator):
        raise ValueError(f"discriminator {discriminator!r} is not a DNS label (see policy_discriminator)")
    joined = "--".join(segments)
    suffix = f"--{discriminator}" if discriminator else ""
    if len(joined) > MAX_NAME_LENGTH - len(suffix):
        suffix = f"-{_short_hash(joined)}{suffix}"
        room = MAX_NAME_LENGTH - len(suffix)
        if room < 1:
            raise ValueError(f"discriminator {discriminator!r} leaves no room for the tuple in a 253-character name")
        joined = joined[:room].strip("-")
    return joined + suffix
