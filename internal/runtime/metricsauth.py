"""Who may scrape the metrics: each request's bearer token is authenticated with a TokenReview and the user it names
is authorised with a SubjectAccessReview (`get` on the non-resource URL `/metrics`), as controller-runtime's
`filters.WithAuthenticationAndAuthorization` does.

    manager = Manager(config, metrics_bind_address=":8443", metrics_secure=True)   # uses this filter

- No token, or one the API server does not accept: 401 `Unauthorized`.
- A user RBAC does not let `get` the path: 403 `Authorization denied for user <name>`.
- Otherwise the metrics. A review the API server cannot answer is a 500 (logged), never a 200.
- Decisions are cached as controller-runtime's delegating authenticator and authorizer cache them: a token's
  review for 1 minute, an allow for 5 minutes, a deny for 30 seconds — a scrape every 15 s costs the API server a
  review a minute, not one a scrape. Tokens are kept only as their SHA-256.

The operator's service account needs `create` on `authentication.k8s.io` tokenreviews and
`authorization.k8s.io` subjectaccessreviews (`RBAC_RULES`); a scraper needs `get` on `/metrics`
(`metrics_reader_rules()`).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cachetools import TTLCache

from .apierrors import APIStatusError
from .clock import Clock, RealClock
from .interfaces import Client
from .log import get_logger

AUTHENTICATION_TTL = 60.0
ALLOW_TTL = 300.0
DENY_TTL = 30.0
CACHE_SIZE = 1024

RBAC_RULES: tuple[Mapping[str, Any], ...] = (
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
)
"""What the serving process's service account needs for this filter (kubebuilder's `metrics_auth_role`)."""

_log = get_logger("ballast.runtime.metricsauth")


def metrics_reader_rules(path: str = "/metrics") -> list[dict[str, Any]]:
    """The rule a scraper's ClusterRole needs (kubebuilder's `metrics_reader_role`)."""
    return [{"nonResourceURLs": [path], "verbs": ["get"]}]


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer to one request: `status` 200 lets it through, else it is sent with `message` as the body."""

    status: int
    message: str = ""

    @property
    def allowed(self) -> bool:
        return self.status == 200


@dataclass(frozen=True, slots=True)
class User:
    """Who a token belongs to, as the TokenReview reports it."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


MetricsFilter = Callable[[str | None, str, str], Decision]
"""A filter: (the Authorization header or None, the request path, the HTTP method) → a Decision."""

UNAUTHORIZED = Decision(401, "Unauthorized")


def allow_all(authorization: str | None, path: str, method: str) -> Decision:
    """The filter that lets every request through (metrics served without authentication)."""
    return Decision(200)


class AuthenticationAndAuthorization:
    """The filter (a `MetricsFilter`): TokenReview, then SubjectAccessReview, each answer cached; thread-safe.

    `client` writes the reviews (a `Client`; the manager's `api_reader`); `clock` times the caches.
    """

    def __init__(
        self,
        client: Client,
        *,
        authentication_ttl: float = AUTHENTICATION_TTL,
        allow_ttl: float = ALLOW_TTL,
        deny_ttl: float = DENY_TTL,
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        timer = (clock or RealClock()).monotonic
        self._users: TTLCache[bytes, User | None] = TTLCache(CACHE_SIZE, authentication_ttl, timer=timer)
        self._allowed: TTLCache[tuple[Any, ...], bool] = TTLCache(CACHE_SIZE, allow_ttl, timer=timer)
        self._denied: TTLCache[tuple[Any, ...], bool] = TTLCache(CACHE_SIZE, deny_ttl, timer=timer)
        self._lock = threading.Lock()
        self.reviews = 0  # TokenReviews and SubjectAccessReviews sent (what the caches save)

    def __call__(self, authorization: str | None, path: str, method: str) -> Decision:
        token = _bearer_token(authorization)
        if token is None:
            return UNAUTHORIZED
        try:
            user = self._authenticate(token)
            if user is None:
                return UNAUTHORIZED
            if self._authorize(user, path, method.lower()):
                return Decision(200)
        except APIStatusError as error:
            _log.error("cannot review a metrics request: %s", error, extra={"path": path})
            return Decision(500, "Internal Server Error: the API server could not review the request")
        return Decision(403, f"Authorization denied for user {user.name}")

    def _authenticate(self, token: str) -> User | None:
        key = hashlib.sha256(token.encode()).digest()
        with self._lock:
            if key in self._users:
                return self._users[key]
        token_review: dict[str, Any] = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        }
        review = self.client.create(token_review)
        self.reviews += 1
        status = review.get("status") or {}
        user = _user(status.get("user") or {}) if status.get("authenticated") else None
        with self._lock:
            self._users[key] = user
        return user

    def _authorize(self, user: User, path: str, verb: str) -> bool:
        key = (user, path, verb)
        with self._lock:
            if key in self._allowed:
                return True
            if key in self._denied:
                return False
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {key: list(values) for key, values in user.extra}
        access_review: dict[str, Any] = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        review = self.client.create(access_review)
        self.reviews += 1
        allowed = bool((review.get("status") or {}).get("allowed"))
        with self._lock:
            (self._allowed if allowed else self._denied)[key] = True
        return allowed


def _bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _user(user: Mapping[str, Any]) -> User | None:
    name = str(user.get("username") or "")
    if not name:
        return None
    extra = user.get("extra") or {}
    return User(
        name=name,
        uid=str(user.get("uid") or ""),
        groups=tuple(str(group) for group in user.get("groups") or ()),
        extra=tuple(sorted((str(key), tuple(str(v) for v in values)) for key, values in extra.items())),
    )


__all__ = [
    "ALLOW_TTL",
    "AUTHENTICATION_TTL",
    "DENY_TTL",
    "RBAC_RULES",
    "UNAUTHORIZED",
    "AuthenticationAndAuthorization",
    "Decision",
    "MetricsFilter",
    "User",
    "allow_all",
    "metrics_reader_rules",
]
