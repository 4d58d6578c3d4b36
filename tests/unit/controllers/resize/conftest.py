"""The resize lane on the in-memory API server: the operator's cache wiring, a fake clock, a recording of every
PATCH, and direct reconciles (the cache is waited on until it holds what the API holds)."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
import pytest

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.api.scheme import add_to_scheme
from ballast.controllers.resize import EVENT_COMPONENT, NAME, setup
from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import DryRun, OperatorOptions
from ballast.runtime import MERGE, Client, Context, FakeAPI, FakeClock, Request, Result, Scheme
from ballast.runtime import objects as runtime_objects
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.log import get_logger
from tests.unit.controllers.resize.builders import POD, Recs, new_manager, pod, profile, profile_status
from tests.unit.support import register_our_kinds

START = datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)


class RecordingAPI(FakeAPI):
    """A FakeAPI that keeps every PATCH (path, content type, body) for assertions on the patch's shape."""

    def __init__(self) -> None:
        super().__init__()
        self.patches: list[tuple[str, str, Any]] = []

    def request(self, method: str, path: str, **options: Any) -> Any:
        if method == "PATCH":
            body = options.get("body")
            self.patches.append((path, options.get("content_type") or "", orjson.loads(body) if body else None))
        return super().request(method, path, **options)

    def resize_patches(self) -> list[tuple[str, str, Any]]:
        return [patch for patch in self.patches if patch[0].endswith("/resize")]


class Harness:
    """The resize controller wired on a manager over a RecordingAPI; reconciles are called directly."""

    def __init__(self, *, dry_run: DryRun | None = None, version: str = "v1.37.2") -> None:
        self.api = RecordingAPI()
        register_our_kinds(self.api)
        self.client: Client = self.api.client(scheme=add_to_scheme(Scheme()), field_owner="tests")
        self.manager = new_manager(self.api.client(scheme=add_to_scheme(Scheme()), field_owner="ballastd"))
        self.clock = FakeClock(START)
        self.kill_switch = KillSwitchState()
        self.version = version
        self.version_reads = 0
        options = OperatorOptions(dry_run=dry_run or DryRun(), clock=self.clock)
        self.controller = setup(self.manager, kill_switch=self.kill_switch, options=options,
                                server_version=self._read_version)  # fmt: skip
        self.manager.cache.start()

    def _read_version(self) -> str:
        self.version_reads += 1
        return self.version

    def close(self) -> None:
        self.manager.cache.stop()
        self.manager.get_event_recorder(EVENT_COMPONENT).shutdown()
        self.api.close()

    # ------------------------------------------------------------------------------------------ objects

    def add_policy(self, body: dict[str, Any]) -> None:
        self.client.create(body)

    def add_profile(self, name: str, recommendations: Recs, **status: Any) -> None:
        created = self.client.create(profile(name))
        self.client.status().patch(created, {"status": profile_status(recommendations, **status)}, patch_type=MERGE)

    def set_profile_status(self, name: str, recommendations: Recs, **status: Any) -> None:
        self.client.status().patch(profile(name), {"status": profile_status(recommendations, **status)},
                                   patch_type=MERGE)  # fmt: skip

    def add_pod(self, name: str, profile_name: str, containers: list[dict[str, Any]], **options: Any) -> None:
        self.client.create(pod(name, "shop", profile_name, containers, **options))

    def get_pod(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.client.get(POD, name, "shop")
        return found

    def set_pod_condition(self, name: str, condition_type: str, reason: str = "", **extra: Any) -> None:
        """What a kubelet reports about a resize, through pods/status."""
        condition = {"type": condition_type, "status": "True", "reason": reason, "message": f"{reason} (test)",
                     **extra}  # fmt: skip
        self.client.status().patch(self.get_pod(name), {"status": {"conditions": [condition]}}, patch_type=MERGE)

    def events(self, reason: str) -> list[dict[str, Any]]:
        return [e for e in self.api.objects("v1/Event") if e.get("reason") == reason]

    # --------------------------------------------------------------------------------------- reconciling

    def settle(self) -> None:
        """Wait until the cache holds every enrolled pod and every profile at the API's resourceVersion."""
        cache = self.manager.cache
        wanted: list[tuple[Any, str, str | None, str]] = [
            (POD, p["metadata"]["name"], p["metadata"]["namespace"], p["metadata"]["resourceVersion"])
            for p in self.api.objects("v1/Pod") if MODE_LABEL in (p["metadata"].get("labels") or {})
        ]  # fmt: skip
        wanted += [(WorkloadProfile, p["metadata"]["name"], None, p["metadata"]["resourceVersion"])
                   for p in self.api.objects(WorkloadProfile.API_VERSION + "/WorkloadProfile")]  # fmt: skip
        for kind, name, namespace, version in wanted:

            def caught_up(kind: Any = kind, name: str = name, namespace: str | None = namespace,
                          version: str = version) -> bool:  # fmt: skip
                return runtime_objects.resource_version(cache.get(kind, name, namespace)) == version

            poll_until(caught_up, timeout=5, interval=0.002, what=f"the cache to catch up on {name}")

    def reconcile(self, name: str) -> Result:
        self.settle()
        request = Request("", name)
        ctx = Context(NAME, request, "test", get_logger("ballast.runtime.controller", controller=NAME), self.clock)
        return self.controller.reconciler.reconcile(ctx, request) or Result()

    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)


def counter(metric: Any, **labels: str) -> float:
    return float(metric.value(**labels))


def skip_labels(profile_name: str, reason: str, policy: str = "default", namespace: str = "shop") -> Mapping[str, str]:
    return {"profile": profile_name, "name": "app", "reason": reason, "policy": policy, "namespace": namespace}


@pytest.fixture
def harness() -> Iterator[Harness]:
    created = Harness()
    yield created
    created.close()
