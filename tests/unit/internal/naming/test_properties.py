"""Invariants of profile names over any valid Kubernetes label keys and values (hypothesis)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ballast.internal.naming import NO_POLICY, policy_discriminator, profile_name, tuple_hash, tuple_labels

# Kubernetes validation: a label value is empty or `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, at most 63 long;
# a key is an optional DNS-subdomain prefix, `/`, and a name of the same shape (not empty).
_NAME = st.from_regex(r"\A[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z")
_VALUES = st.one_of(st.just(""), _NAME)
_PREFIX = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?){0,3}\Z")
_KEYS = st.builds(lambda prefix, name: f"{prefix}/{name}" if prefix else name, st.one_of(st.just(""), _PREFIX), _NAME)
_POLICY_NAMES = st.from_regex(r"\A[a-z0-9]([-a-z0-9.]{0,80}[a-z0-9])?\Z")
_DISCRIMINATORS = st.one_of(
    st.just(NO_POLICY),
    st.builds(lambda name: policy_discriminator("ClusterResourcePolicy", "", name), _POLICY_NAMES),
    st.builds(lambda ns, name: policy_discriminator("ResourcePolicy", ns, name), _NAME, _POLICY_NAMES),
)
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@settings(max_examples=300, deadline=None)
@given(
    identity=st.lists(_KEYS, min_size=1, max_size=8, unique=True),
    values=st.lists(_VALUES, min_size=8, max_size=8),
    drop=st.lists(st.booleans(), min_size=8, max_size=8),
    discriminator=_DISCRIMINATORS,
)
def test_profile_name_is_always_a_dns_subdomain(
    identity: list[str], values: list[str], drop: list[bool], discriminator: str
) -> None:
    pod_labels = {key: value for key, value, gone in zip(identity, values, drop, strict=False) if not gone}
    name = profile_name(tuple_labels(pod_labels, identity), identity, discriminator)
    assert len(name) <= 253
    assert _DNS_SUBDOMAIN.fullmatch(name), name
    assert name.endswith(f"--{discriminator}")


@settings(max_examples=200, deadline=None)
@given(identity=st.lists(_KEYS, min_size=1, max_size=5, unique=True), values=st.lists(_VALUES, min_size=5, max_size=5))
def test_empty_and_absent_values_give_one_identity(identity: list[str], values: list[str]) -> None:
    with_empties = dict(zip(identity, values, strict=False))
    without = {key: value for key, value in with_empties.items() if value}
    assert tuple_labels(with_empties, identity) == tuple_labels(without, identity)
    assert tuple_hash(tuple_labels(with_empties, identity)) == tuple_hash(tuple_labels(without, identity))


@settings(max_examples=100, deadline=None)
@given(names=st.lists(_POLICY_NAMES, min_size=2, max_size=2, unique=True))
def test_discriminators_of_distinct_policies_differ(names: list[str]) -> None:
    first, second = (policy_discriminator("ClusterResourcePolicy", "", name) for name in names)
    assert first != second
    assert len(first) <= 24 + 1 + 8
