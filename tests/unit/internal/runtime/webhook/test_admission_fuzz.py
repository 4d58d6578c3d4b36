"""The admission decoder and server never crash: garbage in, a well-formed review (or a clean 4xx) out."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonpatch
import orjson
import pytest
import urllib3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ballast.runtime import AdmissionRequest, AdmissionResponse, WebhookServer, allowed, patched
from ballast.runtime.admission import ReviewError, decode_review, encode_review, json_patch
from tests.unit.internal.runtime.webhook.support import serving

VALID = {
    "apiVersion": "admission.k8s.io/v1",
    "kind": "AdmissionReview",
    "request": {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "operation": "CREATE",
        "namespace": "shop",
        "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"app": "web"}}},
    },
}
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


@given(st.binary(max_size=2000))
def test_arbitrary_bytes_are_refused_cleanly(body: bytes) -> None:
    with pytest.raises(ReviewError) as refused:
        decode_review(body)
    assert refused.value.code == 400


@given(json_values)
def test_arbitrary_json_is_refused_cleanly(value: Any) -> None:
    with pytest.raises(ReviewError):
        decode_review(orjson.dumps(value))


@given(st.dictionaries(st.sampled_from(list(VALID["request"])), json_values, max_size=6))
def test_requests_with_odd_fields_decode_or_are_refused(fields: dict[str, Any]) -> None:
    review = {**VALID, "request": {**VALID["request"], **fields}}  # type: ignore[dict-item]
    try:
        api_version, request = decode_review(orjson.dumps(review))
    except ReviewError:
        return
    answer = orjson.loads(encode_review(api_version, request.uid, allowed()))
    assert answer["response"]["uid"] == request.uid


@pytest.mark.parametrize("cut", [1, 10, 50, 100, 200])
def test_truncated_reviews_are_refused(cut: int) -> None:
    with pytest.raises(ReviewError, match="not JSON"):
        decode_review(orjson.dumps(VALID)[:cut])


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("admission.k8s.io/v2", "AdmissionReview"), ("v1", "AdmissionReview"), ("admission.k8s.io/v1", "Pod")],
)
def test_wrong_versions_and_kinds_are_refused_by_name(api_version: str, kind: str) -> None:
    with pytest.raises(ReviewError, match=r"expected an AdmissionReview of admission\.k8s\.io/v1"):
        decode_review(orjson.dumps({**VALID, "apiVersion": api_version, "kind": kind}))


def test_v1beta1_reviews_are_answered_in_v1beta1() -> None:
    api_version, request = decode_review(orjson.dumps({**VALID, "apiVersion": "admission.k8s.io/v1beta1"}))
    answer = orjson.loads(encode_review(api_version, request.uid, allowed()))
    assert answer["apiVersion"] == "admission.k8s.io/v1beta1"


def test_patches_escape_slashes_in_keys() -> None:
    _, request = decode_review(orjson.dumps(VALID))
    mutated = request.object_copy()
    mutated["metadata"]["labels"]["ballast.tightlinesoftware.com/mode"] = "apply"
    response = patched(request, mutated)
    assert response.patch == [
        {"op": "add", "path": "/metadata/labels/ballast.tightlinesoftware.com~1mode", "value": "apply"}
    ]
    assert request.object is not None
    assert "ballast.tightlinesoftware.com/mode" not in request.object["metadata"]["labels"]  # original untouched


# ------------------------------------------------------------------------------------- over the wire


def crashing(request: AdmissionRequest) -> AdmissionResponse:
    if (request.object or {}).get("metadata", {}).get("name") == "boom":
        raise RuntimeError("handler bug")
    return allowed()


SERVERS: dict[str, WebhookServer] = {}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, urllib3.PoolManager]]:
    with serving(tmp_path_factory.mktemp("certs"), "fuzz", {"/validate": crashing}) as served:
        SERVERS[served.base] = served.server
        yield served.base, served.pool(maxsize=1)


def _post(served: tuple[str, urllib3.PoolManager], body: bytes, content_type: str = "application/json") -> Any:
    base, pool = served
    response = pool.request("POST", f"{base}/validate", body=body, headers={"Content-Type": content_type})
    assert response.status == 200
    answer = orjson.loads(response.data)
    assert answer["kind"] == "AdmissionReview"
    return answer["response"]


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(body=st.binary(max_size=4000))
def test_garbage_over_the_wire_gets_a_well_formed_refusal(served: tuple[str, urllib3.PoolManager], body: bytes) -> None:
    response = _post(served, body)
    assert response["allowed"] is False
    assert 400 <= response["status"]["code"] < 500


def test_a_huge_body_gets_413_and_a_wrong_content_type_400(served: tuple[str, urllib3.PoolManager]) -> None:
    assert _post(served, b" " * (7 * 1024 * 1024 + 1))["status"]["code"] == 413
    wrong = _post(served, orjson.dumps(VALID), content_type="text/plain")
    assert wrong["status"]["code"] == 400
    assert "Content-Type must be application/json" in wrong["status"]["message"]


def test_a_crashing_handler_is_answered_500_with_the_uid(served: tuple[str, urllib3.PoolManager]) -> None:
    review = {**VALID, "request": {**VALID["request"], "object": {"metadata": {"name": "boom"}}}}  # type: ignore[dict-item]
    response = _post(served, orjson.dumps(review))
    assert response["uid"] == VALID["request"]["uid"]  # type: ignore[index]
    assert (response["allowed"], response["status"]["code"]) == (False, 500)
    assert "handler bug" in response["status"]["message"]
    assert _post(served, orjson.dumps(VALID))["allowed"] is True  # the server goes on serving


def test_unknown_paths_and_methods_are_clean_http_errors(served: tuple[str, urllib3.PoolManager]) -> None:
    base, pool = served
    assert pool.request("POST", f"{base}/nowhere", body=b"{}").status == 404
    assert pool.request("GET", f"{base}/validate").status == 405


def test_connection_close_is_honoured_and_keep_alive_is_the_default(served: tuple[str, urllib3.PoolManager]) -> None:
    base, pool = served
    body = orjson.dumps(VALID)
    closing = pool.request("POST", f"{base}/validate", body=body, headers={"Connection": "close"})
    assert closing.headers.get("Connection") == "close"  # and the server hangs up: a read-to-EOF client returns
    kept = pool.request("POST", f"{base}/validate", body=body, headers={"Content-Type": "application/json"})
    assert "Connection" not in kept.headers
    assert orjson.loads(kept.data)["response"]["allowed"] is True


def test_after_a_rotation_open_connections_answer_once_more_then_close(served: tuple[str, urllib3.PoolManager]) -> None:
    """Rotation never cuts a connection a client may be sending on: the next answer says `Connection: close`."""
    base, pool = served
    body, headers = orjson.dumps(VALID), {"Content-Type": "application/json"}
    assert "Connection" not in pool.request("POST", f"{base}/validate", body=body, headers=headers).headers
    server = SERVERS[base]
    server.retire_connections()  # what the certificate watcher calls on a new pair
    retired = pool.request("POST", f"{base}/validate", body=body, headers=headers)
    assert orjson.loads(retired.data)["response"]["allowed"] is True
    assert retired.headers.get("Connection") == "close"
    fresh = pool.request("POST", f"{base}/validate", body=body, headers=headers)  # a new connection: kept again
    assert "Connection" not in fresh.headers


# ------------------------------------------------------------------------------------- JSON patches


def _canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


@settings(max_examples=300)
@given(old=json_values, new=json_values)
def test_json_patch_turns_any_document_into_any_other(old: Any, new: Any) -> None:
    operations = json_patch({"root": old}, {"root": new})
    assert _canonical(jsonpatch.apply_patch({"root": old}, operations)) == _canonical({"root": new})


@given(document=json_values)
def test_json_patch_of_equal_documents_is_empty(document: Any) -> None:
    assert json_patch({"root": document}, copy.deepcopy({"root": document})) == []


@given(shared=json_values, old=json_values, new=json_values)
def test_a_subtree_shared_with_the_old_document_gives_no_operation(shared: Any, old: Any, new: Any) -> None:
    # A webhook that copies only the way to what it changes shares the rest with the request's object.
    before, after = {"kept": shared, "changed": old}, {"kept": shared, "changed": new}
    operations = json_patch(before, after)
    assert not any(op["path"].startswith("/kept") for op in operations)
    assert operations == json_patch(before, copy.deepcopy(after))


@given(prefix=st.lists(json_values, max_size=4), appended=st.lists(json_values, min_size=1, max_size=4))
def test_items_appended_to_a_list_are_one_add_each(prefix: list[Any], appended: list[Any]) -> None:
    old, new = {"root": prefix}, {"root": [*copy.deepcopy(prefix), *appended]}
    operations = json_patch(old, new)
    assert operations == [
        {"op": "add", "path": f"/root/{len(prefix) + i}", "value": value} for i, value in enumerate(appended)
    ]
    assert _canonical(jsonpatch.apply_patch(old, operations)) == _canonical(new)


def test_json_patch_is_minimal_where_a_webhook_changes_little() -> None:
    pod = {
        "metadata": {"name": "web", "labels": {"a/b": "1"}},
        "spec": {"containers": [{"name": "app", "image": "x"}, {"name": "log", "image": "y"}]},
    }
    mutated = orjson.loads(orjson.dumps(pod))
    mutated["metadata"]["labels"]["team"] = "platform"
    mutated["spec"]["containers"][1]["resources"] = {"requests": {"cpu": "287m"}}
    mutated["spec"]["containers"].append({"name": "sidecar", "image": "z"})
    assert json_patch(pod, mutated) == [
        {"op": "add", "path": "/metadata/labels/team", "value": "platform"},
        {"op": "add", "path": "/spec/containers/1/resources", "value": {"requests": {"cpu": "287m"}}},
        {"op": "add", "path": "/spec/containers/2", "value": {"name": "sidecar", "image": "z"}},
    ]


def test_json_patch_tells_true_from_one_and_escapes_keys() -> None:
    assert json_patch({"x": [1, 0.0]}, {"x": [True, -0.0]}) == [
        {"op": "replace", "path": "/x/0", "value": True},
        {"op": "replace", "path": "/x/1", "value": -0.0},
    ]
    assert json_patch({"a~b/c": 1}, {"a~b/c": 2}) == [{"op": "replace", "path": "/a~0b~1c", "value": 2}]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("namespace", ["../kube-system"], "request.namespace must be a string, got list"),
        ("name", {"a": 1}, "request.name must be a string, got dict"),
        ("operation", 1, "request.operation must be a string, got int"),
        ("uid", 42, "request.uid must be a string, got int"),
        ("subResource", True, "request.subResource must be a string, got bool"),
        ("kind", "Pod", "request.kind must be a JSON object, got str"),
        ("userInfo", [], "request.userInfo must be a JSON object, got list"),
        ("dryRun", "false", "request.dryRun must be a boolean, got str"),
    ],
)
def test_request_fields_of_the_wrong_type_are_refused_by_name(field: str, value: Any, expected: str) -> None:
    # Found by tests/unit/webhook/test_fuzz_reviews.py: a list sent as the namespace reached a URL path as its repr.
    review = {**VALID, "request": {**VALID["request"], field: value}}  # type: ignore[dict-item]
    with pytest.raises(ReviewError) as refused:
        decode_review(orjson.dumps(review))
    assert (str(refused.value), refused.value.code) == (expected, 400)


def test_null_request_fields_count_as_absent() -> None:
    nulls = dict.fromkeys(("name", "namespace", "subResource", "kind", "userInfo", "options", "dryRun", "object"))
    _, request = decode_review(orjson.dumps({**VALID, "request": {**VALID["request"], **nulls}}))  # type: ignore[dict-item]
    assert (request.name, request.namespace, request.kind, request.dry_run, request.object) == ("", "", {}, False, None)
