"""`ballastd uninstall`: make the CRDs deletable without losing history.

The chart's pre-delete hook runs it: scale the operator's Deployment to 0 (so no replica adds finalizers back),
wait until its pods are gone, then remove the profile-cleanup finalizer from every WorkloadProfile. Nothing is
deleted; the usage history stays in the store for a reinstall. `ballastd` imports this module only for that
command; its rights are the `uninstall` roles of `ballast.internal.manifests.rbac`.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from ballast.internal.enrollment import PROFILE_CLEANUP_FINALIZER
from ballast.runtime import APIStatusError, ConflictError, NotFoundError
from ballast.runtime.labels import from_label_selector
from ballast.runtime.restmapper import NoKindMatchError

WORKLOAD_PROFILE_KIND = "ballast.tightlinesoftware.com/v1/WorkloadProfile"


def uninstall(
    client: Any,
    *,
    namespace: str,
    deployment: str | None,
    timeout: float,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Stop the operator's `deployment` in `namespace` (when given), then remove the profile-cleanup finalizer
    from every WorkloadProfile. Returns the exit code: 1 on an API error or a timeout, with the reason on `err`."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        if deployment:
            stop_operator(client, namespace, deployment, timeout, out=out)
        else:
            print("ballastd uninstall: no --deployment: a running operator adds its finalizers back", file=err)
        removed = 0
        for profile in client.list_all(WORKLOAD_PROFILE_KIND):
            removed += remove_finalizer(client, profile, PROFILE_CLEANUP_FINALIZER)
    except NoKindMatchError:
        print("no WorkloadProfile CRD is served: no finalizer to remove", file=out)
        return 0
    except (APIStatusError, TimeoutError) as exc:
        print(f"ballastd uninstall: {exc}", file=err)
        return 1
    print(
        f"removed finalizer {PROFILE_CLEANUP_FINALIZER} from {removed} WorkloadProfiles; the CRDs can be deleted",
        file=out,
    )
    return 0


def stop_operator(client: Any, namespace: str, name: str, timeout: float, *, out: TextIO | None = None) -> None:
    """Scale the operator's Deployment to 0 and wait until none of its pods is left (terminating ones count)."""
    out = out or sys.stdout
    reference = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace}}
    try:
        deployment = client.patch(reference, {"spec": {"replicas": 0}})
    except NotFoundError:
        print(f"deployment.apps/{name} not found in {namespace}: no operator to stop", file=out)
        return
    selector = str(from_label_selector(deployment["spec"]["selector"]))
    deadline = time.monotonic() + timeout
    while pods := client.list("v1/Pod", namespace, label_selector=selector).items:
        if time.monotonic() > deadline:
            names = ", ".join(pod["metadata"]["name"] for pod in pods)
            raise TimeoutError(f"operator pods still present after {timeout:g}s: {names}")
        time.sleep(1.0)
    print(f"deployment.apps/{name} scaled to 0; no operator pod left", file=out)


def remove_finalizer(client: Any, profile: dict[str, Any], finalizer: str) -> int:
    """Remove `finalizer` from one profile (1 if removed, 0 if absent or gone), re-reading on a conflict."""
    name = profile["metadata"]["name"]
    for _ in range(10):
        finalizers = profile["metadata"].get("finalizers") or []
        if finalizer not in finalizers:
            return 0
        kept = [f for f in finalizers if f != finalizer]
        patch = {"metadata": {"finalizers": kept, "resourceVersion": profile["metadata"]["resourceVersion"]}}
        try:
            client.patch(profile, patch)
        except NotFoundError:
            return 0
        except ConflictError:
            try:
                profile = client.get(WORKLOAD_PROFILE_KIND, name)
            except NotFoundError:
                return 0
            continue
        return 1
    raise TimeoutError(f"workloadprofile {name}: its finalizers kept changing under us")
