"""A pod's next resize: only the changed containers and fields, unparseable recommendations ignored."""

from __future__ import annotations

from ballast.internal.resize import ResizeSettings, plan_resize
from tests.unit.controllers.resize.builders import container, pod

SETTINGS = ResizeSettings()


def test_a_plan_names_only_changed_containers_and_fields() -> None:
    subject = pod("p", "shop", "prof", [container("a", {"cpu": "1", "memory": "1Gi"}), container("b", {"cpu": "1"})])
    plan = plan_resize(subject, {"a": {"cpu": ("1", None), "memory": ("2Gi", "4Gi")}}, SETTINGS)
    assert plan.patch() == {"spec": {"containers": [
        {"name": "a", "resources": {"requests": {"memory": "1536Mi"}, "limits": {"memory": "4Gi"}}}]}}  # fmt: skip


def test_unparseable_recommendations_are_ignored() -> None:
    subject = pod("p", "shop", "prof", [container("a", {"cpu": "1"})])
    assert plan_resize(subject, {"a": {"cpu": ("lots", "")}}, SETTINGS).changes == ()


def test_a_number_from_a_manifest_is_planned_by_its_own_value_not_by_an_equal_key() -> None:
    settings = ResizeSettings()  # shared, as the lane shares one per policy version
    as_int = pod("p", "shop", "prof", [container("a", {"cpu": 2})])  # type: ignore[dict-item]  # 2 units: 2m
    as_float = pod("q", "shop", "prof", [container("a", {"cpu": 2.0})])  # type: ignore[dict-item]  # "2.0": 2 cores
    wanted = {"a": {"cpu": ("2", None)}}

    first = plan_resize(as_int, wanted, settings)

    assert first.changes  # 2m toward 2 cores
    assert plan_resize(as_float, wanted, settings).changes == ()  # already at 2 cores, though 2 == 2.0 as a key
    assert plan_resize(as_int, wanted, settings) == first
