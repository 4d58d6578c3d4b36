"""Group/version/kind names: parsing, api versions, and the URL paths of namespaced and cluster kinds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.runtime import GroupVersionKind
from ballast.runtime.gvk import GroupVersionResource, RESTMapping

POD = RESTMapping(GroupVersionKind("", "v1", "Pod"), GroupVersionResource("", "v1", "pods"), namespaced=True)
NODE = RESTMapping(GroupVersionKind("", "v1", "Node"), GroupVersionResource("", "v1", "nodes"), namespaced=False)
DEPLOYMENT = RESTMapping(
    GroupVersionKind("apps", "v1", "Deployment"), GroupVersionResource("apps", "v1", "deployments"), namespaced=True
)
CLUSTER_WIDGET = RESTMapping(
    GroupVersionKind("example.com", "v1", "Widget"), GroupVersionResource("example.com", "v1", "widgets"), False
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v1/Pod", GroupVersionKind("", "v1", "Pod")),
        ("apps/v1/Deployment", GroupVersionKind("apps", "v1", "Deployment")),
        ("ballast.dev/v1alpha1/WorkloadProfile", GroupVersionKind("ballast.dev", "v1alpha1", "WorkloadProfile")),
        ("Deployment.v1.apps", GroupVersionKind("apps", "v1", "Deployment")),
        ("Widget.v1.example.com", GroupVersionKind("example.com", "v1", "Widget")),
        ("Pod.v1", GroupVersionKind("", "v1", "Pod")),
    ],
)
def test_parse(text: str, expected: GroupVersionKind) -> None:
    assert GroupVersionKind.parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Pod", "cannot parse 'Pod' as a kind"),
        ("", "cannot parse '' as a kind"),
        (".v1", "cannot parse"),
        ("/Pod", "invalid apiVersion/kind ''/'Pod'"),
        ("v1/", "invalid apiVersion/kind 'v1'/''"),
        ("apps//Deployment", "invalid apiVersion/kind 'apps/'"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GroupVersionKind.parse(text)


@pytest.mark.parametrize(
    ("gvk", "api_version", "text"),
    [
        (GroupVersionKind("", "v1", "Pod"), "v1", "v1/Pod"),
        (GroupVersionKind("apps", "v1", "Deployment"), "apps/v1", "apps/v1/Deployment"),
    ],
)
def test_api_version_and_string(gvk: GroupVersionKind, api_version: str, text: str) -> None:
    assert gvk.api_version == api_version
    assert str(gvk) == text
    assert GroupVersionKind.from_api_version(api_version, gvk.kind) == gvk


def test_resource_strings() -> None:
    assert str(GroupVersionResource("", "v1", "pods")) == "pods.v1"
    assert str(GroupVersionResource("apps", "v1", "deployments")) == "deployments.v1.apps"
    assert GroupVersionResource("apps", "v1", "deployments").api_version == "apps/v1"
    assert GroupVersionResource("", "v1", "pods").api_version == "v1"


_SEGMENT = st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True)
_GVKS = st.builds(
    GroupVersionKind,
    st.one_of(st.just(""), st.builds(".".join, st.lists(_SEGMENT, min_size=1, max_size=3))),
    _SEGMENT,
    st.from_regex(r"[A-Z][A-Za-z0-9]{0,8}", fullmatch=True),
)


@given(_GVKS)
def test_the_string_form_parses_back(gvk: GroupVersionKind) -> None:
    assert GroupVersionKind.parse(str(gvk)) == gvk
    dotted = f"{gvk.kind}.{gvk.version}" + (f".{gvk.group}" if gvk.group else "")
    assert GroupVersionKind.parse(dotted) == gvk


@pytest.mark.parametrize(
    ("mapping", "namespace", "collection", "obj", "status"),
    [
        (POD, "shop", "/api/v1/namespaces/shop/pods", "/api/v1/namespaces/shop/pods/x",
         "/api/v1/namespaces/shop/pods/x/status"),
        (DEPLOYMENT, "shop", "/apis/apps/v1/namespaces/shop/deployments",
         "/apis/apps/v1/namespaces/shop/deployments/x", "/apis/apps/v1/namespaces/shop/deployments/x/status"),
        (NODE, None, "/api/v1/nodes", "/api/v1/nodes/x", "/api/v1/nodes/x/status"),
        (NODE, "ignored", "/api/v1/nodes", "/api/v1/nodes/x", "/api/v1/nodes/x/status"),
        (CLUSTER_WIDGET, None, "/apis/example.com/v1/widgets", "/apis/example.com/v1/widgets/x",
         "/apis/example.com/v1/widgets/x/status"),
    ],
)  # fmt: skip
def test_paths(mapping: RESTMapping, namespace: str | None, collection: str, obj: str, status: str) -> None:
    assert mapping.collection_path(namespace) == collection
    assert mapping.object_path("x", namespace) == obj
    assert mapping.object_path("x", namespace, "status") == status


def test_a_namespaced_collection_without_a_namespace_spans_all_namespaces() -> None:
    assert POD.collection_path(None) == "/api/v1/pods"
    assert POD.collection_path("") == "/api/v1/pods"
    assert DEPLOYMENT.prefix == "/apis/apps/v1"
    assert POD.prefix == "/api/v1"


@pytest.mark.parametrize(
    ("mapping", "name", "namespace", "message"),
    [
        (POD, "", "shop", "Pod: an object name is required"),
        (POD, "x", None, "Pod 'x' is namespaced: a namespace is required"),
        (POD, "x", "", "Pod 'x' is namespaced"),
        (NODE, "", None, "Node: an object name is required"),
    ],
)
def test_object_path_errors(mapping: RESTMapping, name: str, namespace: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mapping.object_path(name, namespace)


@pytest.mark.parametrize("value", [".", "..", "a/b", "../../../../api/v1/namespaces/kube-system/secrets/x", "%2e%2e"])
def test_names_and_namespaces_that_are_not_one_path_segment_are_refused(value: str) -> None:
    # They come from objects anyone may write (a pod's ownerReferences): `..` or `/` would point the request at
    # another object, as client-go's IsValidPathSegmentName refuses them.
    with pytest.raises(ValueError, match="cannot be a URL path segment"):
        POD.object_path(value, "shop")
    with pytest.raises(ValueError, match="cannot be a URL path segment"):
        POD.object_path("x", value)
    with pytest.raises(ValueError, match="cannot be a URL path segment"):
        POD.collection_path(value)
    with pytest.raises(ValueError, match="cannot be a URL path segment"):
        NODE.object_path("x", subresource=value)


def test_characters_urls_reserve_are_percent_encoded_and_names_keep_colons() -> None:
    # `?` would turn a GET of one object into a LIST of its collection, `#` would cut the path.
    assert POD.object_path("x?limit=1", "shop") == "/api/v1/namespaces/shop/pods/x%3Flimit=1"
    assert POD.object_path("a#b c", "shop") == "/api/v1/namespaces/shop/pods/a%23b%20c"
    assert NODE.object_path("système") == "/api/v1/nodes/syst%C3%A8me"
    cluster_role = RESTMapping(
        GroupVersionKind("rbac.authorization.k8s.io", "v1", "ClusterRole"),
        GroupVersionResource("rbac.authorization.k8s.io", "v1", "clusterroles"),
        namespaced=False,
    )
    assert cluster_role.object_path("system:controller:x").endswith("/clusterroles/system:controller:x")
