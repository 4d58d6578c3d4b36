"""The Helm chart with a real helm: renders with default values and each preset, refuses unsafe HA settings with a
clear message, lints clean, and what it renders is what the code, config/ and config/samples/ say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.controllers.balancer import DEFAULT_REPROCESS_PERIOD
from ballast.internal.cmd.ballastd import (
    balancer_reprocess_period,
    build_parser,
    consolidation_settings,
    selected_controllers,
    store_url,
)
from ballast.internal.cmd.wiring import CONTROLLERS, DISABLED_BY_DEFAULT
from ballast.internal.manifests.webhooks import all_webhook_configurations
from tests.integration.config.deploy.conftest import CHART, PRESETS, REPO, find, helm_run, one, render, render_error

OPERATOR_IMAGE_ARGS = ("--health-probe-bind-address=:8081", "--webhook-cert-path=/certs/webhook")


def _manager(documents: list[dict[str, Any]]) -> dict[str, Any]:
    (container,) = one(documents, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def _samples(preset: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in _kustomized(REPO / "config" / "samples" / preset)}


def _kustomized(folder: Path) -> list[dict[str, Any]]:
    """The objects a kustomization's resources list, folders (bases) followed."""
    documents: list[dict[str, Any]] = []
    for resource in yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]:
        path = folder / resource
        if path.is_dir():
            documents += _kustomized(path)
        else:
            documents += [doc for doc in yaml.safe_load_all(path.read_text()) if doc and "apiVersion" in doc]
    return documents


def _policy_objects(documents: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    kinds = ("BallastConfig", "MetricsSource", "ClusterResourcePolicy")
    found = {}
    for document in documents:
        if document["kind"] in kinds:
            metadata = {k: v for k, v in document["metadata"].items() if k != "labels"}
            found[document["kind"], metadata["name"]] = {**document, "metadata": metadata}
    return found


# ------------------------------------------------------------------------------------------------ rendering


@pytest.mark.parametrize("preset", PRESETS)
def test_chart_renders_with_each_preset(helm: Path, preset: str) -> None:
    documents = render(helm, files=PRESETS[preset])
    kinds = {d["kind"] for d in documents}
    expected = {"Deployment", "Service", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Issuer",
                "Certificate", "StatefulSet", "ServiceAccount", "ClusterRole", "Job", "BallastConfig",
                "MetricsSource", "ClusterResourcePolicy"}  # fmt: skip
    assert expected <= kinds
    keys = [(d["apiVersion"], d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]) for d in documents]
    assert len(keys) == len(set(keys)), "an object is rendered twice"


@pytest.mark.parametrize("preset", PRESETS)
def test_the_presets_policy_objects_equal_the_samples(helm: Path, preset: str) -> None:
    rendered = _policy_objects(render(helm, files=PRESETS[preset]))
    assert rendered == _samples(preset)


def test_presets_differ_where_the_anchor_says(helm: Path) -> None:
    fleet = _policy_objects(render(helm))
    local = _policy_objects(render(helm, files=PRESETS["local-testing"]))
    policy = ("ClusterResourcePolicy", "default")
    assert fleet[policy]["spec"]["readiness"]["minDataPoints"] == 250
    assert local[policy]["spec"]["readiness"] == {
        "minDataPoints": 5, "minTimeSpan": "1m", "maxCV": "2.0",
        "cvMeanFloor": {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"},  # inherited from the default
    }  # fmt: skip
    assert [m["resource"] for m in local[policy]["spec"]["metrics"]] == ["cpu", "memory", "memory"]
    assert local["MetricsSource", "kubelet-summary"]["spec"]["config"]["pollInterval"] == "15s"
    zones = _policy_objects(render(helm, files=PRESETS["team-zones"]))
    payments = zones["ClusterResourcePolicy", "zone-payments"]["spec"]
    assert payments["selector"] == {"namespaces": {"include": ["/payments(-.*)?/"]}}
    assert payments["priority"] == 10
    assert payments["metrics"] == fleet[policy]["spec"]["metrics"]  # the catch-all's formulas
    assert zones[policy] == fleet[policy]


def test_every_deployment_argument_is_a_ballastd_flag(helm: Path) -> None:
    container = _manager(render(helm))
    args = build_parser().parse_args(container["args"])  # SystemExit on anything ballastd does not have
    assert args.command == "run"
    assert set(OPERATOR_IMAGE_ARGS) <= set(container["args"])
    assert args.leader_elect
    assert store_url(args) == "redis://ballast-valkey:6379/0"
    assert "command" not in container  # the image's ENTRYPOINT (ballastd) runs with these args


def test_values_map_to_flags(helm: Path) -> None:
    settings = {
        "logging.level": "debug", "logging.collector": "warn", "logging.format": "text", "dryRun.apply": "true",
        "telemetry.prometheus.enabled": "true", "telemetry.prometheus.port": "9090",
        "extraArgs[0]": "--controllers=*\\,-resourceadjuster",
    }  # fmt: skip
    documents = render(helm, settings=settings)
    args = build_parser().parse_args(_manager(documents)["args"])
    assert (args.log_level, args.log_level_collector, args.log_level_webhook, args.log_format) == (
        "debug", "warn", None, "text",
    )  # fmt: skip
    assert (args.dry_run_measure, args.dry_run_apply, args.dry_run_resize) == (False, True, False)
    assert args.metrics_bind_address == ":9090"
    assert args.controllers == "*,-resourceadjuster"
    assert one(documents, "Service", "ballast-metrics")["spec"]["ports"][0]["port"] == 9090


def test_otel_values_map_to_the_go_operators_flags_and_resource(helm: Path) -> None:
    settings = {"telemetry.otel.enabled": "true", "telemetry.otel.endpoint": "otel-collector:4318",
                "telemetry.otel.protocol": "http/protobuf", "telemetry.otel.interval": "1m"}  # fmt: skip
    container = _manager(render(helm, settings=settings))
    args = build_parser().parse_args(container["args"])
    assert (args.otel_metrics_endpoint, args.otel_metrics_protocol, args.otel_metrics_interval) == (
        "otel-collector:4318", "http/protobuf", "1m",
    )  # fmt: skip
    assert not args.otel_metrics_insecure
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["OTEL_SERVICE_NAME"] == "ballast"
    assert "service.instance.id=$(POD_NAME)" in env["OTEL_RESOURCE_ATTRIBUTES"]
    assert "--otel-metrics-endpoint" not in " ".join(_manager(render(helm))["args"])  # off by default


def test_high_availability_settings(helm: Path) -> None:
    settings = {"replicaCount": "3", "priorityClassName": "system-cluster-critical", "webhook.timeoutSeconds": "5"}
    documents = render(helm, settings=settings)
    deployment = one(documents, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 3
    assert pod["priorityClassName"] == "system-cluster-critical"
    anti = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert anti["podAffinityTerm"]["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    budget = one(documents, "PodDisruptionBudget")
    assert budget["spec"]["minAvailable"] == 1
    assert budget["spec"]["selector"] == deployment["spec"]["selector"]
    args = build_parser().parse_args(pod["containers"][0]["args"])
    assert args.leader_elect
    assert pod["terminationGracePeriodSeconds"] > args.graceful_shutdown_timeout
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        # scheduling.timeoutSeconds sets the scheduling configurations' own
        assert {w["timeoutSeconds"] for w in one(documents, kind, "ballast")["webhooks"]} == {5}
    assert find(render(helm), "PodDisruptionBudget") == []  # one replica: no budget to keep


def test_topology_spread_replaces_nothing_and_custom_affinity_wins(helm: Path) -> None:
    spread = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}
    settings = {
        "replicaCount": "2",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].key": "pool",
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        ".matchExpressions[0].operator": "Exists",
        **{f"topologySpreadConstraints[0].{key}": str(value) for key, value in spread.items()},
    }
    pod = one(render(helm, settings=settings), "Deployment")["spec"]["template"]["spec"]
    assert "podAntiAffinity" not in pod["affinity"]
    assert pod["topologySpreadConstraints"] == [spread]


# ------------------------------------------------------------------------------------------------ refusals


def test_two_replicas_without_leader_election_fail_with_a_clear_message(helm: Path) -> None:
    error = render_error(helm, {"replicaCount": "2", "leaderElect": "false"})
    assert "replicaCount=2 needs leaderElect=true" in error
    assert "only the Lease holder may reconcile" in error


def test_two_replicas_with_the_sqlite_store_fail_with_a_clear_message(helm: Path) -> None:
    error = render_error(helm, {"replicaCount": "2", "valkey.enabled": "false", "store.sqlite.enabled": "true"})
    assert "replicaCount=2 needs a shared Redis/Valkey store" in error
    assert "each replica would keep its own history" in error


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"valkey.enabled": "false"}, "no history store"),
        ({"store.url": "redis://redis:6379/0"}, "choose one history store"),
        ({"valkey.enabled": "false", "store.url": "http://redis"}, 'store.url "http://redis": expected redis://'),
        ({"valkey.enabled": "false", "store.sqlite.enabled": "true"}, "store.sqlite.enabled needs leaderElect=false"),
        ({"terminationGracePeriodSeconds": "30"}, "must be longer than gracefulShutdownTimeout=30"),
        ({"webhook.timeoutSeconds": "31"}, "webhook.timeoutSeconds=31: the API server accepts 1 to 30"),
        ({"scheduling.timeoutSeconds": "100"}, "scheduling.timeoutSeconds=100: the API server accepts 1 to 30"),
        (
            {"scheduling.failurePolicy": "Sometimes"},
            'scheduling.failurePolicy "Sometimes": the API server accepts Ignore or Fail',
        ),
        ({"rbac.kubeletSummary": "false"}, "defaultMetricsSources.kubeletSummary.enabled needs rbac.kubeletSummary"),
        ({"replicaCount": "0"}, "replicaCount must be at least 1"),
        ({"telemetry.otel.enabled": "true"}, "telemetry.otel.enabled needs telemetry.otel.endpoint"),
        ({"telemetry.otel.protocol": "thrift"}, 'telemetry.otel.protocol "thrift": expected grpc or http/protobuf'),
        ({"balancer.reprocessPeriod": "15"}, 'balancer.reprocessPeriod "15": expected a Go duration above 0'),
        ({"balancer.reprocessPeriod": "0s"}, 'balancer.reprocessPeriod "0s": expected a Go duration above 0'),
        (
            {"balancer.enabled": "false", "extraArgs[0]": "--balancer=true"},
            'extraArgs "--balancer=true": set balancer.enabled or consolidation.enabled instead',
        ),
        (
            {"extraArgs[0]": "--consolidation"},
            'extraArgs "--consolidation": set balancer.enabled or consolidation.enabled instead',
        ),
        (
            {"consolidation.enabled": "true", "consolidation.interval": "0s"},
            'consolidation.interval "0s": expected a Go duration above 0',
        ),
        (
            {"consolidation.enabled": "true", "consolidation.policy": "Sometimes"},
            'consolidation.policy "Sometimes": expected Balanced, WhenEmptyOrUnderutilized or WhenEmpty',
        ),
        ({"consolidation.enabled": "true", "consolidation.k": "0"}, "consolidation.k=0: expected a positive integer"),
        ({"consolidation.karpenter": "true"}, "consolidation.karpenter=true needs consolidation.enabled=true"),
        (
            {"extraArgs[0]": "--controllers=*\\,consolidation"},
            'consolidation.enabled=false, but extraArgs "--controllers=*,consolidation" would run the consolidation',
        ),
    ],
)
def test_inconsistent_values_fail_naming_what_to_change(helm: Path, settings: dict[str, str], message: str) -> None:
    # The templates' own checks: values.schema.json refuses the wrong types and ranges among these first
    # (test_values_schema.py), so they are shown here as `--skip-schema-validation` would render them.
    assert message in render_error(helm, settings, "--skip-schema-validation")
    assert render_error(helm, settings)  # refused with the schema too


def test_helm_lint_is_clean(helm: Path) -> None:
    for files in PRESETS.values():
        result = helm_run(helm, "lint", "--strict", str(CHART), *[arg for f in files for arg in ("-f", str(f))])
        assert result.returncode == 0, result.stdout + result.stderr
        assert "[WARNING]" not in result.stdout
        assert "[ERROR]" not in result.stdout
        assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


# ------------------------------------------------------------------------------------------ modes and stores


def test_self_signed_mode_without_cert_manager(helm: Path) -> None:
    documents = render(helm, release="bl", namespace="ops", settings={"certManager.enabled": "false"})
    assert find(documents, "Issuer") == []
    assert find(documents, "Certificate") == []
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for name in ("bl", "bl-scheduling"):
            assert "annotations" not in one(documents, kind, name)["metadata"]
    container = _manager(documents)
    args = build_parser().parse_args(container["args"])
    assert args.webhook_self_signed
    assert (args.webhook_service_name, args.webhook_secret_name, args.webhook_configuration_name) == (
        "bl-webhook", "bl-webhook-cert", "bl",
    )  # fmt: skip
    volumes = {v["name"]: v for v in one(documents, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    assert volumes["webhook-cert"] == {"name": "webhook-cert", "emptyDir": {}}  # ballastd writes the pair there
    # The RBAC of rbac.yaml for that one Secret and those two configurations is in the same render.
    secret_role = one(documents, "Role", "bl-webhook-certificate")
    assert any(rule.get("resourceNames") == ["bl-webhook-cert"] for rule in secret_role["rules"])
    configurations_role = one(documents, "ClusterRole", "bl-webhook-configurations")
    assert configurations_role["rules"][0]["resourceNames"] == ["bl", "bl-scheduling"]


def test_cert_manager_mode_wires_certificate_secret_and_injection(helm: Path) -> None:
    documents = render(helm, release="bl", namespace="ops")
    certificate = one(documents, "Certificate")
    assert certificate["spec"]["dnsNames"] == ["bl-webhook.ops.svc", "bl-webhook.ops.svc.cluster.local"]
    assert certificate["spec"]["issuerRef"] == {"kind": "Issuer", "name": one(documents, "Issuer")["metadata"]["name"]}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for name in ("bl", "bl-scheduling"):
            annotations = one(documents, kind, name)["metadata"]["annotations"]
            assert annotations == {"cert-manager.io/inject-ca-from": "ops/bl-serving-cert"}
    volumes = {v["name"]: v for v in one(documents, "Deployment")["spec"]["template"]["spec"]["volumes"]}
    assert volumes["webhook-cert"]["secret"]["secretName"] == certificate["spec"]["secretName"] == "bl-webhook-cert"


def test_webhook_configurations_are_the_codes(helm: Path) -> None:
    documents = render(helm, release="bl", namespace="ops", settings={"certManager.enabled": "false"})
    expected = all_webhook_configurations(service_name="bl-webhook", service_namespace="ops", name="bl")
    assert len(expected) == 4
    for configuration in expected:
        rendered = one(documents, configuration["kind"], configuration["metadata"]["name"])
        assert rendered["webhooks"] == configuration["webhooks"]
        assert rendered["metadata"]["name"] == configuration["metadata"]["name"]
        assert configuration["metadata"]["labels"].items() <= rendered["metadata"]["labels"].items()
    service = one(documents, "Service", "bl-webhook")
    assert service["spec"]["ports"][0]["port"] == expected[0]["webhooks"][0]["clientConfig"]["service"]["port"]


def test_scheduling_values_set_the_configurations_and_the_flag(helm: Path) -> None:
    settings = {"scheduling.failurePolicy": "Fail", "scheduling.timeoutSeconds": "5"}
    documents = render(helm, release="bl", namespace="ops", settings=settings)
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        (webhook,) = one(documents, kind, "bl-scheduling")["webhooks"]
        assert (webhook["failurePolicy"], webhook["timeoutSeconds"]) == ("Fail", 5)
    args = build_parser().parse_args(one(documents, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"])
    assert (args.scheduling_webhooks, args.webhook_configuration_name) == (True, "bl")
    off = render(helm, release="bl", namespace="ops", settings={"scheduling.enabled": "false"})
    assert not [d for d in off if d["metadata"]["name"] == "bl-scheduling"]
    assert find(off, "ClusterRole", "bl-scheduling") == []
    args = build_parser().parse_args(one(off, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"])
    assert args.scheduling_webhooks is False


def test_balancer_values_set_the_flags_and_the_role(helm: Path) -> None:
    default = build_parser().parse_args(_manager(render(helm))["args"])
    on_by_default = set(CONTROLLERS) - set(DISABLED_BY_DEFAULT)
    assert selected_controllers(default) == on_by_default  # the chart's default is ballastd's
    assert balancer_reprocess_period(default) == DEFAULT_REPROCESS_PERIOD
    documents = render(helm, release="bl", namespace="ops", settings={"balancer.reprocessPeriod": "1m30s"})
    assert balancer_reprocess_period(build_parser().parse_args(_manager(documents)["args"])) == 90.0
    role = one(documents, "ClusterRole", "bl-balancer")
    assert {"balancers/status", "deployments/scale"} <= {r for rule in role["rules"] for r in rule["resources"]}
    assert one(documents, "ClusterRoleBinding", "bl-balancer")["subjects"] == [
        {"kind": "ServiceAccount", "name": "bl", "namespace": "ops"}
    ]
    off = render(helm, release="bl", namespace="ops", settings={"balancer.enabled": "false"})
    assert find(off, "ClusterRole", "bl-balancer") == find(off, "ClusterRoleBinding", "bl-balancer") == []
    args = build_parser().parse_args(_manager(off)["args"])
    assert selected_controllers(args) == on_by_default - {"balancer"}
    # --balancer=false wins over an extraArgs --controllers, which cannot turn the balancer back on.
    settings = {"balancer.enabled": "false", "extraArgs[0]": "--controllers=*\\,-resourceadjuster"}
    args = build_parser().parse_args(_manager(render(helm, settings=settings))["args"])
    assert selected_controllers(args) == on_by_default - {"balancer", "resourceadjuster"}
    args = build_parser().parse_args(
        _manager(render(helm, settings={**settings, "extraArgs[0]": "--controllers=*"}))["args"]
    )
    assert selected_controllers(args) == on_by_default - {"balancer"}


def test_consolidation_values_set_the_flags_and_the_roles(helm: Path) -> None:
    advisor = ("bl-consolidation", "bl-consolidation-catalogue", "bl-karpenter")
    default = render(helm, release="bl", namespace="ops")
    assert [d for d in default if d["metadata"]["name"] in advisor] == []  # off by default, as ballastd's *
    assert "consolidation" not in selected_controllers(build_parser().parse_args(_manager(default)["args"]))

    settings = {"consolidation.enabled": "true", "consolidation.interval": "1h", "consolidation.policy": "WhenEmpty",
                "consolidation.poolLabel": "example.com/pool", "consolidation.k": "3"}  # fmt: skip
    documents = render(helm, release="bl", namespace="ops", settings=settings)
    args = build_parser().parse_args(_manager(documents)["args"])
    assert selected_controllers(args) == set(CONTROLLERS)
    advice = consolidation_settings(args)
    assert (advice.interval, advice.default_policy, advice.k) == (3600.0, "WhenEmpty", 3.0)
    assert (advice.read.catalogue, advice.read.pool_label) == (
        ("ops", "bl-consolidation-catalogue"),
        "example.com/pool",
    )
    role = one(documents, "ClusterRole", "bl-consolidation")
    assert {"nodes", "poddisruptionbudgets", "consolidationreports/status"} <= {
        r for rule in role["rules"] for r in rule["resources"]
    }  # fmt: skip
    catalogue = one(documents, "Role", "bl-consolidation-catalogue")
    assert catalogue["metadata"]["namespace"] == "ops"
    assert catalogue["rules"][0]["resourceNames"] == ["bl-consolidation-catalogue"]
    assert find(documents, "ClusterRole", "bl-karpenter") == []
    with_karpenter = render(helm, release="bl", namespace="ops",
                            settings={**settings, "consolidation.karpenter": "true"})  # fmt: skip
    assert one(with_karpenter, "ClusterRole", "bl-karpenter")["rules"][0]["resources"] == ["nodepools"]

    both = render(helm, settings={"consolidation.enabled": "true", "balancer.enabled": "false"})
    args = build_parser().parse_args(_manager(both)["args"])
    assert selected_controllers(args) == set(CONTROLLERS) - {"balancer"}


def test_bundled_valkey_matches_the_anchors_values(helm: Path) -> None:
    documents = render(helm)
    statefulset = one(documents, "StatefulSet", "ballast-valkey")
    (container,) = statefulset["spec"]["template"]["spec"]["containers"]
    assert container["resources"] == {"requests": {"cpu": "50m", "memory": "96Mi"}, "limits": {"memory": "96Mi"}}
    config = one(documents, "ConfigMap", "ballast-valkey")["data"]["valkey.conf"].splitlines()
    assert {"maxmemory 64mb", "maxmemory-policy noeviction", "appendonly yes", "dir /data"} <= set(config)
    (claim,) = statefulset["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "192Mi"
    assert statefulset["spec"]["replicas"] == 1
    assert one(documents, "Service", "ballast-valkey")["spec"]["clusterIP"] == "None"
    assert container["securityContext"]["readOnlyRootFilesystem"] is True


def test_external_store_from_a_secret(helm: Path) -> None:
    settings = {"valkey.enabled": "false", "store.existingSecret": "history", "replicaCount": "2"}
    documents = render(helm, settings=settings)
    assert find(documents, "StatefulSet") == []
    container = _manager(documents)
    env = {item["name"]: item for item in container["env"]}
    assert env["REDIS_URL"]["valueFrom"]["secretKeyRef"] == {"name": "history", "key": "url"}
    args = build_parser().parse_args(container["args"])
    assert args.store is None  # ballastd reads $REDIS_URL (the --redis-url default)


def test_sqlite_for_one_replica_on_a_volume_under_the_data_dir(helm: Path) -> None:
    settings = {"valkey.enabled": "false", "store.sqlite.enabled": "true", "leaderElect": "false"}
    documents = render(helm, settings=settings)
    deployment = one(documents, "Deployment")
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    container = _manager(documents)
    args = build_parser().parse_args(container["args"])
    assert store_url(args) == "sqlite:////var/lib/ballast/history.db"
    assert args.data_dir == "/var/lib/ballast"
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["data"] == args.data_dir
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    claim = one(documents, "PersistentVolumeClaim")
    assert volumes["data"]["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    assert find(documents, "StatefulSet") == []


def test_kubelet_summary_rbac_follows_the_value(helm: Path) -> None:
    granted = render(helm)
    assert one(granted, "ClusterRole", "ballast-kubelet-summary")["rules"] == [
        {"apiGroups": [""], "resources": ["nodes/proxy"], "verbs": ["get"]}
    ]
    settings = {"rbac.kubeletSummary": "false", "defaultMetricsSources.kubeletSummary.enabled": "false"}
    assert find(render(helm, settings=settings), "ClusterRole", "ballast-kubelet-summary") == []
    values = (CHART / "values.yaml").read_text()
    assert "nodes/proxy reaches the kubelet's whole API" in values


def test_hooks_run_the_images_commands_with_their_own_accounts(helm: Path) -> None:
    documents = render(helm, release="bl", namespace="ops")
    jobs = {job["metadata"]["annotations"]["helm.sh/hook"]: job for job in find(documents, "Job")}
    assert set(jobs) == {"pre-install,pre-upgrade", "pre-delete"}
    crd_pod = jobs["pre-install,pre-upgrade"]["spec"]["template"]["spec"]
    assert crd_pod["containers"][0]["args"] == ["apply-crds"]
    assert crd_pod["serviceAccountName"] == "bl-crd-installer"
    uninstall_pod = jobs["pre-delete"]["spec"]["template"]["spec"]
    args = build_parser().parse_args(uninstall_pod["containers"][0]["args"])
    assert (args.command, args.deployment) == ("uninstall", "bl")
    assert uninstall_pod["serviceAccountName"] == "bl-uninstall"
    for pod in (crd_pod, uninstall_pod):
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True
    assert (
        find(render(helm, settings={"crds.upgradeHook.enabled": "false", "uninstallHook.enabled": "false"}), "Job")
        == []
    )


def test_the_chart_installs_the_crds_it_upgrades() -> None:
    chart_crds = sorted(p.name for p in (CHART / "crds").glob("*.yaml"))
    assert chart_crds == sorted(p.name for p in (REPO / "config" / "crd" / "bases").glob("*.yaml"))
