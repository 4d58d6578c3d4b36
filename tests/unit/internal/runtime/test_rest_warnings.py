"""The API server's `Warning:` headers: the 299 texts parsed (RFC 7234, quoted, several per header value) and
logged once a minute each (the real API server's: the integration test_warnings_and_field_validation.py)."""

from __future__ import annotations

import logging

import pytest
from kubernetes import client as kubernetes_client

from ballast.runtime import RESTConfig
from ballast.runtime.rest import Transport, _Call, warning_texts


@pytest.mark.parametrize(
    ("headers", "texts"),
    [
        (['299 - "unknown field \\"spec.replcias\\""'], ['unknown field "spec.replcias"']),
        (['299 - "a", 299 - "b, with a comma"'], ["a", "b, with a comma"]),
        (['299 - "one"', '299 - "two"'], ["one", "two"]),
        (['199 - "not a 299"', "garbage"], []),
    ],
)
def test_warning_texts(headers: list[str], texts: list[str]) -> None:
    assert warning_texts(headers) == texts


def test_each_text_is_logged_once_a_minute_and_handed_to_the_callback(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[str] = []
    configuration = kubernetes_client.Configuration()
    configuration.host = "https://127.0.0.1:6443"
    transport = Transport(RESTConfig(configuration), on_warning=seen.append)
    call = _Call("POST", "https://127.0.0.1:6443/apis/apps/v1", "/apis/apps/v1", None, {}, stream=False)
    with caplog.at_level(logging.WARNING, "ballast.runtime.rest"):
        for _ in range(3):
            transport._warned(call, ['299 - "deprecated"', '299 - "unknown field \\"x\\""'])
    assert seen == ["deprecated", 'unknown field "x"'] * 3
    logged = [record.getMessage() for record in caplog.records]
    assert logged == ["Warning: deprecated", 'Warning: unknown field "x"']
