"""The "Testing your controller" example (docs/framework/testing.md) runs as printed, on the controller of
docs/framework/controllers.md, against the real API server; and `running` raises what the manager raised."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest

from ballast.runtime import Manager
from ballast.runtime.envtest import Environment
from ballast.runtime.testing import running
from tests.paths import REPOSITORY

FRAMEWORK = REPOSITORY / "docs" / "framework"


def python_block(page: str) -> str:
    match = re.search(r"```python\n(.*?)```", (FRAMEWORK / page).read_text(), re.DOTALL)
    assert match, f"docs/framework/{page} lost its example"
    return match.group(1)


def test_the_documented_test_passes_on_the_documented_controller(envtest: Environment, envtest_namespace: str) -> None:
    code: dict[str, Any] = {"__name__": "readme_testing"}
    exec(compile(python_block("controllers.md"), "controllers.md", "exec"), code)  # noqa: S102 - our own docs
    exec(compile(python_block("testing.md"), "testing.md", "exec"), code)  # noqa: S102
    code["test_the_namespace_counts_its_configmaps"](envtest, envtest_namespace)
    annotations = envtest.rest.get(f"/api/v1/namespaces/{envtest_namespace}")["metadata"]["annotations"]
    assert annotations["example.com/configmaps"] == "2"


class FailingRunnable:
    def __init__(self) -> None:
        self.started = threading.Event()

    def start(self, stop: threading.Event) -> None:
        self.started.set()
        raise RuntimeError("runnable failed on purpose")


def test_running_raises_what_the_manager_raised(envtest: Environment) -> None:
    manager = Manager(envtest.rest_config())
    failing = FailingRunnable()
    manager.add(failing)
    with pytest.raises(RuntimeError, match="runnable failed on purpose"), running(manager):
        assert failing.started.wait(10.0)
