"""`ready_condition` with invalid MetricsSources (docs/design.md, difference 26): a resource an invalid source owns
is missing whatever was delivered, the reason is `InvalidSource` and the message names each such source after the
missing resources, so `previously_missing` still reads it."""

from __future__ import annotations

from ballast.api.ballast.v1 import ResourcePolicySpec
from ballast.internal.collection import PolicyView, previously_missing, ready_condition
from ballast.internal.collection.profile_ready import INVALID_SOURCE_REASON, MISSING_SAMPLES_REASON

NOW = "2026-03-01T12:00:00Z"
POLICY = PolicyView.from_spec(
    ResourcePolicySpec.model_validate(
        {
            "metrics": [
                {"resource": "cpu", "source": "metrics"},
                {"resource": "memory", "source": "metrics"},
                {"resource": "ephemeral-storage", "source": "kubelet"},
            ]
        }
    )
)


def test_what_an_invalid_source_owns_is_missing_even_if_delivered_and_the_source_is_named() -> None:
    invalid = {"metrics": 'spec.config.pollInterval: invalid duration "banana": must be …'}
    condition = ready_condition(POLICY, lambda resource: True, None, NOW, invalid_sources=invalid)

    assert (condition["status"], condition["reason"]) == ("False", INVALID_SOURCE_REASON)
    assert condition["message"] == (
        "No samples in the latest collection cycle for: cpu, memory; "
        'MetricsSource "metrics" is invalid: spec.config.pollInterval: invalid duration "banana": must be …'
    )
    assert previously_missing(condition) == frozenset({"cpu", "memory"})


def test_missing_samples_keep_their_reason_when_no_invalid_source_owns_them() -> None:
    invalid = {"unused": "spec.type: unknown type"}
    condition = ready_condition(
        POLICY, lambda resource: resource != "ephemeral-storage", None, NOW, invalid_sources=invalid
    )

    assert (condition["status"], condition["reason"]) == ("False", MISSING_SAMPLES_REASON)
    assert condition["message"] == "No samples in the latest collection cycle for: ephemeral-storage"
    assert ready_condition(POLICY, lambda resource: True, None, NOW, invalid_sources=invalid)["status"] == "True"
