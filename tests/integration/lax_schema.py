"""Objects stored before validation existed, on the real API server: `lax_schema(env, kind)` swaps the kind's CRD
for one without the checks docs/design.md difference 26 added (patterns, enums, CEL rules, length and item
limits), as the CRD was before, and puts the real one back on exit. Inside, an invalid object can be written (the
validating webhook, where one is installed, still refuses it); after, the server keeps it as it was written and,
with CRD validation ratcheting, still accepts status writes that leave its spec alone."""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Iterator
from typing import Any

from ballast.api.customresource import CustomResource
from ballast.internal.manifests.ballast_crds import crd_for
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until

ADDED_CHECKS = ("pattern", "enum", "x-kubernetes-validations", "maxLength", "maxItems")
"""Schema keys difference 26 added to the configuration kinds."""
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
INVALID_SPECS: dict[str, dict[str, Any]] = {
    "MetricsSource": {"type": "kubernetesMetrics", "config": {"pollInterval": "banana"}},
    "BallastConfig": {"identityLabels": ["not a label!!"]},
}
"""A spec of each kind that only the added checks refuse (used to tell which schema the server serves)."""


def _without_added_checks(node: Any, in_spec: bool = False) -> Any:
    if isinstance(node, dict):
        return {
            key: _without_added_checks(value, in_spec or key == "spec")
            for key, value in node.items()
            if not (in_spec and key in ADDED_CHECKS)
        }
    if isinstance(node, list):
        return [_without_added_checks(item, in_spec) for item in node]
    return node


def lax_crd(kind: type[CustomResource]) -> dict[str, Any]:
    """The CRD of `kind` with the added checks removed from its spec schema (status and the rest untouched)."""
    crd = copy.deepcopy(crd_for(kind))
    for version in crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]
        schema["properties"]["spec"] = _without_added_checks(schema["properties"]["spec"], in_spec=True)
    return crd


def _refused_by_schema(env: Environment, kind: type[CustomResource]) -> bool:
    """Whether the served schema refuses the probe spec (a webhook's refusal or an acceptance means it does not);
    the probe is a dry run, so nothing is stored."""
    body = {"apiVersion": kind.API_VERSION, "kind": kind.KIND, "metadata": {"name": f"probe-{uuid.uuid4().hex[:8]}"},
            "spec": INVALID_SPECS[kind.KIND]}  # fmt: skip
    try:
        env.rest.request("POST", kind.collection_path(), body, params={"dryRun": "All"})
    except APIError as error:
        return error.status == 422 and not error.message.startswith("admission webhook")
    return False


def _replace_spec(env: Environment, crd: dict[str, Any]) -> None:
    """PUT `crd`'s spec over the served CRD (a replace, whoever owns its fields)."""
    path = f"{CRD_PATH}/{crd['metadata']['name']}"
    current = env.rest.get(path)
    env.rest.request("PUT", path, {**current, "spec": crd["spec"]})


@contextlib.contextmanager
def lax_schema(env: Environment, kind: type[CustomResource]) -> Iterator[None]:
    """Serve `kind` with `lax_crd` inside the block, the real CRD again after it (each waited for; a CRD without
    the added checks, as before difference 26, is left as it is)."""
    real, lax = crd_for(kind), lax_crd(kind)
    if real == lax:
        yield
        return
    _replace_spec(env, lax)
    poll_until(lambda: not _refused_by_schema(env, kind), timeout=20, what=f"the lax {kind.KIND} schema served")
    try:
        yield
    finally:
        _replace_spec(env, real)
        poll_until(lambda: _refused_by_schema(env, kind), timeout=20, what=f"the real {kind.KIND} schema served")


def store_invalid(env: Environment, kind: type[CustomResource], name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Create or update (server-side apply) `name` of `kind` with `spec`, as it could be written before validation
    existed; returns the stored object."""
    body = {"apiVersion": kind.API_VERSION, "kind": kind.KIND, "metadata": {"name": name}, "spec": spec}
    with lax_schema(env, kind):
        stored: dict[str, Any] = env.rest.apply(kind.object_path(name), body, field_manager="before-validation")
    return stored
