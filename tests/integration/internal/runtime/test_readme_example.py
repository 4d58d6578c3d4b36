"""The "Writing a controller" example (docs/framework/controllers.md) runs as printed, against the real API
server."""

from __future__ import annotations

import re
import threading
from typing import Any

from ballast.runtime import Client, Manager, RESTConfig
from ballast.runtime.envtest.wait import poll_until
from tests.paths import REPOSITORY

PAGE = REPOSITORY / "docs" / "framework" / "controllers.md"


def example_source() -> str:
    match = re.search(r"```python\n(.*?)```", PAGE.read_text(), re.DOTALL)
    assert match, "docs/framework/controllers.md lost its controller example"
    return match.group(1)


def test_the_documented_controller_counts_configmaps(
    rest_config: RESTConfig, client: Client, envtest_namespace: str
) -> None:
    namespace_code: dict[str, Any] = {"__name__": "readme_example"}
    exec(compile(example_source(), str(PAGE), "exec"), namespace_code)  # noqa: S102 - our own docs
    manager = Manager(rest_config)
    namespace_code["build"](manager)
    stop = threading.Event()
    thread = threading.Thread(target=manager.start, args=(stop,), daemon=True)
    thread.start()
    try:
        for index in range(3):
            client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"c{index}", "namespace": envtest_namespace},
                }
            )

        def annotation() -> str | None:
            annotations = client.get("v1/Namespace", envtest_namespace)["metadata"].get("annotations", {})
            value = annotations.get("example.com/configmaps")
            return str(value) if value is not None else None

        poll_until(lambda: annotation() == "3", timeout=15, what="the namespace annotation to count 3 ConfigMaps")
    finally:
        stop.set()
        thread.join(20)
