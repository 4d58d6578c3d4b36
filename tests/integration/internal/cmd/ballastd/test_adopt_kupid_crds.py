"""Migrating from upstream kupid: `ballastd apply-crds` takes over kupid's CRDs, installed by another field
manager, and every stored policy keeps working unchanged."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.cmd.ballastd import CRD_FIELD_MANAGER, apply_crds, build_parser
from ballast.internal.manifests.ballast_crds import all_crds
from ballast.runtime import RESTConfig, new_client
from ballast.runtime.envtest import APIError, Environment
from ballast.runtime.envtest.wait import poll_until

KUPID_CRD = "podschedulingpolicies.kupid.gardener.cloud"
POLICIES = "/apis/kupid.gardener.cloud/v1alpha1/namespaces/default/podschedulingpolicies"


def _without_enums(schema: Any) -> Any:
    """kupid's own CRD, as far as it matters here: ours without the enums we added (upstream has none)."""
    if isinstance(schema, dict):
        return {key: _without_enums(value) for key, value in schema.items() if key != "enum"}
    if isinstance(schema, list):
        return [_without_enums(item) for item in schema]
    return schema


@pytest.fixture(scope="module")
def bare(envtest: Environment) -> Iterator[Environment]:
    """A control plane of its own, without our CRDs."""
    with Environment(assets=envtest.assets, network_mode=envtest.network_mode) as env:
        yield env


def _established(env: Environment) -> bool:
    conditions = env.rest.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{KUPID_CRD}")["status"]
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions.get("conditions", []))


def _refused(env: Environment, policy: dict[str, Any]) -> bool:
    try:
        env.rest.create(POLICIES, policy)
    except APIError as error:
        return "Sometimes" in str(error)
    env.rest.delete(f"{POLICIES}/{policy['metadata']['name']}")
    return False


def test_apply_crds_adopts_kupids_crd_and_its_policies_keep_working(bare: Environment, tmp_path: Path) -> None:
    upstream = _without_enums(copy.deepcopy(next(c for c in all_crds() if c["metadata"]["name"] == KUPID_CRD)))
    client = new_client(RESTConfig(bare.client_configuration()), field_owner="helm")
    client.create(upstream)  # as Helm installs it: an Update by another manager
    poll_until(lambda: _established(bare), timeout=20, what="kupid's CRD established")
    stored = {
        "apiVersion": "kupid.gardener.cloud/v1alpha1", "kind": "PodSchedulingPolicy",
        "metadata": {"name": "spot", "namespace": "default"},
        "spec": {"podSelector": {}, "tolerations": [{"key": "spot", "operator": "Equal", "value": "true",
                                                     "effect": "NoSchedule"}]},
    }  # fmt: skip
    before = bare.rest.create(POLICIES, stored)
    odd = {**stored, "metadata": {"name": "odd", "namespace": "default"},
           "spec": {"tolerations": [{"key": "k", "effect": "Sometimes"}]}}  # fmt: skip
    assert bare.rest.create(POLICIES, odd)["metadata"]["name"] == "odd"  # kupid's schema has no enums

    kubeconfig = bare.kubeconfig_path
    assert apply_crds(build_parser().parse_args(["apply-crds", f"--kubeconfig={kubeconfig}"])) == 0

    crd = bare.rest.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{KUPID_CRD}")
    managers = {(m["manager"], m["operation"]) for m in crd["metadata"]["managedFields"]}
    assert (CRD_FIELD_MANAGER, "Apply") in managers
    after = bare.rest.get(f"{POLICIES}/spot")
    assert after["spec"] == before["spec"]
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    odder = {**odd, "metadata": {"name": "odder", "namespace": "default"}}
    poll_until(lambda: _refused(bare, odder), timeout=20, what="our schema, with its enums, in force")
