"""The operator's namespace, and those of `--leave-alone-namespaces`, are left alone by both admission handlers
even when a webhook configuration sends them (docs/design.md, difference 60)."""

from __future__ import annotations

from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.webhook.pods import LEFT_ALONE, PodMutator
from ballast.webhook.scheduling import LEFT_ALONE as SCHEDULING_LEFT_ALONE
from ballast.webhook.scheduling import SchedulingMutator

from .support import NAMESPACE, MemoryReader, pod, review


def test_options_leave_alone_the_operator_namespace_and_the_named_ones() -> None:
    options = OperatorOptions(operator_namespace="ops", leave_alone=("tenant-admin",))
    assert options.left_alone == frozenset({"ops", "tenant-admin"})
    assert options.leaves_alone("ops")
    assert options.leaves_alone("tenant-admin")
    assert not options.leaves_alone(NAMESPACE)
    assert not options.leaves_alone("")


def test_a_pod_asking_for_apply_in_a_namespace_left_alone_is_admitted_untouched_and_nothing_is_read() -> None:
    reader = MemoryReader()
    options = OperatorOptions(operator_namespace=NAMESPACE)
    response = PodMutator(reader, kill_switch=KillSwitchState(), options=options)(review(pod("apply")))
    assert (response.allowed, response.message, response.patch) == (True, LEFT_ALONE, None)
    assert reader.calls == []


def test_even_an_invalid_mode_is_not_judged_in_a_namespace_left_alone() -> None:
    options = OperatorOptions(operator_namespace="ops", leave_alone=(NAMESPACE,))
    response = PodMutator(MemoryReader(), kill_switch=KillSwitchState(), options=options)(review(pod("Apply")))
    assert (response.allowed, response.message) == (True, LEFT_ALONE)


def test_the_scheduling_webhook_leaves_the_same_namespaces_alone() -> None:
    reader = MemoryReader()
    mutator = SchedulingMutator(reader, left_alone=OperatorOptions(operator_namespace=NAMESPACE).left_alone)
    response = mutator(review(pod("apply")))
    assert (response.allowed, response.message, response.patch) == (True, SCHEDULING_LEFT_ALONE, None)
    assert reader.calls == []
