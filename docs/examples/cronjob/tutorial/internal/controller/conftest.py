"""suite_test.go: what the controller's tests share — the CronJob CRD on the envtest API server (the `envtest`
fixture comes with the package's pytest plugin), and a manager running the controller for a test."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from ballast.runtime import Clock, Manager, Scheme
from ballast.runtime.envtest import Environment
from ballast.runtime.testing import running
from tutorial.api.v1 import add_to_scheme
from tutorial.internal.controller.cronjob_controller import setup_with_manager

CRD_DIRECTORY = Path(__file__).parents[3] / "config" / "crd" / "bases"

StartManager = Callable[..., AbstractContextManager[Manager]]


@pytest.fixture(scope="session")
def cronjob_crd(envtest: Environment) -> None:
    envtest.install_crds([CRD_DIRECTORY])


@pytest.fixture
def controller(envtest: Environment, cronjob_crd: None) -> StartManager:
    """`with controller(clock=...) as manager:` runs the CronJob controller for the block."""

    def start(clock: Clock | None = None) -> AbstractContextManager[Manager]:
        manager = Manager(envtest.rest_config(), scheme=add_to_scheme(Scheme()), clock=clock)
        setup_with_manager(manager)
        return running(manager)

    return start


@pytest.fixture
def namespace(envtest_namespace: str) -> str:
    return envtest_namespace
