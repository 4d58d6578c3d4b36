"""The metrics filter's decisions and caches, on a stub API server answering reviews (the real one:
tests/integration/internal/runtime/test_metrics_secure.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ballast.runtime import APIStatusError, FakeClock, metricsserver
from ballast.runtime.certwatcher import CertificateError
from ballast.runtime.metricsauth import (
    ALLOW_TTL,
    AUTHENTICATION_TTL,
    DENY_TTL,
    AuthenticationAndAuthorization,
    Decision,
    allow_all,
)
from ballast.runtime.metricsserver import MetricsServer, MetricsServerOptions


class Reviews:
    """Answers TokenReviews from `tokens` (token → username) and SubjectAccessReviews from `allowed` users."""

    def __init__(self, tokens: dict[str, str], allowed: set[str]) -> None:
        self.tokens = tokens
        self.allowed = allowed
        self.sent: list[dict[str, Any]] = []
        self.failing = False

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(obj)
        if self.failing:
            raise APIStatusError(503, "ServiceUnavailable", "the server is shutting down")
        if obj["kind"] == "TokenReview":
            user = self.tokens.get(obj["spec"]["token"])
            status: dict[str, Any] = {"authenticated": user is not None}
            if user:
                status["user"] = {"username": user, "uid": f"uid-{user}", "groups": ["system:authenticated"]}
            return {**obj, "status": status}
        return {**obj, "status": {"allowed": obj["spec"]["user"] in self.allowed}}


@pytest.fixture
def reviews() -> Reviews:
    return Reviews({"good": "scraper", "other": "stranger"}, {"scraper"})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def decide(reviews: Reviews, clock: FakeClock) -> AuthenticationAndAuthorization:
    return AuthenticationAndAuthorization(reviews, clock=clock)  # type: ignore[arg-type]


@pytest.mark.parametrize("header", [None, "", "Basic Z29vZA==", "Bearer", "Bearer   "])
def test_no_bearer_token_is_401_without_asking_the_api_server(
    decide: AuthenticationAndAuthorization, reviews: Reviews, header: str | None
) -> None:
    assert decide(header, "/metrics", "GET") == Decision(401, "Unauthorized")
    assert reviews.sent == []


def test_an_unknown_token_is_401(decide: AuthenticationAndAuthorization) -> None:
    assert decide("Bearer nope", "/metrics", "GET").status == 401


def test_a_user_without_the_rule_is_403_naming_the_user(decide: AuthenticationAndAuthorization) -> None:
    assert decide("Bearer other", "/metrics", "GET") == Decision(403, "Authorization denied for user stranger")


def test_an_allowed_user_passes_and_the_review_names_the_path_and_verb(
    decide: AuthenticationAndAuthorization, reviews: Reviews
) -> None:
    assert decide("bearer good", "/metrics", "GET").allowed
    access = reviews.sent[-1]["spec"]
    assert access["user"] == "scraper"
    assert access["uid"] == "uid-scraper"
    assert access["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}


def test_answers_are_cached_for_controller_runtimes_times(
    decide: AuthenticationAndAuthorization, reviews: Reviews, clock: FakeClock
) -> None:
    decide("Bearer good", "/metrics", "GET")
    decide("Bearer other", "/metrics", "GET")
    assert decide.reviews == 4
    decide("Bearer good", "/metrics", "GET")
    decide("Bearer other", "/metrics", "GET")
    assert decide.reviews == 4  # both tokens and both decisions cached
    clock.advance(DENY_TTL + 1)
    decide("Bearer other", "/metrics", "GET")
    assert decide.reviews == 5  # the deny expired, the token's review did not
    clock.advance(AUTHENTICATION_TTL)
    decide("Bearer good", "/metrics", "GET")
    assert decide.reviews == 6  # the token is reviewed again; the allow (5 minutes) still holds
    assert ALLOW_TTL > AUTHENTICATION_TTL + DENY_TTL + 1


def test_a_revoked_permission_is_denied_once_the_allow_expires(
    decide: AuthenticationAndAuthorization, reviews: Reviews, clock: FakeClock
) -> None:
    assert decide("Bearer good", "/metrics", "GET").allowed
    reviews.allowed.clear()
    clock.advance(ALLOW_TTL + 1)
    assert decide("Bearer good", "/metrics", "GET").status == 403


def test_a_review_the_api_server_cannot_answer_is_a_500_never_a_200(
    decide: AuthenticationAndAuthorization, reviews: Reviews
) -> None:
    reviews.failing = True
    decision = decide("Bearer good", "/metrics", "GET")
    assert decision.status == 500
    assert "could not review" in decision.message


def test_allow_all_lets_every_request_through() -> None:
    assert allow_all(None, "/metrics", "GET").allowed


def test_a_secure_server_without_a_writable_place_for_its_certificate_names_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # a directory cannot be made under a file, whoever runs the test
    monkeypatch.setattr(metricsserver, "default_cert_dir", lambda: blocked / "k8s-metrics-server" / "serving-certs")
    with pytest.raises(CertificateError, match="--metrics-cert-path"):
        MetricsServer(("127.0.0.1", 0), MetricsServerOptions(secure=True, filter=allow_all))


def test_a_secure_server_without_a_certificate_makes_a_self_signed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metricsserver, "default_cert_dir", lambda: tmp_path / "serving-certs")
    server = MetricsServer(("127.0.0.1", 0), MetricsServerOptions(secure=True, filter=allow_all))
    assert server.cert_watcher is not None
    assert server.cert_watcher.loaded
    assert (tmp_path / "serving-certs" / "tls.crt").is_file()
    server._server.server_close()
