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
