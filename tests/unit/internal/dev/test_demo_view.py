"""The `make dev` screen over a run, on a stand-in control plane: after the cold start only the steps stay above
the live block (no frozen copy of its table), and the resize step never outlives what it says."""

from __future__ import annotations

import io
from typing import Any

from ballast.internal.dev.demo import PROFILES_PATH, STEPS, Demo, DemoOptions
from ballast.internal.dev.progress import Step
from ballast.internal.dev.scenario import CHECKOUT, RESIZE_POD

from .terminal import screen

POD_PATH = f"/api/v1/namespaces/{RESIZE_POD.namespace}/pods/{RESIZE_POD.name}"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class StandInRest:
    """Answers the demo's reads: the checkout profile with its recommendation, and the resize pod."""

    def __init__(self) -> None:
        self.target = {"cpu": "314m", "memory": "258534604"}
        self.requests = {"cpu": "1", "memory": "512Mi"}

    def profile(self) -> dict[str, Any]:
        return {
            "metadata": {"name": CHECKOUT.profile_name()},
            "status": {
                "state": "Sufficient",
                "activeWorkloads": 4,
                "containers": [
                    {
                        "name": "api",
                        "usageStats": [{"resource": "cpu", "samples": 7, "timeSpan": "1m30s"}],
                        "recommendations": {res: {"request": value} for res, value in self.target.items()},
                    }
                ],
            },
        }

    def pod(self) -> dict[str, Any]:
        return {
            "metadata": {"namespace": RESIZE_POD.namespace, "name": RESIZE_POD.name, "labels": {}},
            "spec": {"containers": [{"name": "api", "resources": {"requests": dict(self.requests)}}]},
        }

    def get(self, path: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        if path == PROFILES_PATH:
            return {"items": [self.profile()]}
        if path == POD_PATH:
            return self.pod()
        if path == "/api/v1/pods":
            return {"items": [self.pod()]}
        raise AssertionError(f"unexpected read {path}")


class StandInControlPlane:
    def __init__(self) -> None:
        self.rest = StandInRest()

    def kubectl(self, *args: str) -> str:
        return "NAME   ACTIVEWORKLOADS   POLICY    STATE        ORPHANED   AGE\n"


def demo_at_the_cold_start() -> tuple[Demo, StandInRest, Terminal]:
    out = Terminal()
    demo = Demo(DemoOptions(interactive=True, exit_after="resized", resize_timeout=5), out)
    plane = StandInControlPlane()
    demo.env = plane  # type: ignore[assignment]
    for title in STEPS[:-1]:
        demo.steps[title] = Step(title, "done", "ok")
    demo._poll()  # the live block, with the pod at its manifest's values
    return demo, plane.rest, out


def test_after_the_cold_start_only_the_steps_stay_above_the_live_block() -> None:
    demo, rest, out = demo_at_the_cold_start()
    rest.requests = dict(rest.target)  # resized to its recommendation
    demo._print_tables()
    demo._follow()
    lines = screen(out.getvalue())
    tables = [line for line in lines if line.split()[:2] == ["PROFILE", "STATE"]]
    assert len(tables) == 1  # the live one: no frozen copy of the first view above it
    assert lines.index(tables[0]) > max(i for i, line in enumerate(lines) if "kubectl get workloadprofiles" in line)
    assert sum("✓ cold start" in line for line in lines) == 1


def test_the_resize_step_follows_the_pod_after_it_first_converged() -> None:
    demo, rest, _ = demo_at_the_cold_start()
    rest.requests = dict(rest.target)
    demo._print_tables()
    demo._follow()
    assert demo._frame().steps[0].detail == f"{RESIZE_POD.key} converged in 1 in-place step(s)"
    rest.target = {"cpu": "200m", "memory": "180Mi"}  # the recommendation moved on
    demo._poll()
    step = demo._frame().steps[0]
    assert step.state == "running"
    assert "converged" not in step.detail
    rest.requests = dict(rest.target)  # and the pod followed
    demo._poll()
    assert demo._frame().steps[0] == Step("resize", "done", f"{RESIZE_POD.key} converged in 2 in-place step(s)")
