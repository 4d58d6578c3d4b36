"""Profile identity: tuple and selector labels, policy discriminators, profile names and hashes.

Byte-for-byte the Go operator's names and hashes (docs/compatibility.md), so profiles and Redis history written
by either implementation are shared — except that an empty identity-label value counts as absent (docs/design.md,
difference 15), which keeps every profile name a valid DNS subdomain.

    labels = tuple_labels(pod.metadata.labels, config.identity_labels)
    disc = policy_discriminator("ClusterResourcePolicy", "", "default")  # "default-a9696153", or NO_POLICY
    name = profile_name(labels, config.identity_labels, disc)
    history = measurement_hash(labels, policy_key("ClusterResourcePolicy", "", "default"))  # or ""
    label_key_problem("not a label!!")  # 'invalid label key "not a label!!": the name must consist of …'
"""

from .hashes import measurement_hash, tuple_hash
from .labelkey import is_label_key, label_key_problem
from .labels import LABEL_MISSING, matches_selector_labels, missing_label_placeholder, selector_labels, tuple_labels
from .policy_identity import CLUSTER_RESOURCE_POLICY, NO_POLICY, RESOURCE_POLICY, policy_discriminator, policy_key
from .profile import MAX_NAME_LENGTH, profile_name
from .segment import sanitize_segment

__all__ = [
    "CLUSTER_RESOURCE_POLICY",
    "LABEL_MISSING",
    "MAX_NAME_LENGTH",
    "NO_POLICY",
    "RESOURCE_POLICY",
    "is_label_key",
    "label_key_problem",
    "matches_selector_labels",
    "measurement_hash",
    "missing_label_placeholder",
    "policy_discriminator",
    "policy_key",
    "profile_name",
    "sanitize_segment",
    "selector_labels",
    "tuple_hash",
    "tuple_labels",
]
