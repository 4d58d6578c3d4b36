"""Absent, pending or ready: what the scheduling webhook and its lane know of each kupid CRD (difference 61)."""

from __future__ import annotations

from ballast.internal.scheduling import CLUSTER_KIND, NAMESPACED_KIND
from ballast.internal.scheduling.availability import ABSENT, PENDING, READY, SchedulingAvailability


class Informer:
    """A policy informer whose lists complete when the test says so."""

    def __init__(self, *, served: bool = True, lists: int = 1) -> None:
        self.served = served
        self.completed_lists = lists
        self.relists = 0

    def relist(self) -> int:
        self.relists += 1
        return self.completed_lists + 1

    def wait_for_list(self, ticket: int, timeout: float | None = None) -> bool:
        return self.completed_lists >= ticket

    def list_done(self, *, served: bool = True) -> None:
        self.completed_lists += 1
        self.served = served


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _availability(informer: Informer, clock: Clock | None = None) -> SchedulingAvailability:
    return SchedulingAvailability({CLUSTER_KIND: informer, NAMESPACED_KIND: Informer()}, monotonic=clock or Clock())


def test_a_kind_is_pending_until_its_crd_is_known_and_ready_once_listed() -> None:
    informer = Informer()
    availability = _availability(informer)
    assert availability.state(CLUSTER_KIND) == PENDING  # nothing known of the CRD yet
    availability.crd_changed(CLUSTER_KIND, present=True)
    assert availability.state(CLUSTER_KIND) == READY
    assert informer.relists == 0  # present from the start: its first list is the one


def test_a_crd_missing_at_start_is_absent_without_a_reinstall_grace() -> None:
    informer = Informer(served=False)
    availability = _availability(informer)
    availability.crd_changed(CLUSTER_KIND, present=False)
    assert availability.state(CLUSTER_KIND) == ABSENT
    assert not availability.reinstalling(CLUSTER_KIND)
    assert availability.wait_ready(CLUSTER_KIND, 0.0)  # absent is known: nothing to wait for


def test_a_reinstalled_crd_relists_at_once_and_is_pending_until_that_list() -> None:
    informer, clock = Informer(), Clock()
    availability = _availability(informer, clock)
    changed: list[str] = []
    availability.on_change(changed.append)
    availability.crd_changed(CLUSTER_KIND, present=True)
    availability.crd_changed(CLUSTER_KIND, present=False)
    informer.list_done(served=False)  # the 404 list: empty
    assert availability.state(CLUSTER_KIND) == ABSENT
    assert availability.reinstalling(CLUSTER_KIND)
    clock.now += 10
    assert availability.grace_left(CLUSTER_KIND) == 20.0
    availability.crd_changed(CLUSTER_KIND, present=True)
    assert informer.relists == 1
    assert availability.state(CLUSTER_KIND) == PENDING  # the CRD is back, its policies not listed yet
    assert not availability.wait_ready(CLUSTER_KIND, 0.0)
    assert not availability.reinstalling(CLUSTER_KIND)
    informer.list_done()
    assert availability.state(CLUSTER_KIND) == READY
    assert availability.wait_ready(CLUSTER_KIND, 0.0)
    assert changed == [CLUSTER_KIND] * 3


def test_the_reinstall_grace_ends() -> None:
    informer, clock = Informer(), Clock()
    availability = _availability(informer, clock)
    availability.crd_changed(CLUSTER_KIND, present=True)
    availability.crd_changed(CLUSTER_KIND, present=False)
    clock.now += 30
    assert not availability.reinstalling(CLUSTER_KIND)
    assert availability.grace_left(CLUSTER_KIND) == 0.0
    assert availability.state(CLUSTER_KIND) == ABSENT


def test_a_crd_seen_before_its_first_list_was_served_relists() -> None:
    informer = Informer(served=False)  # the first list raced the CRD's creation and got a 404
    availability = _availability(informer)
    availability.crd_changed(CLUSTER_KIND, present=True)
    assert informer.relists == 1
    assert availability.state(CLUSTER_KIND) == PENDING
    informer.list_done()
    assert availability.state(CLUSTER_KIND) == READY


def test_a_crd_seen_before_it_is_served_is_listed_again_until_it_is() -> None:
    informer = Informer()
    availability = _availability(informer)
    availability.crd_changed(CLUSTER_KIND, present=True)
    availability.crd_changed(CLUSTER_KIND, present=False)
    availability.crd_changed(CLUSTER_KIND, present=True)  # created: the API server does not serve it yet
    informer.list_done(served=False)
    assert availability.state(CLUSTER_KIND) == PENDING
    availability.refresh(CLUSTER_KIND)
    assert informer.relists == 2  # listed again, not left to the reflector's backoff
    informer.list_done()
    assert availability.state(CLUSTER_KIND) == READY
    availability.refresh(CLUSTER_KIND)
    assert informer.relists == 2  # nothing more to do once served
