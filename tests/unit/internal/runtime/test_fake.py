"""FakeAPI behind the real client: verbs, versions, subresources, finalizers, selectors, watches, admission."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ballast.runtime import JSON_PATCH, STRATEGIC, FakeAPI, FakeClock, GroupVersionKind, apierrors
from ballast.runtime.client import APIServerClient
from tests.unit.internal.runtime.support import configmap

WIDGET = GroupVersionKind("example.com", "v1", "Widget")


def deployment(name: str = "web", namespace: str = "shop", replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "template": {"spec": {"containers": [
                {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}},
                {"name": "sidecar", "image": "envoy"},
            ]}},
        },
    }  # fmt: skip


def open_watch(client: APIServerClient, kind: str, namespace: str | None = None, **options: Any) -> Any:
    """A raw watch stream, registered at once (client.watch() is a lazy generator)."""
    label_selector = options.pop("label_selector", None)
    defaults = {"resource_version": "", "timeout_seconds": 60, "allow_bookmarks": True,
                "send_initial_events": False, "read_timeout": None}  # fmt: skip
    return client.lister_watcher(kind, namespace, label_selector).watch(**{**defaults, **options})


def drain(api: FakeAPI, stream: Any) -> list[tuple[str, str]]:
    """End every open watch, then read what this one was sent: (type, name) pairs."""
    api.close()
    events = [orjson.loads(line) for line in stream]
    return [(event["type"], event["object"]["metadata"].get("name", "")) for event in events]


# -------------------------------------------------------------------------------------------- CRUD


def test_create_get_list_update_delete() -> None:
    client = FakeAPI(clock=FakeClock()).client()
    created = client.create(configmap("a", "shop", mode="x"))
    meta = created["metadata"]
    assert meta["uid"]
    assert meta["generation"] == 1
    assert meta["resourceVersion"] == "1"
    assert meta["creationTimestamp"] == "2026-01-01T00:00:00Z"  # the fake clock's time
    assert created["apiVersion"] == "v1"
    assert created["kind"] == "ConfigMap"
    assert client.get("v1/ConfigMap", "a", "shop") == created
    listed = client.list("v1/ConfigMap", "shop")
    assert [item["metadata"]["name"] for item in listed] == ["a"]
    assert listed.items[0]["kind"] == "ConfigMap"  # the client gives list items their kind back
    assert listed.resource_version == "1"
    created["data"]["mode"] = "y"
    updated = client.update(created)
    assert updated["data"] == {"mode": "y"}
    assert updated["metadata"]["resourceVersion"] == "2"
    client.delete(updated)
    with pytest.raises(apierrors.NotFoundError, match='configmaps "a" not found'):
        client.get("v1/ConfigMap", "a", "shop")
    client.delete(updated, ignore_not_found=True)
    with pytest.raises(apierrors.NotFoundError):
        client.delete(updated)


def test_create_errors(client: APIServerClient) -> None:
    client.create(configmap("a", "shop"))
    with pytest.raises(apierrors.AlreadyExistsError, match='configmaps "a" already exists'):
        client.create(configmap("a", "shop"))
    stale = configmap("b", "shop")
    stale["metadata"]["resourceVersion"] = "5"
    with pytest.raises(apierrors.BadRequestError, match="resourceVersion should not be set"):
        client.create(stale)
    nameless: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "shop"}}
    with pytest.raises(apierrors.UnprocessableEntityError, match="name or generateName is required"):
        client.create(nameless)


def test_generate_name_and_default_namespace(client: APIServerClient) -> None:
    generated: dict[str, Any] = client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "cfg-"}}
    )
    assert generated["metadata"]["name"].startswith("cfg-")
    assert len(generated["metadata"]["name"]) == len("cfg-") + 5
    assert generated["metadata"]["namespace"] == "default"
    node = client.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    assert "namespace" not in node["metadata"]
    assert client.get("v1/Node", "n1")["metadata"]["name"] == "n1"


def test_dry_run_stores_nothing(api: FakeAPI, client: APIServerClient) -> None:
    client.create(configmap("a", "shop"), dry_run=True)
    assert api.objects("v1/ConfigMap") == []
    assert api.resource_version == "0"


def test_objects_are_copies(api: FakeAPI, client: APIServerClient) -> None:
    client.create(configmap("a", "shop", mode="x"))
    api.objects("v1/ConfigMap")[0]["data"]["mode"] = "changed"
    client.get("v1/ConfigMap", "a", "shop")["data"]["mode"] = "changed"
    assert api.objects(GroupVersionKind("", "v1", "ConfigMap"))[0]["data"] == {"mode": "x"}


def test_unknown_resources_and_wrong_verbs(api: FakeAPI) -> None:
    with pytest.raises(apierrors.NotFoundError, match="could not find the requested resource gadgets"):
        api.request("GET", "/apis/example.com/v1/gadgets")
    with pytest.raises(apierrors.MethodNotAllowedError):
        api.request("PUT", "/api/v1/namespaces/shop/configmaps", body=b"{}")
    with pytest.raises(apierrors.MethodNotAllowedError):
        api.stream("GET", "/api/v1/namespaces/shop/configmaps/a")


def test_registered_kinds_are_discoverable(api: FakeAPI) -> None:
    api.register(WIDGET, "widgets", namespaced=False, status=False)
    client = api.client()
    assert not client.mapping("example.com/v1/Widget").namespaced
    widget: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    assert client.create(widget)["metadata"]["resourceVersion"]
    assert api.requests[-1] == ("POST", "/apis/example.com/v1/widgets")


# --------------------------------------------------------------------------- versions and generation


def test_a_stale_resource_version_conflicts(client: APIServerClient) -> None:
    first = client.create(configmap("a", "shop", mode="x"))
    client.patch(first, {"data": {"mode": "y"}})
    first["data"]["mode"] = "z"
    with pytest.raises(apierrors.ConflictError, match="the object has been modified"):
        client.update(first)
    del first["metadata"]["resourceVersion"]  # an unconditional update is allowed
    assert client.update(first)["data"] == {"mode": "z"}


def test_a_resource_version_in_a_patch_is_a_precondition(client: APIServerClient) -> None:
    created = client.create(configmap("a", "shop", mode="x"))
    current = created["metadata"]["resourceVersion"]
    patched = client.patch(created, {"metadata": {"resourceVersion": current}, "data": {"mode": "y"}})
    assert patched["data"] == {"mode": "y"}
    with pytest.raises(apierrors.ConflictError):
        client.patch(created, {"metadata": {"resourceVersion": current}, "data": {"mode": "z"}})
    with pytest.raises(apierrors.ConflictError):
        client.patch(created, [{"op": "replace", "path": "/metadata/resourceVersion", "value": current}],
                     patch_type=JSON_PATCH)  # fmt: skip
    assert client.get("v1/ConfigMap", "a", "shop")["data"] == {"mode": "y"}


def test_a_no_op_write_keeps_the_resource_version(api: FakeAPI, client: APIServerClient) -> None:
    created = client.create(configmap("a", "shop", mode="x"))
    assert client.update(created)["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert client.patch(created, {"data": {"mode": "x"}})["metadata"]["resourceVersion"] == "1"
    assert api.resource_version == "1"


@pytest.mark.parametrize(
    ("change", "bumped"),
    [
        ({"spec": {"replicas": 3}}, True),
        ({"metadata": {"labels": {"tier": "front"}}}, False),
        ({"metadata": {"annotations": {"note": "x"}}}, False),
        ({"status": {"replicas": 3}}, False),  # ignored on the main resource anyway
    ],
)
def test_generation_moves_only_with_the_spec(client: APIServerClient, change: dict[str, Any], bumped: bool) -> None:
    created = client.create(deployment())
    patched = client.patch(created, change)
    assert patched["metadata"]["generation"] == (2 if bumped else 1)


def test_status_writes_never_bump_the_generation(client: APIServerClient) -> None:
    created = client.create(deployment())
    created["status"] = {"replicas": 1}
    assert client.status().update(created)["metadata"]["generation"] == 1


# ----------------------------------------------------------------------------- status subresource


def test_the_main_resource_cannot_change_status(client: APIServerClient) -> None:
    created = client.create(deployment())
    created["status"] = {"replicas": 7}
    created["spec"]["replicas"] = 2
    updated = client.update(created)
    assert "status" not in updated
    assert updated["spec"]["replicas"] == 2
    with_status = client.status().update({**updated, "status": {"replicas": 1}})
    changed = client.patch(with_status, {"status": {"replicas": 9}, "spec": {"replicas": 4}})
    assert changed["status"] == {"replicas": 1}
    assert changed["spec"]["replicas"] == 4


def test_applying_status_to_a_missing_object_is_not_found(client: APIServerClient) -> None:
    # As the API server: apply creates only through the main resource, never through a subresource.
    body = {**deployment(), "status": {"replicas": 1}}
    with pytest.raises(apierrors.NotFoundError):
        client.status().patch(body, body, patch_type="apply", field_manager="tests")
    with pytest.raises(apierrors.NotFoundError):
        client.get("apps/v1/Deployment", body["metadata"]["name"], body["metadata"]["namespace"])


def test_status_writes_change_only_status(client: APIServerClient) -> None:
    created = client.create(deployment())
    created["status"] = {"replicas": 1}
    created["spec"]["replicas"] = 5
    created["metadata"]["labels"] = {"ignored": "yes"}
    updated = client.status().update(created)
    assert updated["status"] == {"replicas": 1}
    assert updated["spec"]["replicas"] == 1
    assert "labels" not in updated["metadata"]
    patched = client.status().patch(updated, {"status": {"readyReplicas": 1}})
    assert patched["status"] == {"replicas": 1, "readyReplicas": 1}
    stale = {**created, "status": {"replicas": 2}}
    with pytest.raises(apierrors.ConflictError):
        client.status().update(stale)  # the resourceVersion still guards status writes


def test_status_writes_need_a_status_subresource(client: APIServerClient) -> None:
    created = client.create(configmap("a", "shop"))
    with pytest.raises(apierrors.NotFoundError, match="configmaps/status"):
        client.status().update({**created, "status": {"x": 1}})
    with pytest.raises(apierrors.NotFoundError):
        client.status().patch(created, {"status": {"x": 1}})


def test_kinds_without_a_status_subresource_keep_status_in_the_main_resource(api: FakeAPI) -> None:
    api.register(WIDGET, "widgets", namespaced=True, status=False)
    client = api.client()
    created = client.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    patched = client.patch(created, {"status": {"phase": "Ready"}})
    assert patched["status"] == {"phase": "Ready"}


def test_namespace_status_is_its_own_subresource(client: APIServerClient) -> None:
    namespace = client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    namespace["status"] = {"phase": "Active"}
    assert client.status().update(namespace)["status"] == {"phase": "Active"}
    assert client.get("v1/Namespace", "shop")["status"] == {"phase": "Active"}


def test_scale_subresource(client: APIServerClient) -> None:
    created = client.create(deployment(replicas=2))
    scale = client.subresource("scale").get(created)
    assert scale["kind"] == "Scale"
    assert scale["spec"] == {"replicas": 2}
    scaled = client.subresource("scale").patch(created, {"spec": {"replicas": 5}})
    assert scaled["spec"]["replicas"] == 5
    assert scaled["metadata"]["generation"] == 2


def test_eviction_deletes_the_pod(api: FakeAPI, client: APIServerClient) -> None:
    pod = client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"}})
    client.evict(pod)
    assert api.objects("v1/Pod") == []


# ---------------------------------------------------------------------------- finalizers and delete


def test_finalizers_hold_deletion_until_removed() -> None:
    clock = FakeClock()
    api = FakeAPI(clock=clock)
    client = api.client()
    obj = configmap("a", "shop")
    obj["metadata"]["finalizers"] = ["ballast.dev/cleanup"]
    created = client.create(obj)
    stream = open_watch(client, "v1/ConfigMap", "shop", resource_version=created["metadata"]["resourceVersion"])
    clock.advance(60)
    client.delete(created)
    marked = client.get("v1/ConfigMap", "a", "shop")
    assert marked["metadata"]["deletionTimestamp"] == "2026-01-01T00:01:00Z"
    clock.advance(60)
    client.delete(marked)  # a second delete changes nothing
    assert client.get("v1/ConfigMap", "a", "shop")["metadata"] == marked["metadata"]
    marked["metadata"]["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    marked["data"] = {"still": "writable"}
    kept = client.update(marked)
    assert kept["metadata"]["deletionTimestamp"] == "2026-01-01T00:01:00Z"  # immutable
    kept["metadata"]["finalizers"] = []
    client.update(kept)
    assert api.objects("v1/ConfigMap") == []
    assert drain(api, stream) == [("MODIFIED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_delete_preconditions(client: APIServerClient) -> None:
    created = client.create(configmap("a", "shop"))
    with pytest.raises(apierrors.ConflictError, match="Precondition failed: uid"):
        client.delete(created, preconditions={"uid": "someone-else"})
    with pytest.raises(apierrors.ConflictError, match="Precondition failed: resourceVersion"):
        client.delete(created, preconditions={"resourceVersion": "999"})
    client.delete(created, preconditions={"uid": created["metadata"]["uid"]})
    assert client.list("v1/ConfigMap", "shop").items == []


# ------------------------------------------------------------------------------ selectors and pages


@pytest.fixture
def populated(client: APIServerClient) -> APIServerClient:
    for namespace in ("shop", "blog"):
        for name, tier in (("a", "front"), ("b", "back"), ("c", "front")):
            client.create(configmap(name, namespace, labels={"tier": tier, "ns": namespace}))
    return client


def _names(items: Any) -> list[str]:
    return [f"{item['metadata']['namespace']}/{item['metadata']['name']}" for item in items]


@pytest.mark.parametrize(
    ("namespace", "options", "expected"),
    [
        ("shop", {}, ["shop/a", "shop/b", "shop/c"]),
        (None, {}, ["blog/a", "blog/b", "blog/c", "shop/a", "shop/b", "shop/c"]),
        (None, {"label_selector": "tier=front"}, ["blog/a", "blog/c", "shop/a", "shop/c"]),
        ("shop", {"label_selector": "tier in (back),ns=shop"}, ["shop/b"]),
        (None, {"label_selector": "!tier"}, []),
        (None, {"field_selector": "metadata.name=b"}, ["blog/b", "shop/b"]),
        (None, {"field_selector": "metadata.namespace==blog,metadata.name=c"}, ["blog/c"]),
    ],
)
def test_list_selectors(
    populated: APIServerClient, namespace: str | None, options: dict[str, str], expected: list[str]
) -> None:
    found = populated.list(
        "v1/ConfigMap", namespace, label_selector=options.get("label_selector"),
        field_selector=options.get("field_selector"),
    )  # fmt: skip
    assert _names(found) == expected


def test_a_bad_label_selector_is_a_bad_request(populated: APIServerClient) -> None:
    with pytest.raises(apierrors.BadRequestError, match="unbalanced"):
        populated.list("v1/ConfigMap", label_selector="tier in (front")
    with pytest.raises(apierrors.BadRequestError):
        open_watch(populated, "v1/ConfigMap", label_selector="=x")


def test_pages_with_continue(api: FakeAPI, populated: APIServerClient) -> None:
    first = populated.list("v1/ConfigMap", limit=4)
    assert _names(first) == ["blog/a", "blog/b", "blog/c", "shop/a"]
    assert first.continue_
    second = populated.list("v1/ConfigMap", limit=4, continue_=first.continue_)
    assert _names(second) == ["shop/b", "shop/c"]
    assert second.continue_ == ""
    assert len(list(populated.list_all("v1/ConfigMap", page_size=2))) == 6
    assert [path for method, path in api.requests if method == "GET"][-3:] == ["/api/v1/configmaps"] * 3


# ---------------------------------------------------------------------------------------- watches


def test_watches_fan_out_to_every_matching_watcher(api: FakeAPI, client: APIServerClient) -> None:
    everything = open_watch(client, "v1/ConfigMap")
    shop_only = open_watch(client, "v1/ConfigMap", "shop")
    front_only = open_watch(client, "v1/ConfigMap", label_selector="tier=front")
    pods = open_watch(client, "v1/Pod")
    a = client.create(configmap("a", "shop", labels={"tier": "front"}))
    client.create(configmap("b", "blog"))
    client.patch(a, {"data": {"x": "1"}})
    client.delete(a)
    assert drain(api, everything) == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert drain(api, shop_only) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert drain(api, front_only) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert drain(api, pods) == []


def test_a_filtered_watch_sees_objects_enter_and_leave_its_selection(api: FakeAPI, client: APIServerClient) -> None:
    live = open_watch(client, "v1/ConfigMap", label_selector="tier=front")
    a = client.create(configmap("a", "shop", labels={"tier": "front"}))
    client.create(configmap("never", "shop", labels={"tier": "back"}))
    left = client.patch(a, {"metadata": {"labels": {"tier": "back"}}})
    back = client.patch(left, {"metadata": {"labels": {"tier": "front"}}})
    client.patch(back, {"data": {"x": "1"}})
    client.delete(back)
    replayed = open_watch(client, "v1/ConfigMap", label_selector="tier=front", resource_version="0")
    replayed_from_1 = open_watch(client, "v1/ConfigMap", label_selector="tier=front", resource_version="1")
    expected = [("DELETED", "a"), ("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    api.close()
    events = [orjson.loads(line) for line in live]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a"), *expected]
    left_event = events[1]["object"]
    assert left_event["metadata"]["labels"] == {"tier": "front"}  # the last state that matched ...
    assert left_event["metadata"]["resourceVersion"] == left["metadata"]["resourceVersion"]  # ... at the new version
    assert [orjson.loads(line)["type"] for line in replayed] == []  # "0": from now on
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in map(orjson.loads, replayed_from_1)] == expected


def test_a_watch_from_a_resource_version_replays_what_came_after(api: FakeAPI, client: APIServerClient) -> None:
    client.create(configmap("a", "shop"))
    b = client.create(configmap("b", "shop"))
    client.delete(b)
    stream = open_watch(client, "v1/ConfigMap", resource_version="1")
    client.create(configmap("c", "shop"))
    assert drain(api, stream) == [("ADDED", "b"), ("DELETED", "b"), ("ADDED", "c")]


def test_a_watch_from_a_compacted_version_gets_410_and_ends() -> None:
    api = FakeAPI(history=3)
    client = api.client()
    for name in "abcde":
        client.create(configmap(name, "shop"))  # versions 1..5; history keeps 3..5
    expired = [orjson.loads(line) for line in open_watch(client, "v1/ConfigMap", resource_version="1")]
    assert len(expired) == 1  # the stream ends after the ERROR, as the API server's does
    assert expired[0]["type"] == "ERROR"
    assert expired[0]["object"]["code"] == 410
    assert expired[0]["object"]["reason"] == "Expired"
    resumed = open_watch(client, "v1/ConfigMap", resource_version="2")  # 3..5 are all still there
    assert drain(api, resumed) == [("ADDED", "c"), ("ADDED", "d"), ("ADDED", "e")]


def test_send_initial_events_ends_with_the_annotated_bookmark(api: FakeAPI, client: APIServerClient) -> None:
    client.create(configmap("a", "shop"))
    client.create(configmap("b", "shop", labels={"skip": "yes"}))
    client.create(configmap("c", "blog"))
    stream = open_watch(client, "v1/ConfigMap", "shop", send_initial_events=True, label_selector="!skip")
    client.create(configmap("d", "shop"))
    api.close()
    events = [orjson.loads(line) for line in stream]
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events] == [
        ("ADDED", "a"), ("BOOKMARK", None), ("ADDED", "d"),
    ]  # fmt: skip
    bookmark = events[1]["object"]
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert bookmark["metadata"]["resourceVersion"] == "3"
    assert bookmark["kind"] == "ConfigMap"


def test_a_closed_watch_gets_nothing_more(api: FakeAPI, client: APIServerClient) -> None:
    stream = open_watch(client, "v1/ConfigMap")
    stream.close()
    client.create(configmap("a", "shop"))
    assert list(stream) == []


# -------------------------------------------------------------------------------------- admission


def test_admission_hooks_mutate_and_see_the_old_object(client: APIServerClient, api: FakeAPI) -> None:
    seen: list[tuple[str, str, Any]] = []

    def default_labels(
        operation: str, gvk: GroupVersionKind, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        seen.append((operation, gvk.kind, old["data"] if old else None))
        if gvk.kind != "ConfigMap":
            return None
        obj["metadata"].setdefault("labels", {})["defaulted"] = "true"
        return obj

    api.admission(default_labels)
    created = client.create(configmap("a", "shop", mode="x"))
    assert created["metadata"]["labels"] == {"defaulted": "true"}
    client.patch(created, {"data": {"mode": "y"}})
    assert seen == [("CREATE", "ConfigMap", None), ("UPDATE", "ConfigMap", {"mode": "x"})]


def test_admission_hooks_deny(client: APIServerClient, api: FakeAPI) -> None:
    def deny_prod(
        operation: str, gvk: GroupVersionKind, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        if obj["metadata"]["namespace"] == "prod":
            raise apierrors.ForbiddenError(403, "Forbidden", "admission webhook denied the request: not in prod")
        return None

    api.admission(deny_prod)
    with pytest.raises(apierrors.ForbiddenError, match="not in prod"):
        client.create(configmap("a", "prod"))
    assert api.objects("v1/ConfigMap") == []
    client.create(configmap("a", "shop"))


# ------------------------------------------------------------------------------------ patch types


def test_strategic_merge_merges_named_lists_by_name(client: APIServerClient) -> None:
    created = client.create(deployment())
    patched = client.patch(
        created,
        {"spec": {"template": {"spec": {"containers": [
            {"name": "web", "resources": {"requests": {"cpu": "200m"}}},
            {"name": "init", "image": "busybox"},
        ]}}}},
        patch_type=STRATEGIC,
    )  # fmt: skip
    containers = patched["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "sidecar", "init"]
    assert containers[0] == {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "200m"}}}
    merged = client.patch(
        patched, {"spec": {"template": {"spec": {"containers": [{"name": "only"}]}}}}
    )  # a plain merge patch replaces lists
    assert merged["spec"]["template"]["spec"]["containers"] == [{"name": "only"}]


def test_json_patch(client: APIServerClient) -> None:
    created = client.create(deployment())
    patched = client.patch(
        created,
        [{"op": "replace", "path": "/spec/replicas", "value": 3},
         {"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}],
        patch_type=JSON_PATCH,
    )  # fmt: skip
    assert patched["spec"]["replicas"] == 3
    assert patched["metadata"]["labels"] == {"a": "b"}
    with pytest.raises(apierrors.UnprocessableEntityError, match="could not be applied"):
        client.patch(created, [{"op": "test", "path": "/spec/replicas", "value": 99}], patch_type=JSON_PATCH)
    with pytest.raises(apierrors.UnprocessableEntityError):
        client.patch(created, [{"op": "remove", "path": "/spec/missing"}], patch_type=JSON_PATCH)


def test_apply_creates_when_absent_and_merges_when_present(api: FakeAPI, client: APIServerClient) -> None:
    applied = client.apply(configmap("a", "shop", mode="x"))
    assert applied["metadata"]["resourceVersion"] == "1"
    assert api.requests[-1][0] == "PATCH"
    again = client.apply(configmap("a", "shop", extra="y"))
    assert again["data"] == {"mode": "x", "extra": "y"}
    with pytest.raises(ValueError, match="needs a field manager"):
        api.client(field_owner=None).apply(configmap("b", "shop"))
    with pytest.raises(apierrors.NotFoundError):
        client.patch(configmap("missing", "shop"), {"data": {}})  # other patch types do not create


def test_settle_returns_once_the_informers_hold_every_write() -> None:
    from ballast.runtime import Cache  # noqa: PLC0415 - only this test needs informers

    api = FakeAPI()
    client = api.client()
    cache = Cache(client)
    cache.get_informer("v1/ConfigMap")
    cache.start()
    try:
        assert cache.wait_for_sync(10)
        for round_ in range(20):  # no poll in between: what the cache holds right after settle() is checked
            for index in range(10):
                client.create(configmap(f"cm-{round_}-{index}", round=str(round_)))
            client.delete(configmap(f"cm-{round_}-0"))
            api.settle()
            assert len(cache.list("v1/ConfigMap")) == 9 * (round_ + 1)
    finally:
        cache.stop()
        api.close()
