"""The resize lane's controller pieces: the profile predicate, its registration, the server version read once."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.controllers.resize import NAME, profile_predicate
from ballast.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from tests.unit.controllers.resize.conftest import Harness


def _profile(generation: int, meets: bool | None) -> dict[str, Any]:
    status = {} if meets is None else {"meetsThreshold": meets}
    return {"metadata": {"name": "p", "generation": generation}, "status": status}


@pytest.mark.parametrize(
    ("old", "new", "passes"),
    [
        (_profile(1, False), _profile(1, True), True),
        (_profile(1, True), _profile(1, False), True),
        (_profile(1, None), _profile(1, True), True),
        (_profile(1, True), _profile(2, True), True),
        (_profile(1, True), _profile(1, True), False),
        (_profile(1, None), _profile(1, False), False),
    ],
)
def test_the_predicate_passes_generation_changes_and_meets_threshold_flips(
    old: dict[str, Any], new: dict[str, Any], passes: bool
) -> None:
    assert profile_predicate().update(UpdateEvent(old, new)) is passes


def test_the_predicate_passes_create_delete_and_generic() -> None:
    predicate, profile = profile_predicate(), _profile(1, False)
    assert predicate.create(CreateEvent(profile))
    assert predicate.delete(DeleteEvent(profile))
    assert predicate.generic(GenericEvent(profile))


def test_setup_registers_the_resourceadjuster_controller(harness: Harness) -> None:
    assert harness.controller.name == NAME == "resourceadjuster"
    assert NAME in harness.manager.controller_names


def test_a_failed_version_read_is_retried_on_the_next_reconcile() -> None:
    harness = Harness()
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("apiserver unreachable")
        return "v1.37.0"

    try:
        reconciler: Any = harness.controller.reconciler
        reconciler._read_version = flaky
        with pytest.raises(ConnectionError):
            reconciler.server_version()
        assert reconciler.server_version() == ("v1.37.0", True)
        assert reconciler.server_version() == ("v1.37.0", True)
        assert len(calls) == 2
    finally:
        harness.close()
