"""The resize lane against the real kube-apiserver: the operator's cache wiring on a manager of its own, direct
reconciles on a fake clock (so the interval passes at once), and the kubelet's verdicts written through
pods/status as a kubelet would (no kubelet runs here)."""

from __future__ import annotations

import contextlib
import datetime
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.api.ballast.v1 import ClusterResourcePolicy, WorkloadProfile
from ballast.api.scheme import add_to_scheme
from ballast.controllers.resize import EVENT_COMPONENT, NAME, setup
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import DryRun, OperatorOptions
from ballast.runtime import (
    MERGE,
    STRATEGIC,
    Context,
    Controller,
    FakeClock,
    Manager,
    NotFoundError,
    Request,
    RESTConfig,
    Result,
    Scheme,
    objects,
)
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.log import get_logger
from ballast.runtime.rest import Transport
from tests.paths import CRD_DIR
from tests.unit.controllers.resize.builders import POD, Recs, cluster_policy, new_manager, pod, profile, profile_status

START = datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)


@pytest.fixture(scope="module")
def crds(envtest: Environment) -> list[str]:
    return envtest.install_crds([CRD_DIR])


def new_client(envtest: Environment, field_owner: str) -> APIServerClient:
    """The concrete client: `new_manager` builds a manager (and its cache) on it."""
    transport = Transport(RESTConfig(envtest.client_configuration()))
    return APIServerClient(transport, scheme=add_to_scheme(Scheme()), field_owner=field_owner)


class Lane:
    """The resize controller on a manager whose cache runs; reconciles are called directly."""

    def __init__(self, envtest: Environment, namespace: str, *, dry_run: DryRun | None = None,
                 version: str | None = None) -> None:  # fmt: skip
        self.namespace = namespace
        self.client = new_client(envtest, "tests")
        self.manager: Manager = new_manager(new_client(envtest, "ballastd"))
        self.clock = FakeClock(START)
        self.kill_switch = KillSwitchState()
        options = OperatorOptions(dry_run=dry_run or DryRun(), clock=self.clock)
        reader = (lambda: version) if version is not None else None
        self.controller: Controller = setup(self.manager, kill_switch=self.kill_switch, options=options,
                                            server_version=reader)  # fmt: skip
        self.manager.cache.start()

    def close(self) -> None:
        self.manager.cache.stop()
        self.manager.get_event_recorder(EVENT_COMPONENT).shutdown()
        self.manager.api_reader.close()
        self.client.close()

    def settle(self, profile_name: str) -> None:
        """Wait until the cache holds the namespace's pods, the profile and its policy as the API server has them
        (the lane reads the policy from the cache too: a lagging one reads as no policy, and the lane skips)."""
        wanted: list[tuple[Any, str, str | None, str]] = [
            (POD, objects.name(p), self.namespace, objects.resource_version(p))
            for p in self.client.list(POD, self.namespace, label_selector="ballast.tightlinesoftware.com/mode")
        ]  # fmt: skip
        live = self.client.get(WorkloadProfile, profile_name)
        wanted.append((WorkloadProfile, profile_name, None, str(live.metadata.resource_version)))
        ref = live.status.policy_ref if live.status else None
        if ref is not None and ref.kind == "ClusterResourcePolicy":
            with contextlib.suppress(NotFoundError):  # a test of a policy that is gone
                policy = self.client.get(ClusterResourcePolicy, ref.name)
                wanted.append((ClusterResourcePolicy, ref.name, None, str(policy.metadata.resource_version)))
        cache = self.manager.cache
        for kind, name, namespace, version in wanted:

            def caught_up(kind: Any = kind, name: str = name, namespace: str | None = namespace,
                          version: str = version) -> bool:  # fmt: skip
                return objects.resource_version(cache.get(kind, name, namespace)) == version

            poll_until(caught_up, timeout=10, interval=0.01, what=f"the cache to catch up on {name}")

    def reconcile(self, profile_name: str) -> Result:
        self.settle(profile_name)
        request = Request("", profile_name)
        ctx = Context(NAME, request, "test", get_logger("ballast.runtime.controller", controller=NAME), self.clock)
        return self.controller.reconciler.reconcile(ctx, request) or Result()


class World:
    """Objects of one test: a policy and a profile with unique names, pods in the test's namespace."""

    def __init__(self, client: APIServerClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        suffix = uuid.uuid4().hex[:8]
        self.policy = f"resize-{suffix}"
        self.profile = f"app-{suffix}"

    def add_policy(self, **resize: str) -> None:
        self.client.create(cluster_policy(self.policy, **resize))

    def add_profile(self, recommendations: Recs) -> None:
        created = self.client.create(profile(self.profile))
        status = profile_status(recommendations, policy=("ClusterResourcePolicy", "", self.policy))
        self.client.status().patch(created, {"status": status}, patch_type=MERGE)

    def add_pod(self, name: str, containers: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
        created: dict[str, Any] = self.client.create(pod(name, self.namespace, self.profile, containers, **options))
        return created

    def get_pod(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.client.get(POD, name, self.namespace)
        return found

    def kubelet_reports(self, pod_name: str, condition_type: str, reason: str = "", message: str = "") -> None:
        """Set a resize condition through pods/status, as the kubelet does."""
        condition = {"type": condition_type, "status": "True", "reason": reason, "message": message}
        self.client.status().patch(self.get_pod(pod_name), {"status": {"conditions": [condition]}},
                                   patch_type=STRATEGIC)  # fmt: skip

    def events(self, reason: str) -> list[dict[str, Any]]:
        return [e for e in self.client.list("v1/Event", self.namespace) if e.get("reason") == reason]

    def cleanup(self) -> None:
        for kind, name in (("WorkloadProfile", self.profile), ("ClusterResourcePolicy", self.policy)):
            with contextlib.suppress(Exception):
                self.client.delete(f"{WorkloadProfile.API_VERSION}/{kind}", name=name)


@pytest.fixture
def world(envtest: Environment, crds: list[str], envtest_namespace: str) -> Iterator[World]:
    client = new_client(envtest, "tests")
    created = World(client, envtest_namespace)
    yield created
    created.cleanup()
    client.close()


@pytest.fixture
def lane(envtest: Environment, crds: list[str], envtest_namespace: str) -> Iterator[Lane]:
    created = Lane(envtest, envtest_namespace)
    yield created
    created.close()
