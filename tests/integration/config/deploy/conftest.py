"""The packaging of the operator against real tools: `helm` v3.22.0 built from its Go module (hack/setup-helm),
`kubectl kustomize` from the envtest binaries, and server-side dry-run applies to the session's kube-apiserver.

Without a helm binary the chart tests skip with the reason; under CI=true they fail, like every real component.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.runtime import APPLY, Client, RESTConfig, new_client
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.pytest_plugin import unavailable
from tests.paths import REPOSITORY

REPO = REPOSITORY
CHART = REPO / "config" / "helm" / "ballast"
PRESETS = {
    "homogeneous-large-fleet": [],
    "local-testing": [CHART / "presets" / "local-testing.yaml"],
    "team-zones": [CHART / "presets" / "team-zones.yaml"],
}
FIELD_MANAGER = "ballast-deploy-test"

# Stand-ins for cert-manager's CRDs, so its kinds (Issuer, Certificate) can be applied without cert-manager: the
# names and group are cert-manager's, the schema accepts anything (cert-manager itself is not installed here).
STAND_IN_LABEL = {"ballast.tightlinesoftware.com/test-stand-in": "cert-manager"}


def _stand_in_crd(kind: str, plural: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.cert-manager.io", "labels": STAND_IN_LABEL},
        "spec": {
            "group": "cert-manager.io",
            "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }


CERT_MANAGER_STAND_INS = [_stand_in_crd("Issuer", "issuers"), _stand_in_crd("Certificate", "certificates")]


@pytest.fixture(scope="session")
def helm() -> Path:
    """The helm binary: $BALLAST_HELM, else the one hack/setup-helm cached (it is never built from a test)."""
    override = os.environ.get("BALLAST_HELM")
    if override:
        return Path(override)
    found = subprocess.run(
        [str(REPO / "hack" / "setup-helm"), "--installed-only"], capture_output=True, text=True, check=False
    )
    if found.returncode != 0:
        unavailable(f"helm is not built: run hack/setup-helm ({found.stderr.strip()})")
    return Path(found.stdout.splitlines()[-1])


def helm_run(helm: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(helm), *args], capture_output=True, text=True, check=False, cwd=REPO)


def values_args(files: Iterable[Path] = (), settings: Mapping[str, str] | None = None) -> list[str]:
    args: list[str] = []
    for path in files:
        args += ["-f", str(path)]
    for key, value in (settings or {}).items():
        args += ["--set", f"{key}={value}"]
    return args


def render(
    helm: Path,
    *,
    release: str = "ballast",
    namespace: str = "ballast-system",
    files: Iterable[Path] = (),
    settings: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """`helm template` of the chart: its documents (hooks included), parsed."""
    args = ["template", release, str(CHART), "--namespace", namespace, *values_args(files, settings)]
    result = helm_run(helm, *args)
    assert result.returncode == 0, f"helm {' '.join(args)} failed:\n{result.stderr}"
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def render_error(helm: Path, settings: Mapping[str, str], *flags: str, files: Iterable[Path] = ()) -> str:
    """The error of a `helm template` that must fail (`flags` such as `--skip-schema-validation` added)."""
    result = helm_run(helm, "template", "ballast", str(CHART), *flags, *values_args(files, settings))
    assert result.returncode != 0, f"rendering with {dict(settings)} should fail"
    return result.stderr


def kustomize(envtest: Environment, path: str) -> list[dict[str, Any]]:
    """`kubectl kustomize <path>` (the kubectl built with the control plane)."""
    return [doc for doc in yaml.safe_load_all(envtest.kubectl("kustomize", str(REPO / path))) if doc]


def find(documents: Iterable[dict[str, Any]], kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [d for d in documents if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]


def one(documents: Iterable[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    (found,) = find(documents, kind, name)
    return found


@pytest.fixture
def admin_client(envtest: Environment) -> Client:
    return new_client(RESTConfig(envtest.client_configuration()), field_owner=FIELD_MANAGER)


@pytest.fixture(scope="session")
def cert_manager_stand_ins(envtest: Environment) -> list[str]:
    """Install the stand-in cert-manager CRDs (once per session)."""
    return envtest.install_crds(CERT_MANAGER_STAND_INS)


def dry_run_apply(client: Client, documents: Iterable[dict[str, Any]]) -> list[str]:
    """Server-side apply every document with `?dryRun=All`, strict field validation and our field manager.

    The API server validates each object (schemas, CRD schemas of our policy objects, references it can check)
    and persists nothing. Returns `kind/name` of what was applied; raises on the first refusal.
    """
    applied = []
    for document in documents:
        client.patch(
            document, document, patch_type=APPLY, dry_run=True, field_manager=FIELD_MANAGER, force=True,
            field_validation="Strict",
        )  # fmt: skip
        applied.append(f"{document['kind']}/{document['metadata']['name']}")
    return applied


def without_labels(document: dict[str, Any]) -> dict[str, Any]:
    """A copy without metadata.labels (the chart adds its own to every object)."""
    metadata = {k: v for k, v in document["metadata"].items() if k != "labels"}
    return {**document, "metadata": metadata}
