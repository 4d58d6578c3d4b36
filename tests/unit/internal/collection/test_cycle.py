"""A cycle's settings: the MetricsSource pollInterval as written, BallastConfig's retention window."""

from __future__ import annotations

import datetime

import pytest

from ballast.internal.collection import DEFAULT_POLL_INTERVAL, poll_interval_seconds, retention_window


@pytest.mark.parametrize(
    ("written", "seconds"),
    [("300s", 300.0), ("90s", 90.0), ("5m", 300.0), ("15s", 15.0), ("", DEFAULT_POLL_INTERVAL),
     ("soon", DEFAULT_POLL_INTERVAL), ("0s", DEFAULT_POLL_INTERVAL), ("-1m", DEFAULT_POLL_INTERVAL)],
)  # fmt: skip
def test_poll_interval_is_honoured_as_written(written: str, seconds: float) -> None:
    assert poll_interval_seconds(written) == seconds


def test_the_retention_window_is_a_duration_and_none_when_not_positive() -> None:
    assert retention_window("168h") == datetime.timedelta(hours=168)
    assert retention_window("1.5s") == datetime.timedelta(seconds=1.5)
    assert retention_window("0s") is None
    assert retention_window("-1h") is None
    with pytest.raises(ValueError, match="soon"):
        retention_window("soon")
