"""What the chart and kustomize really render runs as the restricted Pod Security profile asks (issue 18, checked
statically: there is no container engine here): every container of every workload — the operator, its hook Jobs,
the bundled Valkey — non-root, read-only root, no capabilities, no privilege escalation, seccomp RuntimeDefault;
in each preset and in the chart's other store modes. `tests/pod_security.py` holds the check (the kubelet's
merge of pod and container securityContext); tests/unit/config/test_pod_security.py shows it sees each weakening.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ballast.runtime.envtest import Environment
from tests.integration.config.deploy.conftest import PRESETS, kustomize, render
from tests.pod_security import containers, pod_templates, restricted_problems

OTHER_MODES = {
    "sqlite": {"valkey.enabled": "false", "store.sqlite.enabled": "true", "leaderElect": "false"},
    "external-store": {"valkey.enabled": "false", "store.existingSecret": "history", "replicaCount": "2"},
}


def _problems(documents: list[dict[str, object]]) -> list[str]:
    workloads = pod_templates(documents)
    assert workloads, "nothing rendered a pod template"
    return [f"{workload}: {problem}" for workload, pod in workloads.items() for container in containers(pod)
            for problem in restricted_problems(pod, container["name"])]  # fmt: skip


@pytest.mark.parametrize("preset", PRESETS)
def test_every_chart_container_runs_restricted_in_each_preset(helm: Path, preset: str) -> None:
    documents = render(helm, files=PRESETS[preset])
    workloads = pod_templates(documents)
    assert {"Deployment/ballast", "StatefulSet/ballast-valkey"} <= set(workloads)
    assert len([name for name in workloads if name.startswith("Job/")]) == 2  # the CRD and uninstall hooks
    assert _problems(documents) == []


@pytest.mark.parametrize("mode", OTHER_MODES)
def test_every_chart_container_runs_restricted_in_the_other_store_modes(helm: Path, mode: str) -> None:
    assert _problems(render(helm, settings=OTHER_MODES[mode])) == []


@pytest.mark.parametrize("path", ["config/default", "config/overlays/local-testing"])
def test_every_kustomize_container_runs_restricted(envtest: Environment, path: str) -> None:
    documents = kustomize(envtest, path)
    assert "Deployment/ballast" in pod_templates(documents)
    assert _problems(documents) == []
