"""A BallastConfig or MetricsSource stored before validation existed, on the real API server (docs/design.md,
difference 26): it gets `Valid=False` naming the field and a Warning event, and an invalid BallastConfig is not
used — no pod is enrolled or re-keyed (the issue: a bad identity key merged every pod into one profile and orphaned
the real ones) and no orphaned profile is deleted — until it is fixed, when the lanes resume."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from ballast.api.ballast.v1 import BallastConfig, MetricsSource
from ballast.internal.enrollment import PROFILE_REF
from ballast.runtime import Client
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.integration.lax_schema import store_invalid

from .conftest import IDENTITY, Operator, ballast_config, pod

GROUP_PATH = "/apis/ballast.tightlinesoftware.com/v1"
APP = f"ledger{uuid.uuid4().hex[:6]}"
"""An app name of this module alone: profiles are cluster-wide and outlive the tests that made them."""
LABELS = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": "api"}
PROFILE = f"{APP}--api--default-a9696153"
NOT_A_LABEL = "not a label!!"
QUIET = 3.0
"""Seconds the lanes are given to do what they must not do."""


@pytest.fixture
def namespace(new_namespace: Callable[[str], str]) -> str:
    return new_namespace("cfg")


def _valid(envtest: Environment, plural: str, name: str) -> dict[str, Any] | None:
    obj = envtest.rest.get(f"{GROUP_PATH}/{plural}/{name}")
    found: dict[str, Any] | None = {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}.get("Valid")
    return found


def _valid_is(envtest: Environment, plural: str, name: str, status: str) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        condition = _valid(envtest, plural, name)
        return condition if condition is not None and condition["status"] == status else None

    return poll_until(reached, timeout=20, what=f"{plural}/{name} Valid={status}")


def _events(envtest: Environment, name: str, reason: str) -> list[dict[str, Any]]:
    found = envtest.rest.get(
        "/api/v1/namespaces/default/events", params={"fieldSelector": f"involvedObject.name={name}"}
    )
    return [event for event in found["items"] if event["reason"] == reason]


def _profile_ref(client: Client, namespace: str, name: str) -> str | None:
    annotations = client.get("v1/Pod", name, namespace)["metadata"].get("annotations") or {}
    ref: str | None = annotations.get(PROFILE_REF)
    return ref


def _profiles(envtest: Environment) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in envtest.rest.get(f"{GROUP_PATH}/workloadprofiles")["items"]}


def _active(envtest: Environment, name: str) -> int | None:
    profile = _profiles(envtest).get(name)
    return profile.get("status", {}).get("activeWorkloads") if profile else None


def test_a_stored_config_with_a_bad_identity_key_re_keys_nothing_until_it_is_fixed(
    envtest: Environment, operator: Operator, operator_client: Client, apply_config: Any, default_policy: str,
    namespace: str,
) -> None:  # fmt: skip
    apply_config(ballast_config())
    for index in range(2):
        operator_client.create(pod(f"ledger-{index}", namespace, LABELS))
    poll_until(lambda: _active(envtest, PROFILE) == 2, timeout=20, what="one profile counting both pods")

    store_invalid(envtest, BallastConfig, "ballast", {"identityLabels": [NOT_A_LABEL, IDENTITY[1]]})

    condition = _valid_is(envtest, "ballastconfigs", "ballast", "False")
    assert condition["reason"] == "InvalidConfig"
    assert condition["message"].startswith(f'spec.identityLabels[0]: invalid label key "{NOT_A_LABEL}": ')
    (event,) = poll_until(lambda: _events(envtest, "ballast", "InvalidConfig"), timeout=20, what="the event")
    assert (event["type"], event["involvedObject"]["kind"]) == ("Warning", "BallastConfig")
    assert event["message"].startswith(f'BallastConfig "ballast" is invalid: {condition["message"]}. Not used: ')

    operator_client.create(pod("ledger-2", namespace, LABELS))
    time.sleep(QUIET)
    assert [_profile_ref(operator_client, namespace, f"ledger-{i}") for i in range(3)] == [PROFILE, PROFILE, None]
    assert [name for name in _profiles(envtest) if APP in name or name.startswith("nonotalabel")] == [PROFILE]
    assert _active(envtest, PROFILE) == 2  # not orphaned

    apply_config(ballast_config())  # fixed: every pod is enrolled again, under the same profile
    assert _valid_is(envtest, "ballastconfigs", "ballast", "True")["reason"] == "Valid"
    poll_until(lambda: _active(envtest, PROFILE) == 3, timeout=20, what="the held-back pod enrolled")
    assert _profile_ref(operator_client, namespace, "ledger-2") == PROFILE


def test_an_orphaned_profile_is_kept_while_the_config_is_invalid(
    envtest: Environment, operator: Operator, operator_client: Client, apply_config: Any, default_policy: str,
    namespace: str,
) -> None:  # fmt: skip
    apply_config(ballast_config(orphan_ttl="1h"))
    labels = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": "job"}
    name = f"{APP}--job--default-a9696153"
    operator_client.create(pod("once", namespace, labels))
    poll_until(lambda: _active(envtest, name) == 1, timeout=20, what="the profile")
    store_invalid(envtest, BallastConfig, "ballast", {"identityLabels": IDENTITY, "orphanTTL": "banana"})
    condition = _valid_is(envtest, "ballastconfigs", "ballast", "False")
    assert condition["message"] == (
        'spec.orphanTTL: invalid duration "banana": must be a Go duration such as "168h", "15m" or "1h30m"'
    )

    operator_client.delete(pod("once", namespace, labels))
    poll_until(lambda: _active(envtest, name) == 0, timeout=20, what="the profile orphaned")
    time.sleep(QUIET)
    assert name in _profiles(envtest)

    apply_config(ballast_config(orphan_ttl="1s"))
    poll_until(lambda: name not in _profiles(envtest), timeout=20, what="the orphan deleted after the fixed TTL")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "kubernetesMetrics", "config": {"pollInterval": "banana"}},
         'spec.config.pollInterval: invalid duration "banana": must be a Go duration such as "60s", "15m" or "1h30m"'),
        ({"type": "kubernetesMetrics", "config": {"pollInterval": "-5s"}},
         'spec.config.pollInterval: invalid duration "-5s": must be longer than 0, such as "60s"'),
        ({"type": "bogus"}, 'spec.type: unknown type "bogus": must be one of kubernetesMetrics, kubeletSummary'),
    ],
    ids=["banana", "negative", "bogus-type"],
)  # fmt: skip
def test_a_stored_invalid_metrics_source_gets_valid_false_and_an_event(
    envtest: Environment, operator: Operator, spec: dict[str, Any], message: str
) -> None:
    name = f"metrics-{uuid.uuid4().hex[:6]}"
    try:
        store_invalid(envtest, MetricsSource, name, spec)

        condition = _valid_is(envtest, "metricssources", name, "False")
        assert (condition["reason"], condition["message"]) == ("InvalidSource", message)
        (event,) = poll_until(lambda: _events(envtest, name, "InvalidSource"), timeout=20, what="the event")
        assert event["message"] == (
            f'MetricsSource "{name}" is invalid: {message}. Not polled: the profiles it feeds are not Ready until it '
            "is fixed."
        )

        envtest.rest.apply(f"{GROUP_PATH}/metricssources/{name}", {
            "apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "MetricsSource", "metadata": {"name": name},
            "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "5s"}},
        }, field_manager="before-validation")  # fmt: skip
        assert _valid_is(envtest, "metricssources", name, "True")["observedGeneration"] == 2
    finally:
        with contextlib.suppress(APIError):
            envtest.rest.delete(f"{GROUP_PATH}/metricssources/{name}")
