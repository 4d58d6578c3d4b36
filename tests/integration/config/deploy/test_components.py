"""config/'s switches — the kustomize Components without-scheduling, without-balancer, consolidation, karpenter,
valkey-sentinel and metrics-secure — rendered by a real `kubectl kustomize` in every combination and every order:
each renders what it says, the RBAC and ballastd's flags agree (a controller runs exactly when its rights are
there), and the docs' example overlay renders."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.internal.cmd.ballastd import build_parser, selected_controllers
from ballast.internal.cmd.wiring import CONTROLLERS, DISABLED_BY_DEFAULT
from ballast.runtime.envtest import find_assets
from ballast.runtime.envtest.errors import AssetsNotFoundError
from ballast.runtime.envtest.pytest_plugin import unavailable
from tests.integration.config.deploy.conftest import REPO, find, one

CONFIG = REPO / "config"
SWITCHES = ("without-scheduling", "without-balancer", "consolidation", "karpenter", "valkey-sentinel", "metrics-secure")
"""The optional Components at the top of config/ (certmanager is config/default's own)."""
COMBINATIONS = sorted(
    {order for size in range(len(SWITCHES) + 1) for subset in itertools.combinations(SWITCHES, size)
     for order in (subset, subset[::-1])}
)  # fmt: skip
"""Every subset of the switches, listed forwards and backwards: every pair of them in both orders."""
DOCS_PAGE = REPO / "docs" / "install-options.md"
SCHEDULING = {
    (kind, "ballast-scheduling")
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "ClusterRole", "ClusterRoleBinding")
}
BALANCER = {("ClusterRole", "ballast-balancer"), ("ClusterRoleBinding", "ballast-balancer")}
CONSOLIDATION = {
    *(("ClusterRole", "ballast-consolidation"), ("ClusterRoleBinding", "ballast-consolidation")),
    *(("Role", "ballast-consolidation-catalogue"), ("RoleBinding", "ballast-consolidation-catalogue")),
}
KARPENTER = {("ClusterRole", "ballast-karpenter"), ("ClusterRoleBinding", "ballast-karpenter")}
METRICS_AUTH = {("ClusterRole", "ballast-metrics-auth"), ("ClusterRoleBinding", "ballast-metrics-auth")}


@pytest.fixture(scope="session")
def kubectl(request: pytest.FixtureRequest) -> Path:
    """The kubectl built with the envtest control plane (`make envtest`); no control plane is started."""
    try:
        assets = find_assets(request.config.getoption("--envtest-k8s-version"), build=False)
    except AssetsNotFoundError as exc:
        unavailable(f"no kubectl: {exc}")
    return assets.binary("kubectl")


def _render(kubectl: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(kubectl), "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(folder)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def _overlay(kubectl: Path, folder: Path, components: tuple[str, ...]) -> list[dict[str, Any]]:
    """An overlay of config/default with `components` (config/'s, in that order), rendered."""
    overlay = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(CONFIG / "default", folder)],
        "components": [os.path.relpath(CONFIG / name, folder) for name in components],
    }
    (folder / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
    result = _render(kubectl, folder)
    assert result.returncode == 0, f"components {components}:\n{result.stderr}"
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def _args(documents: list[dict[str, Any]]) -> Any:
    (container,) = one(documents, "Deployment", "ballast")["spec"]["template"]["spec"]["containers"]
    return build_parser().parse_args(container["args"])


def _present(documents: list[dict[str, Any]], objects: set[tuple[str, str]]) -> set[tuple[str, str]]:
    return {(d["kind"], d["metadata"]["name"]) for d in documents} & objects


def test_the_switches_are_every_optional_component_of_config() -> None:
    components = {
        path.parent.name
        for path in CONFIG.glob("*/kustomization.yaml")
        if yaml.safe_load(path.read_text())["kind"] == "Component"
    }
    assert components == {*SWITCHES, "certmanager"}
    default = yaml.safe_load((CONFIG / "default" / "kustomization.yaml").read_text())
    assert default["components"] == ["../certmanager"]


@pytest.mark.parametrize("components", COMBINATIONS, ids=lambda c: "+".join(c) or "none")
def test_every_combination_of_switches_renders_what_each_says(
    kubectl: Path, tmp_path: Path, components: tuple[str, ...]
) -> None:
    documents = _overlay(kubectl, tmp_path, components)
    scheduling = "without-scheduling" not in components
    balancer = "without-balancer" not in components
    consolidation = "consolidation" in components
    karpenter = "karpenter" in components
    metrics_secure = "metrics-secure" in components

    assert _present(documents, SCHEDULING) == (SCHEDULING if scheduling else set())
    assert _present(documents, BALANCER) == (BALANCER if balancer else set())
    assert _present(documents, CONSOLIDATION) == (CONSOLIDATION if consolidation else set())
    assert _present(documents, KARPENTER) == (KARPENTER if karpenter else set())
    assert _present(documents, METRICS_AUTH) == (METRICS_AUTH if metrics_secure else set())

    args = _args(documents)
    assert args.scheduling_webhooks is scheduling
    assert args.metrics_secure is metrics_secure  # the scrape reviews' rights exactly when the flag is on
    expected = set(CONTROLLERS) - set(DISABLED_BY_DEFAULT)
    expected = expected - ({"balancer"} if not balancer else set()) | ({"consolidation"} if consolidation else set())
    assert selected_controllers(args) == expected  # each controller runs exactly when its ClusterRole is there

    keys = [(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in documents]
    assert len(keys) == len(set(keys))
    assert find(documents, "CustomResourceDefinition")  # the CRDs stay, whatever is switched off


def test_the_issues_pair_in_both_orders(kubectl: Path, tmp_path: Path) -> None:
    # issue 29: without-balancer + consolidation rendered two --controllers flags and the later one won.
    for number, components in enumerate([("without-balancer", "consolidation"), ("consolidation", "without-balancer")]):
        folder = tmp_path / str(number)
        folder.mkdir()
        documents = _overlay(kubectl, folder, components)
        controllers = selected_controllers(_args(documents))
        assert "balancer" not in controllers
        assert "consolidation" in controllers
        assert _present(documents, BALANCER) == set()
        assert _present(documents, CONSOLIDATION) == CONSOLIDATION


@pytest.mark.parametrize("switch", SWITCHES)
def test_a_switch_is_a_component_not_a_base_and_says_so(kubectl: Path, switch: str) -> None:
    text = (CONFIG / switch / "kustomization.yaml").read_text()
    assert text.startswith("# A kustomize Component")
    assert "docs/install-options.md" in text or switch == "karpenter"
    # Alone it is no install: a switch that deletes fails, one that adds renders its objects and no operator.
    result = _render(kubectl, CONFIG / switch)
    if switch.startswith("without-"):
        assert result.returncode != 0
        assert "no resource matches strategic merge patch" in result.stderr
    else:
        assert result.returncode == 0, result.stderr
        assert find([doc for doc in yaml.safe_load_all(result.stdout) if doc], "Deployment") == []


def test_the_docs_example_overlay_renders_what_it_says(kubectl: Path, tmp_path: Path) -> None:
    text = DOCS_PAGE.read_text()
    for switch in SWITCHES:
        assert f"config/{switch}" in text
    blocks = [yaml.safe_load(block) for block in re.findall(r"^```yaml\n(.*?)^```", text, re.MULTILINE | re.DOTALL)]
    (example,) = [b for b in blocks if isinstance(b, dict) and b.get("kind") == "Kustomization" and "components" in b]
    # The page's overlay sits in config/overlays/<name>/: point its ../../ paths at config/ from here.
    relocate = {"resources", "components"}
    for key in relocate & set(example):
        example[key] = [
            os.path.relpath(CONFIG / path.removeprefix("../../"), tmp_path) if path.startswith("../../") else path
            for path in example[key]
        ]
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(example))
    result = _render(kubectl, tmp_path)
    assert result.returncode == 0, result.stderr
    documents = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    args = _args(documents)
    assert "balancer" not in selected_controllers(args)
    assert "consolidation" in selected_controllers(args)
    assert _present(documents, BALANCER) == set()
    assert _present(documents, CONSOLIDATION | KARPENTER) == CONSOLIDATION | KARPENTER
