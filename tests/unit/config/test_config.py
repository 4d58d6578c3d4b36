"""config/ without a cluster: the manager Deployment, webhook, certificate and store agree with each other and
with the flags `ballastd` really has (that the generated files are current is
tests/unit/internal/manifests/test_generate.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast import __version__
from ballast.internal.cmd.ballastd import build_parser, store_url
from ballast.internal.manifests.webhooks import all_webhook_configurations
from tests.unit.config.dockerfile import REPO

CONFIG = REPO / "config"


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _one(path: Path, kind: str) -> dict[str, Any]:
    (found,) = [doc for doc in _documents(path) if doc["kind"] == kind]
    return found


@pytest.fixture(scope="module")
def manager() -> dict[str, Any]:
    return _one(CONFIG / "manager" / "manager.yaml", "Deployment")


@pytest.fixture(scope="module")
def container(manager: dict[str, Any]) -> dict[str, Any]:
    (found,) = manager["spec"]["template"]["spec"]["containers"]
    assert isinstance(found, dict)
    return found


def test_webhook_manifests_are_the_codes_configurations() -> None:
    expected = all_webhook_configurations(
        service_name="ballast-webhook", service_namespace="ballast-system", name="ballast"
    )
    assert _documents(CONFIG / "webhook" / "manifests.yaml") == expected


def test_chart_crds_and_kustomize_crds_are_the_same_files() -> None:
    bases = {p.name: p.read_text() for p in (CONFIG / "crd" / "bases").glob("*.yaml")}
    chart = {p.name: p.read_text() for p in (CONFIG / "helm" / "ballast" / "crds").glob("*.yaml")}
    assert chart == bases
    listed = yaml.safe_load((CONFIG / "crd" / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(f"bases/{name}" for name in bases)


def test_every_manager_argument_is_a_ballastd_flag(container: dict[str, Any]) -> None:
    args = build_parser().parse_args(container["args"])  # SystemExit on an unknown flag or a bad value
    assert args.command == "run"
    assert args.leader_elect
    assert store_url(args) == "redis://ballast-valkey:6379/0"  # ballastd accepts the store with --leader-elect


def test_manager_runs_non_root_read_only_without_capabilities(
    manager: dict[str, Any], container: dict[str, Any]
) -> None:
    pod = manager["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert pod["serviceAccountName"] == "ballast"


def test_probes_and_ports_match_the_bind_addresses(container: dict[str, Any]) -> None:
    args = build_parser().parse_args(container["args"])
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert args.health_probe_bind_address == f":{ports['health']}" == ":8081"
    assert args.webhook_bind_address == f":{ports['webhook']}"
    assert args.metrics_bind_address == f":{ports['metrics']}"
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}


def test_grace_period_outlasts_the_managers_shutdown(manager: dict[str, Any], container: dict[str, Any]) -> None:
    args = build_parser().parse_args(container["args"])
    assert manager["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > args.graceful_shutdown_timeout


def test_pod_namespace_comes_from_the_downward_api(container: dict[str, Any]) -> None:
    env = {item["name"]: item for item in container["env"]}
    assert env["POD_NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"


def test_webhook_certificate_secret_service_and_mount_agree(manager: dict[str, Any], container: dict[str, Any]) -> None:
    args = build_parser().parse_args(container["args"])
    mounts = {mount["name"]: mount for mount in container["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in manager["spec"]["template"]["spec"]["volumes"]}
    assert mounts["webhook-cert"]["mountPath"] == args.webhook_cert_path == "/certs/webhook"
    certificate = _one(CONFIG / "certmanager" / "certificate.yaml", "Certificate")
    assert volumes["webhook-cert"]["secret"]["secretName"] == certificate["spec"]["secretName"]
    service = _one(CONFIG / "webhook" / "service.yaml", "Service")
    namespace = service["metadata"]["namespace"]
    assert f"{service['metadata']['name']}.{namespace}.svc" in certificate["spec"]["dnsNames"]
    assert service["spec"]["selector"].items() <= manager["spec"]["template"]["metadata"]["labels"].items()
    assert service["spec"]["ports"][0]["targetPort"] == "webhook"
    patch = yaml.safe_load((CONFIG / "certmanager" / "inject-ca.yaml").read_text())
    injected = patch[0]["value"]["cert-manager.io/inject-ca-from"]
    assert injected == f"{certificate['metadata']['namespace']}/{certificate['metadata']['name']}"
    assert (
        certificate["spec"]["issuerRef"]["name"]
        == _one(CONFIG / "certmanager" / "issuer.yaml", "Issuer")["metadata"]["name"]
    )


def test_the_store_url_names_the_valkey_service(container: dict[str, Any]) -> None:
    args = build_parser().parse_args(container["args"])
    service = _one(CONFIG / "manager" / "valkey.yaml", "Service")
    statefulset = _one(CONFIG / "manager" / "valkey.yaml", "StatefulSet")
    port = service["spec"]["ports"][0]["port"]
    assert args.store == f"redis://{service['metadata']['name']}:{port}/0"
    assert statefulset["spec"]["serviceName"] == service["metadata"]["name"]
    config = _one(CONFIG / "manager" / "valkey.yaml", "ConfigMap")["data"]["valkey.conf"]
    assert "maxmemory 64mb" in config
    assert "maxmemory-policy noeviction" in config
    (claim,) = statefulset["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "192Mi"


def test_versions_agree_across_image_chart_and_package() -> None:
    kustomization = yaml.safe_load((CONFIG / "manager" / "kustomization.yaml").read_text())
    (image,) = kustomization["images"]
    chart = yaml.safe_load((CONFIG / "helm" / "ballast" / "Chart.yaml").read_text())
    assert image["newTag"] == chart["appVersion"] == __version__


def test_overlays_build_on_default_and_the_samples() -> None:
    presets = sorted(path.name for path in (CONFIG / "overlays").iterdir())
    assert presets == ["homogeneous-large-fleet", "local-testing", "team-zones"]
    for preset in presets:
        overlay = CONFIG / "overlays" / preset
        resources = yaml.safe_load((overlay / "kustomization.yaml").read_text())["resources"]
        assert resources == ["../../default", f"../../samples/{preset}"]
        for resource in resources:
            assert (overlay / resource / "kustomization.yaml").is_file(), resource


def test_kustomizations_list_only_existing_files() -> None:
    for kustomization in CONFIG.glob("**/kustomization.yaml"):
        if "helm" in kustomization.parts:
            continue
        spec = yaml.safe_load(kustomization.read_text())
        for entry in [*spec.get("resources", []), *spec.get("components", [])]:
            assert (kustomization.parent / entry).exists(), f"{kustomization}: {entry}"
        for patch in spec.get("patches", []):
            if "path" in patch:  # an inline `patch:` has nothing to find
                assert (kustomization.parent / patch["path"]).is_file(), f"{kustomization}: {patch['path']}"


def test_the_chart_has_no_subcharts_or_dependencies() -> None:
    chart_dir = CONFIG / "helm" / "ballast"
    chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    assert "dependencies" not in chart
    assert not (chart_dir / "charts").exists()
