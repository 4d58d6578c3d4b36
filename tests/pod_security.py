"""What the Pod Security Standards' `restricted` profile asks of a container, checked on a pod template the way the
kubelet applies it: the container's `securityContext` over the pod's (a container field wins, a pod field fills in
what the container leaves out — runAsNonRoot, runAsUser, seccompProfile).

    restricted_problems(deployment["spec"]["template"]["spec"], "manager")   # [] when it complies

The static half of issue 18's security checks (there is no container engine here): the unit tests read
config/manager, the chart tests read what `helm template` renders.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

INHERITED = ("runAsNonRoot", "runAsUser", "runAsGroup", "seccompProfile", "seLinuxOptions", "appArmorProfile")
"""The fields a container takes from the pod's securityContext when it does not set them."""


def effective_security_context(pod: Mapping[str, Any], container: Mapping[str, Any]) -> dict[str, Any]:
    """The securityContext `container` runs with in `pod` (a pod spec)."""
    inherited = {key: value for key, value in (pod.get("securityContext") or {}).items() if key in INHERITED}
    return {**inherited, **(container.get("securityContext") or {})}


def containers(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every container of a pod spec: init, regular and ephemeral."""
    return [*pod.get("initContainers", ()), *pod.get("containers", ()), *pod.get("ephemeralContainers", ())]


def restricted_problems(pod: Mapping[str, Any], name: str) -> list[str]:
    """What keeps container `name` of `pod` from the restricted profile (and a read-only root), each naming the
    field; empty when it complies."""
    (container,) = [c for c in containers(pod) if c.get("name") == name]
    context = effective_security_context(pod, container)
    problems = []
    if context.get("runAsNonRoot") is not True:
        problems.append(f"runAsNonRoot is {context.get('runAsNonRoot')!r}, not true")
    if context.get("runAsUser") == 0:
        problems.append("runAsUser is 0 (root)")
    if context.get("readOnlyRootFilesystem") is not True:
        problems.append(f"readOnlyRootFilesystem is {context.get('readOnlyRootFilesystem')!r}, not true")
    if context.get("allowPrivilegeEscalation") is not False:
        problems.append(f"allowPrivilegeEscalation is {context.get('allowPrivilegeEscalation')!r}, not false")
    if context.get("privileged"):
        problems.append("privileged is true")
    capabilities = context.get("capabilities") or {}
    if "ALL" not in (capabilities.get("drop") or ()):
        problems.append(f"capabilities.drop is {capabilities.get('drop')!r}, without ALL")
    if capabilities.get("add"):
        problems.append(f"capabilities.add is {capabilities['add']!r}, not empty")
    seccomp = (context.get("seccompProfile") or {}).get("type")
    if seccomp != "RuntimeDefault":
        problems.append(f"seccompProfile.type is {seccomp!r}, not RuntimeDefault")
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(host):
            problems.append(f"the pod sets {host}")
    return [f"container {name}: {problem}" for problem in problems]


def pod_templates(documents: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """`Kind/name` → pod spec, for every workload among `documents` (Deployments, StatefulSets, Jobs, …)."""
    found = {}
    for document in documents:
        spec = document.get("spec") or {}
        if document.get("kind") == "CronJob":
            spec = spec.get("jobTemplate", {}).get("spec", {})
        template = spec.get("template")
        if isinstance(template, Mapping) and "spec" in template:
            found[f"{document['kind']}/{document['metadata']['name']}"] = template["spec"]
    return found
