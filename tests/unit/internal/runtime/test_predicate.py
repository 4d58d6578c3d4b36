"""Predicates: which events pass, alone and combined."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.runtime import predicate
from ballast.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from ballast.runtime.objects import freeze
from ballast.runtime.predicate import Funcs, Predicate


def obj(
    name: str = "a",
    *,
    generation: int = 1,
    version: str = "1",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "shop",
            "generation": generation,
            "resourceVersion": version,
            "labels": labels or {},
            "annotations": annotations or {},
        }
    }


def _all_events(target: Any) -> tuple[CreateEvent, UpdateEvent, DeleteEvent, GenericEvent]:
    return CreateEvent(target), UpdateEvent(target, target), DeleteEvent(target), GenericEvent(target)


def _passes(p: Predicate, target: Any) -> tuple[bool, bool, bool, bool]:
    create, update, delete, generic = _all_events(target)
    return p.create(create), p.update(update), p.delete(delete), p.generic(generic)


@pytest.mark.parametrize(
    ("factory", "old", "new", "passes"),
    [
        (predicate.generation_changed, obj(generation=1), obj(generation=2, version="2"), True),
        (predicate.generation_changed, obj(generation=1), obj(generation=1, version="2"), False),  # status write
        (predicate.resource_version_changed, obj(version="1"), obj(version="2"), True),
        (predicate.resource_version_changed, obj(version="1"), obj(version="1"), False),  # resync
        (predicate.label_changed, obj(labels={"a": "1"}), obj(labels={"a": "2"}), True),
        (predicate.label_changed, obj(labels={"a": "1"}), obj(labels={"a": "1"}, version="2"), False),
        (predicate.label_changed, obj(), obj(labels={"a": "1"}), True),
        (predicate.annotation_changed, obj(annotations={"x": "1"}), obj(), True),
        (predicate.annotation_changed, obj(annotations={"x": "1"}), obj(annotations={"x": "1"}), False),
    ],
)
def test_changed_predicates_judge_updates(factory: Any, old: Any, new: Any, passes: bool) -> None:
    p = factory()
    assert p.update(UpdateEvent(old, new)) is passes
    assert p.update(UpdateEvent(freeze(old), freeze(new))) is passes  # cached views too
    assert p.create(CreateEvent(new))
    assert p.delete(DeleteEvent(new))
    assert p.generic(GenericEvent(new))


@pytest.mark.parametrize(
    "selector", ["app=web,tier in (front)", {"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["front"]}]}],
    ids=["string", "label-selector"],
)  # fmt: skip
def test_label_selector_filters_every_event_kind(selector: Any) -> None:
    p = predicate.label_selector(selector)
    assert _passes(p, obj(labels={"app": "web", "tier": "front"})) == (True, True, True, True)
    assert _passes(p, obj(labels={"app": "web"})) == (False, False, False, False)
    # updates judge the new object
    assert p.update(UpdateEvent(obj(labels={"app": "web"}), obj(labels={"app": "web", "tier": "front"})))
    assert not p.update(UpdateEvent(obj(labels={"app": "web", "tier": "front"}), obj(labels={})))


def test_an_empty_label_selector_passes_everything() -> None:
    p = predicate.label_selector({})
    assert _passes(p, obj()) == (True, True, True, True)


def test_funcs_default_to_passing() -> None:
    assert _passes(Funcs(), obj()) == (True, True, True, True)
    only_creates = Funcs(
        create_func=lambda e: True,
        update_func=lambda e: False,
        delete_func=lambda e: False,
        generic_func=lambda e: False,
    )
    assert _passes(only_creates, obj()) == (True, False, False, False)


def test_new_predicate_funcs_applies_one_filter_to_all() -> None:
    p = predicate.new_predicate_funcs(lambda o: o["metadata"]["name"].startswith("keep"))
    assert _passes(p, obj("keep-1")) == (True, True, True, True)
    assert _passes(p, obj("drop")) == (False, False, False, False)


_YES = Funcs()
_NO = Funcs(lambda e: False, lambda e: False, lambda e: False, lambda e: False)


@pytest.mark.parametrize(
    ("combined", "passes"),
    [
        (predicate.and_(_YES, _YES), True),
        (predicate.and_(_YES, _NO), False),
        (predicate.and_(), True),
        (predicate.or_(_NO, _YES), True),
        (predicate.or_(_NO, _NO), False),
        (predicate.or_(), False),
        (predicate.not_(_NO), True),
        (predicate.not_(_YES), False),
        (predicate.not_(predicate.and_(_YES, predicate.or_(_NO, _YES))), False),
    ],
)
def test_combinators(combined: Predicate, passes: bool) -> None:
    assert _passes(combined, obj()) == (passes, passes, passes, passes)


def test_combinators_evaluate_per_event_kind() -> None:
    drop_updates = Funcs(update_func=lambda e: False)
    resyncs_only = predicate.not_(predicate.resource_version_changed())
    combined = predicate.or_(drop_updates, resyncs_only)
    assert combined.update(UpdateEvent(obj(version="1"), obj(version="1")))
    assert not combined.update(UpdateEvent(obj(version="1"), obj(version="2")))
    assert combined.create(CreateEvent(obj()))
