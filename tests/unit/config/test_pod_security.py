"""config/manager's workloads run as the restricted Pod Security profile asks (issue 18, checked statically: there
is no container engine here): non-root, read-only root, no capabilities, no privilege escalation, seccomp
RuntimeDefault — on the operator container and the bundled Valkey. The image's numeric non-root USER is
tests/unit/config/test_dockerfile.py's; the chart's rendering is tests/integration/config/deploy/test_pod_security.py's.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.paths import REPOSITORY
from tests.pod_security import containers, effective_security_context, pod_templates, restricted_problems

MANAGER = REPOSITORY / "config" / "manager"


def _workloads() -> dict[str, Any]:
    documents = [doc for path in sorted(MANAGER.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return dict(pod_templates(documents))


def test_config_manager_has_the_operator_and_valkey() -> None:
    workloads = _workloads()
    assert set(workloads) == {"Deployment/ballast", "StatefulSet/ballast-valkey"}
    assert [c["name"] for c in containers(workloads["Deployment/ballast"])] == ["manager"]


@pytest.mark.parametrize("workload", ["Deployment/ballast", "StatefulSet/ballast-valkey"])
def test_every_container_runs_restricted(workload: str) -> None:
    pod = _workloads()[workload]
    for container in containers(pod):
        assert restricted_problems(pod, container["name"]) == []


def test_the_operator_runs_as_the_images_numeric_user() -> None:
    pod = _workloads()["Deployment/ballast"]
    context = effective_security_context(pod, containers(pod)[0])
    assert (context["runAsUser"], context["runAsGroup"]) == (65532, 65532)  # the Dockerfile's USER 65532:65532


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda pod, c: pod["securityContext"].pop("runAsNonRoot"), "runAsNonRoot is None, not true"),
        (lambda pod, c: c["securityContext"].update(runAsNonRoot=False), "runAsNonRoot is False, not true"),
        (lambda pod, c: c["securityContext"].update(runAsUser=0), "runAsUser is 0 (root)"),
        (lambda pod, c: c["securityContext"].update(readOnlyRootFilesystem=False), "readOnlyRootFilesystem is False"),
        (lambda pod, c: c["securityContext"].pop("allowPrivilegeEscalation"), "allowPrivilegeEscalation is None"),
        (lambda pod, c: c["securityContext"].update(privileged=True), "privileged is true"),
        (lambda pod, c: c["securityContext"]["capabilities"].update(drop=["NET_RAW"]), "without ALL"),
        (lambda pod, c: c["securityContext"]["capabilities"].update(add=["NET_BIND_SERVICE"]), "capabilities.add"),
        (lambda pod, c: pod["securityContext"].pop("seccompProfile"), "seccompProfile.type is None"),
        (lambda pod, c: c["securityContext"].update(seccompProfile={"type": "Unconfined"}), "is 'Unconfined'"),
        (lambda pod, c: pod.update(hostNetwork=True), "the pod sets hostNetwork"),
    ],
    ids=["pod-non-root", "container-root", "uid-0", "writable-root", "escalation", "privileged", "drop", "add",
         "no-seccomp", "unconfined", "host-network"],
)  # fmt: skip
def test_the_check_sees_each_weakening(change: Any, problem: str) -> None:
    pod = copy.deepcopy(_workloads()["Deployment/ballast"])
    change(pod, pod["containers"][0])
    problems = restricted_problems(pod, "manager")
    assert len(problems) == 1, problems
    assert problem in problems[0]
