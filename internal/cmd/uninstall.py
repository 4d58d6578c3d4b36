"""`ballastd uninstall`: make the CRDs deletable without losing history.

The chart's pre-delete hook runs it: mark the BallastConfig `uninstalling` (an operator still running then
removes the finalizer of a deleted profile without purging its history, docs/design.md, difference 53), scale
the operator's Deployment to 0 (so no replica adds finalizers back), wait until its pods are gone, then remove
the profile-cleanup finalizer from every WorkloadProfile. Nothing is deleted; the usage history stays in the
store for a reinstall.

It says the CRDs can be deleted only once no finalizer has come back for `quiet_period` (one resync of the
profile lane) and the leader-election Lease is free or expired; otherwise it names the running operator and
exits 1. `ballastd` imports this module only for that command; its rights are the `uninstall` roles of
`ballast.internal.manifests.rbac`.
"""

from __future__ import annotations

import datetime
import sys
import time
from typing import Any, TextIO

from ballast.internal.enrollment import (
    BALLAST_CONFIG_NAME,
    LEADER_ELECTION_ID,
    PROFILE_CLEANUP_FINALIZER,
    UNINSTALLING_ANNOTATION,
)
from ballast.runtime import APIStatusError, ConflictError, NotFoundError
from ballast.runtime.labels import from_label_selector
from ballast.runtime.restmapper import NoKindMatchError

WORKLOAD_PROFILE_KIND = "ballast.tightlinesoftware.com/v1/WorkloadProfile"
BALLAST_CONFIG_KIND = "ballast.tightlinesoftware.com/v1/BallastConfig"
LEASE_KIND = "coordination.k8s.io/v1/Lease"
DEFAULT_QUIET_PERIOD = 30.0
"""Seconds no finalizer may come back before the CRDs are called deletable: a running profile lane puts one back
on the profile's own update event, so within its queue's latency; 30 s covers a busy queue."""
POLL_INTERVAL = 1.0


class OperatorStillRunningError(Exception):
    """Finalizers came back or the Lease is held: deleting the CRDs now would purge history."""


def uninstall(
    client: Any,
    *,
    namespace: str,
    deployment: str | None,
    timeout: float,
    quiet_period: float = DEFAULT_QUIET_PERIOD,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Mark the install as being removed, stop the operator's `deployment` in `namespace` (when given), remove the
    profile-cleanup finalizer from every WorkloadProfile and check that no operator puts it back. Returns the
    exit code: 1 on an API error, a timeout or a running operator, with the reason on `err`."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        mark_uninstalling(client, out=out)
        if deployment:
            stop_operator(client, namespace, deployment, timeout, out=out)
        else:
            print("ballastd uninstall: no --deployment: a running operator adds its finalizers back", file=err)
        removed = 0
        for profile in client.list_all(WORKLOAD_PROFILE_KIND):
            removed += remove_finalizer(client, profile, PROFILE_CLEANUP_FINALIZER)
        print(f"removed finalizer {PROFILE_CLEANUP_FINALIZER} from {removed} WorkloadProfiles", file=out)
        expect_no_finalizer_back(client, quiet_period)
        wait_for_lease_expiry(client, namespace, timeout)
    except NoKindMatchError:
        print("no WorkloadProfile CRD is served: no finalizer to remove", file=out)
        return 0
    except (APIStatusError, TimeoutError, OperatorStillRunningError) as exc:
        print(f"ballastd uninstall: {exc}", file=err)
        return 1
    print(f"no finalizer came back for {quiet_period:g}s and no operator holds the Lease; the CRDs can be deleted",
          file=out)  # fmt: skip
    return 0


def mark_uninstalling(client: Any, *, out: TextIO | None = None) -> None:
    """Annotate the BallastConfig: profiles deleted from now on keep their history (a running operator reads it)."""
    out = out or sys.stdout
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    reference = {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "BallastConfig",
                 "metadata": {"name": BALLAST_CONFIG_NAME}}  # fmt: skip
    try:
        client.patch(reference, {"metadata": {"annotations": {UNINSTALLING_ANNOTATION: now}}})
    except (NotFoundError, NoKindMatchError):
        print(f"no BallastConfig {BALLAST_CONFIG_NAME}: nothing to mark", file=out)
        return
    print(f"ballastconfig/{BALLAST_CONFIG_NAME} annotated {UNINSTALLING_ANNOTATION}={now}", file=out)


def expect_no_finalizer_back(client: Any, quiet_period: float) -> None:
    """Watch the profiles for `quiet_period`; raise `OperatorStillRunningError` naming who put a finalizer back."""
    deadline = time.monotonic() + quiet_period
    while True:
        back = [p for p in client.list_all(WORKLOAD_PROFILE_KIND)
                if PROFILE_CLEANUP_FINALIZER in (p["metadata"].get("finalizers") or [])]  # fmt: skip
        if back:
            names = ", ".join(sorted(p["metadata"]["name"] for p in back)[:5])
            writers = sorted({writer for profile in back for writer in finalizer_writers(profile)})
            raise OperatorStillRunningError(
                f"the finalizer {PROFILE_CLEANUP_FINALIZER} came back on {len(back)} WorkloadProfiles ({names}), "
                f"written by {', '.join(writers) or 'an unknown field manager'}: an operator is still running "
                "(without leader election, or not in --deployment); stop it and run ballastd uninstall again "
                "before deleting the CRDs, or their deletion purges the history"
            )
        if time.monotonic() >= deadline:
            return
        time.sleep(min(POLL_INTERVAL, max(0.0, deadline - time.monotonic())))


def finalizer_writers(profile: dict[str, Any]) -> list[str]:
    """The field managers owning the profile's finalizers (server-side managedFields): who put ours back."""
    return [
        str(entry.get("manager", "?"))
        for entry in profile["metadata"].get("managedFields") or []
        if "f:finalizers" in ((entry.get("fieldsV1") or {}).get("f:metadata") or {})
    ]


def wait_for_lease_expiry(client: Any, namespace: str, timeout: float, name: str = LEADER_ELECTION_ID) -> None:
    """Wait until the leader-election Lease is released or has expired; raise `OperatorStillRunningError` naming its
    holder when it is still renewed after `timeout`. No Lease (no leader election) passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            lease = client.get(LEASE_KIND, name, namespace)
        except (NotFoundError, NoKindMatchError):
            return
        holder = held_by(lease, datetime.datetime.now(datetime.UTC))
        if holder is None:
            return
        if time.monotonic() >= deadline:
            raise OperatorStillRunningError(
                f"Lease {namespace}/{name} is held by {holder} (renewed within its duration after {timeout:g}s): "
                "the operator is still running; stop it before deleting the CRDs, or their deletion purges the history"
            )
        time.sleep(POLL_INTERVAL)


def held_by(lease: dict[str, Any], now: datetime.datetime) -> str | None:
    """The Lease's holder while its last renewal is younger than its duration; None when free or expired."""
    spec = lease.get("spec") or {}
    holder, renewed = spec.get("holderIdentity"), spec.get("renewTime") or spec.get("acquireTime")
    if not holder or not renewed:
        return None
    renewed_at = datetime.datetime.fromisoformat(renewed.replace("Z", "+00:00"))
    expires = renewed_at + datetime.timedelta(seconds=float(spec.get("leaseDurationSeconds") or 0))
    return str(holder) if now < expires else None


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
