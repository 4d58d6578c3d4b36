"""Label-key syntax: a Kubernetes qualified name, as the API server checks metadata.labels keys.

An optional prefix — a DNS subdomain of at most 253 characters (lower-case alphanumerics, `-` and `.`, each dot-
separated part starting and ending with an alphanumeric) — and `/`, then a name of 1 to 63 characters:
alphanumerics, `-`, `_` and `.`, starting and ending with an alphanumeric. `app`, `app.kubernetes.io/name` and
`example.com/Tier_1` are label keys; `not a label!!`, `/app`, `a/b/c` and `Example.com/app` are not.
"""

from __future__ import annotations

import json
import re

from ballast.api.formats import LABEL_NAME_MAX_LENGTH, LABEL_PREFIX_MAX_LENGTH

_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_EXAMPLE = 'such as "app" or "app.kubernetes.io/name"'


def label_key_problem(key: str) -> str | None:
    """What is wrong with `key` as a label key, or None when it is one.

    The message starts with `invalid label key "<key>": ` and says which rule is broken, e.g.
    `invalid label key "not a label!!": the name must consist of alphanumerics, "-", "_" or "." and start and end
    with an alphanumeric, such as "app" or "app.kubernetes.io/name"`.
    """
    reason = _reason(key)
    return None if reason is None else f"invalid label key {json.dumps(key, ensure_ascii=False)}: {reason}"


def is_label_key(key: str) -> bool:
    """Whether `key` is a valid label key."""
    return _reason(key) is None


def _reason(key: str) -> str | None:
    if key.count("/") > 1:
        return f'at most one "/" may separate a prefix from the name, {_EXAMPLE}'
    prefix, slash, name = key.rpartition("/")
    return (_prefix_reason(prefix) if slash else None) or _name_reason(name)


def _prefix_reason(prefix: str) -> str | None:
    if not prefix:
        return 'the prefix before "/" must not be empty'
    if len(prefix) > LABEL_PREFIX_MAX_LENGTH:
        return f"the prefix must be at most {LABEL_PREFIX_MAX_LENGTH} characters, got {len(prefix)}"
    if _SUBDOMAIN.fullmatch(prefix) is None:
        return (
            'the prefix must be a DNS subdomain: lower-case alphanumerics, "-" and ".", each part starting and '
            "ending with an alphanumeric"
        )
    return None


def _name_reason(name: str) -> str | None:
    if not name:
        return f"the name must not be empty, {_EXAMPLE}"
    if len(name) > LABEL_NAME_MAX_LENGTH:
        return f"the name must be at most {LABEL_NAME_MAX_LENGTH} characters, got {len(name)}"
    if _NAME.fullmatch(name) is None:
        return (
            'the name must consist of alphanumerics, "-", "_" or "." and start and end with an alphanumeric, '
            + _EXAMPLE
        )
    return None
