from __future__ import annotations

import pytest

from ballast.internal.resize import GUARANTEED, coupled_move, pod_qos


@pytest.mark.parametrize(
    ("current", "recommended_request", "recommended_limit", "resource", "moved"),
    [
        ("1", "500m", None, "cpu", "750m"),
        ("1", "500m", "2", "cpu", "1500m"),  # the larger of request and limit recommendations
        ("1", None, "2", "cpu", "1500m"),
        ("1", "1050m", None, "cpu", None),  # within the threshold: nothing to move
        ("1", None, None, "cpu", None),
        ("1Gi", "256Mi", "512Mi", "memory", "768Mi"),
        ("1Gi", "1000Mi", "960Mi", "memory", None),
        ("0", "250m", None, "cpu", "250m"),
        (1000, 288, None, "cpu", "644m"),
    ],
)
def test_a_guaranteed_container_moves_request_and_limit_to_one_value(
    current: str | int,
    recommended_request: str | int | None,
    recommended_limit: str | int | None,
    resource: str,
    moved: str | None,
) -> None:
    assert coupled_move(current, recommended_request, recommended_limit, 50, 10, resource=resource) == moved


def test_the_coupled_move_keeps_the_pod_guaranteed() -> None:
    value = coupled_move("1", "500m", None, 50, 10, resource="cpu")
    assert value is not None
    both = {"cpu": value, "memory": "256Mi"}
    pod = {"spec": {"containers": [{"name": "c", "resources": {"requests": both, "limits": both}}]}}
    assert pod_qos(pod) == GUARANTEED
