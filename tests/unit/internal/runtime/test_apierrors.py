"""Typed API errors: status and reason → class, and messages that carry the verb, path and server's words."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ballast.runtime import APIStatusError, Client, ConflictError, apierrors
from ballast.runtime.apierrors import error_from_response


def _status(reason: str, message: str = "it failed", **extra: object) -> bytes:
    return orjson.dumps({"kind": "Status", "status": "Failure", "reason": reason, "message": message, **extra})


@pytest.mark.parametrize(
    ("status", "body", "cls", "reason"),
    [
        (400, _status("BadRequest"), apierrors.BadRequestError, "BadRequest"),
        (401, _status("Unauthorized"), apierrors.UnauthorizedError, "Unauthorized"),
        (403, _status("Forbidden"), apierrors.ForbiddenError, "Forbidden"),
        (404, _status("NotFound"), apierrors.NotFoundError, "NotFound"),
        (405, _status("MethodNotAllowed"), apierrors.MethodNotAllowedError, "MethodNotAllowed"),
        (409, _status("Conflict"), apierrors.ConflictError, "Conflict"),
        (409, _status("AlreadyExists"), apierrors.AlreadyExistsError, "AlreadyExists"),
        (410, _status("Gone"), apierrors.GoneError, "Gone"),
        (410, _status("Expired"), apierrors.GoneError, "Expired"),
        (200, _status("Expired"), apierrors.GoneError, "Expired"),  # a watch ERROR event's Status
        (422, _status("Invalid"), apierrors.UnprocessableEntityError, "Invalid"),
        (429, _status("TooManyRequests"), apierrors.TooManyRequestsError, "TooManyRequests"),
        (500, _status("InternalError"), apierrors.InternalServerError, "InternalError"),
        (500, _status("ServerTimeout"), apierrors.ServerTimeoutError, "ServerTimeout"),
        (502, b"bad gateway", apierrors.InternalServerError, "Unknown"),
        (503, b"", apierrors.InternalServerError, "ServiceUnavailable"),
        (504, _status("Timeout"), apierrors.ServerTimeoutError, "Timeout"),
        (504, b"", apierrors.ServerTimeoutError, "Timeout"),
        (418, b"teapot", APIStatusError, "Unknown"),
        (404, b"404 page not found", apierrors.NotFoundError, "NotFound"),
    ],
)
def test_status_and_reason_pick_the_class(status: int, body: bytes, cls: type[APIStatusError], reason: str) -> None:
    error = error_from_response(status, body)
    assert type(error) is cls
    assert error.status == status
    assert error.reason == reason


def test_the_message_names_verb_path_and_the_servers_words() -> None:
    error = error_from_response(
        404,
        _status("NotFound", 'configmaps "x" not found', details={"name": "x", "kind": "configmaps"}),
        method="GET",
        path="/api/v1/namespaces/a/configmaps/x",
        retry_after=2.0,
    )
    assert str(error) == 'GET /api/v1/namespaces/a/configmaps/x: 404 NotFound: configmaps "x" not found'
    assert error.message == 'configmaps "x" not found'
    assert error.method == "GET"
    assert error.path == "/api/v1/namespaces/a/configmaps/x"
    assert error.details == {"name": "x", "kind": "configmaps"}
    assert error.retry_after == 2.0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "(empty response)"),
        (b"  plain text from a proxy \n", "plain text from a proxy"),
        (b'{"reason": "Invalid"}', '{"reason": "Invalid"}'),  # no message: the body itself
        (b"[1, 2]", "[1, 2]"),  # JSON but not a Status
        (b"\xff\xfe", "\ufffd\ufffd"),  # undecodable bytes do not raise
    ],
)
def test_bodies_without_a_status_message(body: bytes, message: str) -> None:
    error = error_from_response(500, body)
    assert error.message == message
    assert str(error) == f"500 {error.reason}: {message}"  # no method: no "VERB path: " prefix
    assert error.details == {}
    assert error.retry_after is None


@pytest.mark.parametrize(
    ("status", "reason", "predicate"),
    [
        (404, "NotFound", apierrors.is_not_found),
        (409, "Conflict", apierrors.is_conflict),
        (409, "AlreadyExists", apierrors.is_already_exists),
        (410, "Expired", apierrors.is_gone),
    ],
)
def test_predicates(status: int, reason: str, predicate: object) -> None:
    assert callable(predicate)
    assert predicate(error_from_response(status, _status(reason)))
    assert not predicate(error_from_response(500, _status("InternalError")))
    assert not predicate(ValueError("not an API error"))


def test_conflict_and_already_exists_are_distinct() -> None:
    assert not apierrors.is_conflict(error_from_response(409, _status("AlreadyExists")))
    assert not apierrors.is_already_exists(error_from_response(409, _status("Conflict")))


def test_every_api_error_is_an_api_status_error_and_deadlines_are_timeouts() -> None:
    for status in (400, 401, 403, 404, 405, 409, 410, 422, 429, 500, 504):
        assert isinstance(error_from_response(status, b""), APIStatusError)
    assert issubclass(apierrors.DeadlineExceededError, TimeoutError)


def test_an_update_of_a_stale_argument_says_to_use_the_returned_object(client: Client) -> None:
    argument: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}}
    created = client.create(argument)
    assert "resourceVersion" not in argument["metadata"]  # writes leave their argument unchanged
    client.update({**created, "data": {"a": "1"}})
    with pytest.raises(ConflictError) as conflict:
        client.update({**created, "data": {"a": "2"}})  # Go's habit: the argument of the last update, reused
    assert conflict.value.reason == "Conflict"
    assert f"resourceVersion {created['metadata']['resourceVersion']} is stale" in conflict.value.message
    assert apierrors.STALE_UPDATE_HINT in str(conflict.value)


def test_a_conflict_without_a_resource_version_in_the_argument_gets_no_hint() -> None:
    plain = error_from_response(409, _status("Conflict", "Precondition failed: uid"), method="DELETE", path="/x")
    assert isinstance(plain, ConflictError)
    assert apierrors.STALE_UPDATE_HINT not in str(plain)
    hinted = apierrors.stale_update_conflict(plain, "7")
    assert (hinted.status, hinted.method, hinted.path) == (409, "DELETE", "/x")
    assert str(hinted).endswith(f"Precondition failed: uid (resourceVersion 7 is stale: {apierrors.STALE_UPDATE_HINT})")


@pytest.mark.parametrize(
    ("error", "in_full"),
    [
        (APIStatusError(500, "InternalError", "etcd leader changed"), True),
        (ConflictError(409, "Conflict", "the object has been modified"), True),
        (APIStatusError(400, "BadRequest", "json: cannot unmarshal string"), False),
        (APIStatusError(422, "Invalid", "spec.replicas: Invalid value: -1"), False),
        (ConnectionRefusedError("connection refused"), True),
        (apierrors.DeadlineExceededError("the deadline passed"), True),
        (KeyError("spec"), False),
    ],
)
def test_said_in_full_is_what_the_server_answered_or_that_it_did_not(error: BaseException, in_full: bool) -> None:
    assert apierrors.said_in_full(error) is in_full
