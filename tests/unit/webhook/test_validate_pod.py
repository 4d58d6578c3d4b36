"""`/validate-v1-pod`: a pod UPDATE that sets an invalid mode is denied with the Go operator's exact message."""

from __future__ import annotations

import pytest

from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.webhook.pods import PodModeValidator, PodMutator

from .support import JSON, MemoryReader, pod, review


def update(new: JSON | None, old: JSON | None) -> tuple[bool, int, str]:
    response = PodModeValidator(KillSwitchState())(review(new, operation="UPDATE", old=old))
    return response.allowed, response.code, response.message


@pytest.mark.parametrize("mode", ["bogus", "Resize", "measure,apply"])
def test_setting_an_invalid_mode_is_denied_with_the_exact_message(mode: str) -> None:
    assert update(pod(mode), pod("measure")) == (
        False,
        403,
        f'invalid Ballast ballast.tightlinesoftware.com/mode label "{mode}": must be one of measure, apply, resize',
    )


def test_adding_an_invalid_mode_to_an_unenrolled_pod_is_denied() -> None:
    allowed, code, _ = update(pod("nope"), pod(None))
    assert (allowed, code) == (False, 403)


@pytest.mark.parametrize(("new", "old"), [("apply", "measure"), ("resize", "bogus"), (None, "apply"), (None, None)])
def test_a_valid_or_absent_mode_is_allowed(new: str | None, old: str | None) -> None:
    assert update(pod(new), pod(old)) == (True, 200, "")


def test_an_invalid_mode_left_as_it_was_is_allowed() -> None:
    """A pod admitted with a bad value (kill switch on, or before the webhook) can still be edited."""
    assert update(pod("bogus", annotations={"edited": "yes"}), pod("bogus")) == (True, 200, "mode label unchanged")


def test_the_kill_switch_allows_everything() -> None:
    switch = KillSwitchState()
    switch.update(configmap=True, suspended=False)
    response = PodModeValidator(switch)(review(pod("bogus"), operation="UPDATE", old=pod("measure")))
    assert (response.allowed, response.message) == (True, "kill switch active")


@pytest.mark.parametrize(
    ("new", "old", "fragment"),
    [
        (None, pod("measure"), "the request has no object"),
        ({"metadata": {"labels": ["a"]}}, pod("measure"), "cannot decode the object"),
        (pod("bogus"), {"metadata": "x"}, "cannot decode the oldObject"),
    ],
)
def test_an_undecodable_pod_is_errored_400(new: JSON | None, old: JSON | None, fragment: str) -> None:
    allowed, code, message = update(new, old)
    assert (allowed, code) == (False, 400)
    assert fragment in message


@pytest.mark.parametrize(
    "obj",
    [
        {"metadata": {}, "spec": {"containers": {"name": "app"}}},
        {"metadata": {}, "spec": {"containers": [{"name": "app", "resources": []}]}},
        {"metadata": {}, "spec": {"initContainers": "app"}},
    ],
)
def test_what_the_mutating_handler_cannot_decode_the_validating_one_refuses_too(obj: JSON) -> None:
    """Both pod handlers decode the pod the same way: a mistyped spec is a 400 from each, naming the field."""
    mutated = PodMutator(MemoryReader(), kill_switch=KillSwitchState(), options=OperatorOptions())(review(obj))
    validated = PodModeValidator(KillSwitchState())(review(obj, operation="UPDATE", old=pod("measure")))
    assert (mutated.allowed, mutated.code) == (False, 400)
    assert (validated.allowed, validated.code, validated.message) == (False, 400, mutated.message)
