"""Tuple labels and selector labels: a pod's identity, read from its labels in `identityLabels` order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .segment import lower_runes

LABEL_MISSING = "--missing--"
"""Selector value for an identity label the pod lacks (or has empty): matches only pods without a value."""


def missing_label_placeholder(key: str) -> str:
    """Return the tuple value used when a pod lacks `key`: `no` + the letters of the key's last `/` segment.

    `app.kubernetes.io/component` gives `nocomponent`, `foo.bar.baz` gives `nofoobarbaz`,
    `ballast.tightlinesoftware.com/resource-profile` gives `noresourceprofile`.
    """
    name = key.rsplit("/", 1)[-1]
    return "no" + lower_runes("".join(char for char in name if char.isalpha()))


def tuple_labels(pod_labels: Mapping[str, str], identity_labels: Sequence[str]) -> dict[str, str]:
    """Return `{key: value}` for every identity label, in `identity_labels` order.

    A key the pod lacks, or has with an empty value, gets `missing_label_placeholder(key)` (an empty value counts
    as absent, so `{app: ""}` gives `{app: "noapp"}` and a valid profile name). This is what
    `status.tupleLabels` holds and what `profile_name`, `tuple_hash` and `measurement_hash` take.
    """
    return {key: pod_labels.get(key) or missing_label_placeholder(key) for key in identity_labels}


def selector_labels(pod_labels: Mapping[str, str], identity_labels: Sequence[str]) -> dict[str, str]:
    """Return `{key: value}` for every identity label, with `LABEL_MISSING` for a key absent or empty on the pod.

    This is what `status.selectorLabels` holds: the concrete selector of the pods a profile measures.
    """
    return {key: pod_labels.get(key) or LABEL_MISSING for key in identity_labels}


def matches_selector_labels(pod_labels: Mapping[str, str], profile_selector: Mapping[str, str]) -> bool:
    """Whether the pod's `selector_labels` over the selector's keys are exactly `profile_selector` (without
    building them: attribution asks this for every enrolled pod at every poll)."""
    return all((pod_labels.get(key) or LABEL_MISSING) == value for key, value in profile_selector.items())
