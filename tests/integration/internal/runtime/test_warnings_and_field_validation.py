"""The API server's warnings and field validation, on the real API server: a typo'd field is created with a
`Warning:` header the client logs (fieldValidation Warn, the server's default); a client with
field_validation="Strict" has the write refused naming the field."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.runtime import APIStatusError, RESTConfig
from ballast.runtime.client import APIServerClient
from ballast.runtime.rest import Transport


def _deployment(name: str, namespace: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replcias": 3,  # the typo of issue 31
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "memcached", "image": "memcached:1.6"}]},
            },
        },
    }


@pytest.fixture
def collected(rest_config: RESTConfig) -> Iterator[tuple[APIServerClient, list[str]]]:
    texts: list[str] = []
    client = APIServerClient(Transport(rest_config, on_warning=texts.append), field_owner="warnings-test")
    yield client, texts
    client.close()


def test_an_unknown_field_is_a_logged_warning(
    collected: tuple[APIServerClient, list[str]], envtest_namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    client, texts = collected
    with caplog.at_level(logging.WARNING, "ballast.runtime.rest"):
        created = client.create(_deployment("typo", envtest_namespace))
    assert created["spec"]["replicas"] == 1  # the typo was dropped: the default stands
    assert texts == ['unknown field "spec.replcias"']
    assert 'Warning: unknown field "spec.replcias"' in caplog.text


def test_strict_field_validation_refuses_the_typo(rest_config: RESTConfig, envtest_namespace: str) -> None:
    client = APIServerClient(Transport(rest_config), field_owner="warnings-test", field_validation="Strict")
    try:
        with pytest.raises(APIStatusError, match=r'unknown field \\?"spec\.replcias\\?"'):
            client.create(_deployment("strict", envtest_namespace))
        # a write's own option still wins over the client's default
        client.create(_deployment("ignored", envtest_namespace), field_validation="Ignore")
    finally:
        client.close()


def test_a_wrong_field_validation_is_named(rest_config: RESTConfig) -> None:
    with pytest.raises(ValueError, match="Strict, Warn, Ignore, not 'strict'"):
        APIServerClient(Transport(rest_config), field_validation="strict")  # type: ignore[arg-type]
