"""Typed API errors: what the API server said, as exceptions reconcilers can catch (`NotFoundError`, …).

Mirrors k8s.io/apimachinery's `errors.IsNotFound` family: the class follows the HTTP status and the Status
`reason`, and the message carries the verb, the path and the server's own words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson


class APIStatusError(Exception):
    """The API server answered with an error status.

    Attributes: `status` (HTTP code), `reason` (Status.reason, e.g. "NotFound"), `message` (Status.message),
    `details` (Status.details), `method`, `path`, `retry_after` (seconds from a Retry-After header, if any).
    """

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        *,
        method: str = "",
        path: str = "",
        details: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        where = f"{method} {path}: " if method else ""
        super().__init__(f"{where}{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.method = method
        self.path = path
        self.details = dict(details or {})
        self.retry_after = retry_after


class BadRequestError(APIStatusError):
    """400: the request was malformed (bad selector, bad patch, …)."""


class UnauthorizedError(APIStatusError):
    """401: the credentials were not accepted."""


class ForbiddenError(APIStatusError):
    """403: RBAC (or an admission webhook) refused the request."""


class NotFoundError(APIStatusError):
    """404: the object (or the resource type) does not exist."""


class MethodNotAllowedError(APIStatusError):
    """405: the resource does not support this verb."""


class ConflictError(APIStatusError):
    """409 Conflict: the object changed since it was read (stale resourceVersion); re-read and retry."""


class AlreadyExistsError(APIStatusError):
    """409 AlreadyExists: an object with that name exists."""


class GoneError(APIStatusError):
    """410: the requested resourceVersion is too old (compacted); relist."""


class UnprocessableEntityError(APIStatusError):
    """422 Invalid: validation failed; `details.causes` names the fields."""


class TooManyRequestsError(APIStatusError):
    """429: API Priority and Fairness throttled the request; honour `retry_after`."""


class InternalServerError(APIStatusError):
    """5xx: the server failed; idempotent requests are retried."""


class ServerTimeoutError(APIStatusError):
    """504 (or Status reason Timeout / ServerTimeout): the server gave up; retry."""


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    410: GoneError,
    422: UnprocessableEntityError,
    429: TooManyRequestsError,
    504: ServerTimeoutError,
}


def error_from_response(
    status: int, body: bytes, *, method: str = "", path: str = "", retry_after: float | None = None
) -> APIStatusError:
    """Build the typed error for an error response (`body` is a Status object, or any text)."""
    reason, message = "", body.decode("utf-8", "replace").strip()
    details: dict[str, Any] = {}
    try:
        decoded = orjson.loads(body)
        if isinstance(decoded, dict):
            reason = str(decoded.get("reason", ""))
            message = str(decoded.get("message", message))
            details = decoded.get("details") or {}
    except orjson.JSONDecodeError:
        pass
    if status == 409:
        cls: type[APIStatusError] = AlreadyExistsError if reason == "AlreadyExists" else ConflictError
    elif reason == "Expired":
        cls = GoneError
    elif reason in ("Timeout", "ServerTimeout"):
        cls = ServerTimeoutError
    elif status >= 500 and status != 504:
        cls = InternalServerError
    else:
        cls = _BY_STATUS.get(status, APIStatusError)
    return cls(
        status, reason or _default_reason(status), message or "(empty response)",
        method=method, path=path, details=details, retry_after=retry_after,
    )  # fmt: skip


STALE_UPDATE_HINT = (
    "the object you passed is unchanged by update(); use the returned object, or re-read it, and update that"
)


def stale_update_conflict(error: APIStatusError, resource_version: str) -> ConflictError:
    """The ConflictError of an update whose argument carried a stale resourceVersion, with what to do: Go's
    `client.Update` refreshes its argument, so code ported from Go updates the same object twice; here a write
    leaves its argument unchanged and returns the stored object."""
    message = f"{error.message} (resourceVersion {resource_version} is stale: {STALE_UPDATE_HINT})"
    return ConflictError(
        error.status, error.reason, message,
        method=error.method, path=error.path, details=error.details, retry_after=error.retry_after,
    )  # fmt: skip


def _default_reason(status: int) -> str:
    return {
        400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
        409: "Conflict", 410: "Gone", 422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
        503: "ServiceUnavailable", 504: "Timeout",
    }.get(status, "Unknown")  # fmt: skip


def is_not_found(error: BaseException) -> bool:
    return isinstance(error, NotFoundError)


def is_conflict(error: BaseException) -> bool:
    return isinstance(error, ConflictError)


def is_already_exists(error: BaseException) -> bool:
    return isinstance(error, AlreadyExistsError)


def is_gone(error: BaseException) -> bool:
    return isinstance(error, GoneError)


REQUEST_FAULTS = (400, 422)
"""Answers that say the caller's request was malformed: the caller's own fault, whose traceback shows the call."""


def said_in_full(error: BaseException) -> bool:
    """Whether the message says all there is to `error`: what the API server answered, or that it did not answer
    in time. A request the server found malformed (400, 422) and any other exception are the caller's own failure,
    logged with their traceback."""
    if isinstance(error, APIStatusError):
        return error.status not in REQUEST_FAULTS
    return isinstance(error, ConnectionError | TimeoutError)


class DeadlineExceededError(TimeoutError):
    """The caller's cooperative deadline (e.g. a controller's `reconcile_timeout`) passed before the call."""


class CanceledError(Exception):
    """The caller's work was cancelled before the call was sent (Go's `context.Canceled`): for leader-only work,
    leadership was lost, and nothing more may be written on its behalf."""


__all__ = [
    "REQUEST_FAULTS",
    "STALE_UPDATE_HINT",
    "APIStatusError",
    "AlreadyExistsError",
    "BadRequestError",
    "CanceledError",
    "ConflictError",
    "DeadlineExceededError",
    "ForbiddenError",
    "GoneError",
    "InternalServerError",
    "MethodNotAllowedError",
    "NotFoundError",
    "ServerTimeoutError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "UnprocessableEntityError",
    "error_from_response",
    "is_already_exists",
    "is_conflict",
    "is_gone",
    "is_not_found",
    "said_in_full",
    "stale_update_conflict",
]
