"""The Go-operator migration lane on the in-memory API: one pass removes the Go operator's pod finalizer from
every pod that has it — enrolled or not — and leaves other finalizers alone."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.controllers import migration
from ballast.internal.enrollment import LEGACY_POD_FINALIZER, MODE_LABEL
from ballast.runtime import FakeAPI, Manager
from tests.unit.internal.runtime.support import eventually, running

OTHER = "example.com/keep-me"


def _pod(name: str, finalizers: list[str], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "finalizers": finalizers, "labels": labels or {}},
            "spec": {"containers": [{"name": "app", "image": "app"}]}}  # fmt: skip


def test_one_pass_removes_the_legacy_finalizer_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeAPI()
    client = api.client()
    client.create(_pod("enrolled", [LEGACY_POD_FINALIZER], {MODE_LABEL: "apply"}))
    client.create(_pod("lost-its-label", [LEGACY_POD_FINALIZER, OTHER]))
    client.create(_pod("untouched", [OTHER]))
    manager = Manager(client=client)
    lane = migration.setup(manager)
    monkeypatch.setattr(migration, "PAGE_SIZE", 2)  # the list is paged: three pods, two pages
    with running(manager):
        eventually(lane.done.is_set, "the migration pass")
    finalizers = {o["metadata"]["name"]: o["metadata"].get("finalizers", []) for o in api.objects("v1/Pod")}
    assert finalizers == {"enrolled": [], "lost-its-label": [OTHER], "untouched": [OTHER]}
    assert lane.removed == 2
