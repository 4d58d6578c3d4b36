"""Identity naming against literal values computed from the Go operator's recipe (docs/compatibility.md)."""

from __future__ import annotations

import pytest

from ballast.internal.naming import (
    LABEL_MISSING,
    NO_POLICY,
    measurement_hash,
    missing_label_placeholder,
    policy_discriminator,
    policy_key,
    profile_name,
    sanitize_segment,
    selector_labels,
    tuple_hash,
    tuple_labels,
)

NAME = "app.kubernetes.io/name"
COMPONENT = "app.kubernetes.io/component"
IDENTITY = [NAME, COMPONENT]
BILLING_API = {NAME: "billing", COMPONENT: "api"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("My_App.v2", "my-app-v2"),
        ("...", ""),
        ("billing", "billing"),
        ("-edge-", "edge"),
        ("a..b", "a--b"),
        ("ÄPFEL", "äpfel"),
        ("İ", "i"),  # per character, as Go's unicode.ToLower (str.lower() would give "i̇")
        ("ΟΔΟΣ", "οδοσ"),  # no final-sigma context rule
        ("x²", "x"),  # superscript two is a digit to str.isdigit, not a decimal digit (Go's unicode.IsDigit)
    ],
)
def test_sanitize_segment(value: str, expected: str) -> None:
    assert sanitize_segment(value) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("app.kubernetes.io/component", "nocomponent"),
        ("foo.bar.baz", "nofoobarbaz"),
        ("ballast.tightlinesoftware.com/resource-profile", "noresourceprofile"),
        ("example.com/Tier_2", "notier"),
        ("example.com/123", "no"),
    ],
)
def test_missing_label_placeholder(key: str, expected: str) -> None:
    assert missing_label_placeholder(key) == expected


@pytest.mark.parametrize(
    ("pod_labels", "tuple_expected", "selector_expected"),
    [
        (BILLING_API, BILLING_API, BILLING_API),
        ({NAME: "nginx"}, {NAME: "nginx", COMPONENT: "nocomponent"}, {NAME: "nginx", COMPONENT: LABEL_MISSING}),
        # docs/design.md, difference 15: an empty value is absent (the Go operator would keep "")
        (
            {NAME: "nginx", COMPONENT: ""},
            {NAME: "nginx", COMPONENT: "nocomponent"},
            {NAME: "nginx", COMPONENT: LABEL_MISSING},
        ),
        ({}, {NAME: "noname", COMPONENT: "nocomponent"}, {NAME: LABEL_MISSING, COMPONENT: LABEL_MISSING}),
        ({NAME: "billing", COMPONENT: "api", "pod-template-hash": "abc"}, BILLING_API, BILLING_API),
    ],
)
def test_tuple_and_selector_labels(
    pod_labels: dict[str, str], tuple_expected: dict[str, str], selector_expected: dict[str, str]
) -> None:
    assert tuple_labels(pod_labels, IDENTITY) == tuple_expected
    assert selector_labels(pod_labels, IDENTITY) == selector_expected
    assert list(tuple_labels(pod_labels, IDENTITY)) == IDENTITY


@pytest.mark.parametrize(
    ("kind", "namespace", "name", "expected"),
    [
        ("ClusterResourcePolicy", "", "default", "default-a9696153"),
        ("ClusterResourcePolicy", "", "fleet", "fleet-9aa5ac7c"),
        ("ResourcePolicy", "team-a", "local", "local-84fadaa0"),
        ("ClusterResourcePolicy", "", "my.policy_v2", "my-policy-v2-c1c7358c"),
        ("ClusterResourcePolicy", "", "a-very-long-policy-name-that-exceeds-24", "a-very-long-policy-name-120a2217"),
        ("ClusterResourcePolicy", "", "abcdefghijklmnopqrstuvw-xyz", "abcdefghijklmnopqrstuvw-3b205b24"),
        ("ClusterResourcePolicy", "", "...", "policy-3f44eba3"),
    ],
)
def test_policy_discriminator(kind: str, namespace: str, name: str, expected: str) -> None:
    assert policy_discriminator(kind, namespace, name) == expected


@pytest.mark.parametrize(
    ("kind", "namespace", "name", "message"),
    [
        ("Deployment", "", "default", "policy kind 'Deployment'"),
        ("ClusterResourcePolicy", "", "", "name is empty"),
        ("ClusterResourcePolicy", "team-a", "default", "cluster-scoped"),
        ("ResourcePolicy", "", "local", "namespaced"),
    ],
)
def test_policy_identity_rejects_bad_input(kind: str, namespace: str, name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        policy_discriminator(kind, namespace, name)
    with pytest.raises(ValueError, match=message):
        policy_key(kind, namespace, name)


def test_policy_key() -> None:
    assert policy_key("ClusterResourcePolicy", "", "default") == "ClusterResourcePolicy//default"
    assert policy_key("ResourcePolicy", "team-a", "local") == "ResourcePolicy/team-a/local"


LONG = ["x" * 63, "y" * 63, "z" * 63, "w" * 30, "v" * 63]
EXACT = ["a" * 63, "b" * 63, "c" * 63, "d" * 48]
OVER = ["a" * 63, "b" * 63, "c" * 63, "d" * 49]


def _tuple(values: list[str]) -> tuple[dict[str, str], list[str]]:
    keys = [f"k{i}" for i in range(len(values))]
    return dict(zip(keys, values, strict=True)), keys


@pytest.mark.parametrize(
    ("values", "discriminator", "expected"),
    [
        (["billing", "api"], "default-a9696153", "billing--api--default-a9696153"),
        (["billing", "api"], NO_POLICY, "billing--api--nopolicy"),
        (["billing", "api"], "", "billing--api"),
        (["My_App.v2", "nocomponent"], NO_POLICY, "my-app-v2--nocomponent--nopolicy"),
        # exactly 253: no hash
        (EXACT, NO_POLICY, "--".join(EXACT) + "--nopolicy"),
        # 254: the tuple is cut and 8 hex of the whole tuple go before the discriminator
        (OVER, NO_POLICY, "--".join(OVER)[:234] + "-15a55171--nopolicy"),
        # the cut lands on `--`, which is trimmed (252 characters)
        (LONG, "default-a9696153", "--".join(LONG)[:225] + "-a516bd93--default-a9696153"),
    ],
)
def test_profile_name(values: list[str], discriminator: str, expected: str) -> None:
    labels, keys = _tuple(values)
    name = profile_name(labels, keys, discriminator)
    assert name == expected
    assert len(name) <= 253


def test_profile_name_follows_identity_order_and_skips_absent_keys() -> None:
    labels = {NAME: "billing", COMPONENT: "api"}
    assert profile_name(labels, [COMPONENT, NAME], NO_POLICY) == "api--billing--nopolicy"
    assert profile_name(labels, [COMPONENT, "tier", NAME], NO_POLICY) == "api--billing--nopolicy"


def test_profile_name_treats_empty_value_as_absent() -> None:
    assert profile_name({NAME: "", COMPONENT: "api"}, IDENTITY, NO_POLICY) == "noname--api--nopolicy"


@pytest.mark.parametrize(
    ("labels", "identity", "discriminator", "message"),
    [
        ({NAME: "billing"}, [], NO_POLICY, "none of the identity labels"),
        ({NAME: "billing"}, ["tier"], NO_POLICY, "none of the identity labels"),
        ({NAME: "..."}, [NAME], NO_POLICY, r"tuple label app.kubernetes.io/name='...'"),
        ({NAME: "café"}, [NAME], NO_POLICY, "not a DNS label"),
        ({NAME: "billing"}, [NAME], "Default", "discriminator 'Default'"),
        ({NAME: "a" * 253}, [NAME], "d" * 250, "leaves no room"),
    ],
)
def test_profile_name_rejects_what_the_api_server_would(
    labels: dict[str, str], identity: list[str], discriminator: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        profile_name(labels, identity, discriminator)


@pytest.mark.parametrize(
    ("labels", "policy", "tuple_expected", "measurement_expected"),
    [
        (BILLING_API, "ClusterResourcePolicy//default", "5f68e776bd9def3b", "8746f67fe9f3d343"),
        (BILLING_API, "", "5f68e776bd9def3b", "b155686f88558bac"),
        ({COMPONENT: "api", NAME: "billing"}, "", "5f68e776bd9def3b", "b155686f88558bac"),  # order-free
    ],
)
def test_hashes(labels: dict[str, str], policy: str, tuple_expected: str, measurement_expected: str) -> None:
    assert tuple_hash(labels) == tuple_expected
    assert measurement_hash(labels, policy) == measurement_expected


def test_measurement_hash_separates_policies_and_tuples() -> None:
    default = policy_key("ClusterResourcePolicy", "", "default")
    under_default = measurement_hash(BILLING_API, default)
    under_local = measurement_hash(BILLING_API, policy_key("ResourcePolicy", "team-a", "local"))
    other_tuple = measurement_hash({NAME: "billing", COMPONENT: "web"}, default)
    assert len({under_default, under_local, other_tuple}) == 3


def test_hashes_take_labels_as_given() -> None:
    # Legacy profiles' status may hold "" (written by the Go operator); their history is found by this hash.
    assert tuple_hash({COMPONENT: ""}) != tuple_hash({COMPONENT: "nocomponent"})
