"""The discovery-backed REST mapper: one fetch per group version, a refresh on a miss, subresources skipped."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.runtime import GroupVersionKind, NotFoundError
from ballast.runtime.gvk import GroupVersionResource, RESTMapping
from ballast.runtime.restmapper import NoKindMatchError, RESTMapper


class Discovery:
    """A discovery endpoint whose documents the test can change; counts fetches per path."""

    def __init__(self) -> None:
        self.documents: dict[str, list[dict[str, Any]]] = {
            "/api/v1": [
                {"name": "pods", "kind": "Pod", "namespaced": True},
                {"name": "pods/status", "kind": "Pod", "namespaced": True},
                {"name": "pods/eviction", "kind": "Eviction", "namespaced": True},
                {"name": "nodes", "kind": "Node", "namespaced": False},
            ],
            "/apis/apps/v1": [{"name": "deployments", "kind": "Deployment", "namespaced": True}],
        }
        self.fetches: list[str] = []

    def __call__(self, path: str) -> dict[str, Any]:
        self.fetches.append(path)
        if path not in self.documents:
            raise NotFoundError(404, "NotFound", f"{path} not found")
        return {"kind": "APIResourceList", "resources": self.documents[path]}


@pytest.fixture
def discovery() -> Discovery:
    return Discovery()


@pytest.mark.parametrize(
    ("gvk", "resource", "namespaced", "path"),
    [
        (GroupVersionKind("", "v1", "Pod"), "pods", True, "/api/v1"),
        (GroupVersionKind("", "v1", "Node"), "nodes", False, "/api/v1"),
        (GroupVersionKind("apps", "v1", "Deployment"), "deployments", True, "/apis/apps/v1"),
    ],
)
def test_mapping_from_discovery(
    discovery: Discovery, gvk: GroupVersionKind, resource: str, namespaced: bool, path: str
) -> None:
    mapping = RESTMapper(discovery).mapping(gvk)
    assert mapping == RESTMapping(gvk, GroupVersionResource(gvk.group, gvk.version, resource), namespaced)
    assert discovery.fetches == [path]


def test_a_group_version_is_fetched_once(discovery: Discovery) -> None:
    mapper = RESTMapper(discovery)
    mapper.mapping(GroupVersionKind("", "v1", "Pod"))
    mapper.mapping(GroupVersionKind("", "v1", "Node"))
    mapper.mapping(GroupVersionKind("", "v1", "Pod"))
    assert mapper.kind_for(GroupVersionResource("", "v1", "nodes")) == GroupVersionKind("", "v1", "Node")
    assert discovery.fetches == ["/api/v1"]


def test_subresources_are_not_kinds(discovery: Discovery) -> None:
    mapper = RESTMapper(discovery)
    assert mapper.mapping(GroupVersionKind("", "v1", "Pod")).resource.resource == "pods"  # not pods/status
    with pytest.raises(NoKindMatchError):
        mapper.mapping(GroupVersionKind("", "v1", "Eviction"))  # only served as pods/eviction
    with pytest.raises(NoKindMatchError):
        mapper.kind_for(GroupVersionResource("", "v1", "pods/status"))


def test_a_miss_refreshes_its_group_version_so_new_crds_appear(discovery: Discovery) -> None:
    mapper = RESTMapper(discovery)
    widget = GroupVersionKind("example.com", "v1", "Widget")
    with pytest.raises(NoKindMatchError, match=r"no kind 'Widget' is served in 'example\.com/v1'"):
        mapper.mapping(widget)  # the group is not served at all: 404 → no kinds
    discovery.documents["/apis/example.com/v1"] = [{"name": "widgets", "kind": "Widget", "namespaced": True}]
    assert mapper.mapping(widget).resource == GroupVersionResource("example.com", "v1", "widgets")
    assert mapper.mapping(widget).namespaced
    assert discovery.fetches == ["/apis/example.com/v1", "/apis/example.com/v1"]


def test_a_miss_in_a_known_group_version_refetches_then_raises(discovery: Discovery) -> None:
    mapper = RESTMapper(discovery)
    mapper.mapping(GroupVersionKind("apps", "v1", "Deployment"))
    with pytest.raises(NoKindMatchError, match="no kind 'StatefulSet' is served in 'apps/v1'"):
        mapper.mapping(GroupVersionKind("apps", "v1", "StatefulSet"))
    assert discovery.fetches == ["/apis/apps/v1", "/apis/apps/v1"]
    assert mapper.mapping(GroupVersionKind("apps", "v1", "Deployment")).namespaced  # still cached


def test_kind_for_refreshes_and_names_the_missing_resource(discovery: Discovery) -> None:
    mapper = RESTMapper(discovery)
    with pytest.raises(NoKindMatchError, match=r"no resource statefulsets\.v1\.apps is served"):
        mapper.kind_for(GroupVersionResource("apps", "v1", "statefulsets"))
    discovery.documents["/apis/apps/v1"].append({"name": "statefulsets", "kind": "StatefulSet", "namespaced": True})
    assert mapper.kind_for(GroupVersionResource("apps", "v1", "statefulsets")).kind == "StatefulSet"


def test_other_discovery_failures_propagate() -> None:
    def failing(path: str) -> dict[str, Any]:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        RESTMapper(failing).mapping(GroupVersionKind("", "v1", "Pod"))


def test_added_mappings_need_no_discovery_and_reset_forgets(discovery: Discovery) -> None:
    mapper = RESTMapper(discovery)
    gadget = RESTMapping(
        GroupVersionKind("example.com", "v1", "Gadget"), GroupVersionResource("example.com", "v1", "gadgets"), False
    )
    mapper.add(gadget)
    assert mapper.mapping(gadget.gvk) is gadget
    assert mapper.kind_for(gadget.resource) == gadget.gvk
    assert discovery.fetches == []
    mapper.reset()
    with pytest.raises(NoKindMatchError):
        mapper.mapping(gadget.gvk)
    assert discovery.fetches == ["/apis/example.com/v1"]


@pytest.mark.parametrize(
    "api_version", ["apps/../../api/v1", "x/../../api/v1", "Apps/v1", "apps/V1", "apps/v1?x=1", "a b/v1", "./v1"]
)
def test_a_group_version_that_cannot_exist_is_never_fetched(discovery: Discovery, api_version: str) -> None:
    # An ownerReference's apiVersion is anyone's to write: `apps/../../api/v1` would read the core discovery
    # document and map its kinds (Secret) under a made-up group whose paths lead back to the core API.
    mapper = RESTMapper(discovery)
    with pytest.raises(NoKindMatchError):
        mapper.mapping(GroupVersionKind.from_api_version(api_version, "Secret"))
    group, _, version = api_version.rpartition("/")
    with pytest.raises(NoKindMatchError):
        mapper.kind_for(GroupVersionResource(group, version, "secrets"))
    assert discovery.fetches == []


def test_lookups_of_made_up_group_versions_leave_nothing_behind(discovery: Discovery) -> None:
    mapper = RESTMapper(discovery)
    for n in range(50):
        with pytest.raises(NoKindMatchError):
            mapper.mapping(GroupVersionKind(f"made-up-{n}.example.com", "v1", "Thing"))
    assert len(discovery.fetches) == 50  # each asked once, as a CRD may have been installed since
    assert vars(mapper)["_by_kind"] == {}
    assert vars(mapper)["_by_resource"] == {}
    assert {key for key, value in vars(mapper).items() if isinstance(value, set | dict) and value} == set()
