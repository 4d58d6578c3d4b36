"""The Helm chart's `values.schema.json`: Helm checks every `helm install`/`upgrade`/`template`/`lint` against it,
so a value the API server would refuse, or a key the chart does not read (a typo such as `replicaCont`), fails
before anything is rendered.

The keys the chart owns are closed (`additionalProperties: false`); the root also allows `global`, which a parent
chart passes to its dependencies. Kubernetes structures the chart passes through untouched (`resources`,
`affinity`, `tolerations`, `extraEnv`, …) are only typed: the API server checks them. The policy objects' fields
(`ballastConfig`, `defaultClusterResourcePolicy`, `trustZones[].namespaces`) are the CRDs' own schemas, taken from
the models (`crds.crd_schema`), closed wherever the CRD prunes unknown fields — so a typo there fails too instead
of being pruned by the API server.

`hack/gen-manifests` writes it (`rendered`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy
from ballast.api.customresource import CustomResource

from .ballast_crds import crd_schema

OUTPUT = Path("config/helm/ballast/values.schema.json")

GO_DURATION = r"^\+?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"
"""A non-negative Go duration (`time.ParseDuration`); whether it must be above 0 the templates check."""
LOG_LEVELS = ["debug", "info", "warn", "error"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]

Schema = dict[str, Any]


def _closed(properties: dict[str, Schema], description: str = "", **extra: Any) -> Schema:
    """An object holding only `properties`."""
    schema: Schema = {"type": "object"}
    if description:
        schema["description"] = description
    return schema | {"properties": properties, "additionalProperties": False} | extra


def _boolean(description: str = "") -> Schema:
    return {"type": "boolean", "description": description} if description else {"type": "boolean"}


def _string(description: str = "", **extra: Any) -> Schema:
    schema: Schema = {"type": "string"}
    if description:
        schema["description"] = description
    return schema | extra


def _integer(minimum: int, maximum: int | None = None, description: str = "") -> Schema:
    schema: Schema = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        schema["maximum"] = maximum
    if description:
        schema["description"] = description
    return schema


def _duration(description: str = "") -> Schema:
    return _string(description or "A Go duration, e.g. 30s, 10m or 1h30m.", pattern=GO_DURATION)


def _enabled(description: str, **properties: Schema) -> Schema:
    return _closed({"enabled": _boolean(), **properties}, description)


_OPEN_OBJECT: Schema = {"type": "object"}
_OPEN_ARRAY: Schema = {"type": "array"}
_STRING_MAP: Schema = {"type": "object", "additionalProperties": {"type": "string"}}
_RESOURCES: Schema = {"type": "object", "description": "A container's resources (requests, limits)."}


def _image(description: str) -> Schema:
    return _closed(
        {
            "repository": _string(minLength=1),
            "tag": {"type": ["string", "number"]},
            "pullPolicy": _string(enum=PULL_POLICIES),
        },
        description,
    )


def crd_values(kind: type[CustomResource], field: str = "spec") -> Schema:
    """The JSON Schema of `kind`'s `field` as the CRD declares it, closed where the CRD prunes unknown fields:
    Kubernetes extensions and defaults dropped, every object with `properties` and no `additionalProperties` (nor
    `x-kubernetes-preserve-unknown-fields`) given `additionalProperties: false`."""
    converted: Schema = _json_schema(crd_schema(kind)["properties"][field])
    return converted


def _json_schema(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_json_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted: Schema = {}
    for key, value in schema.items():
        if key.startswith("x-kubernetes-") or key == "default":
            continue
        if key == "properties":
            converted[key] = {name: _json_schema(child) for name, child in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
            converted[key] = _json_schema(value)
        else:
            converted[key] = value
    if schema.get("nullable"):
        converted.pop("nullable")
        if "type" in converted:
            converted["type"] = [converted["type"], "null"]
    if (
        "properties" in converted
        and "additionalProperties" not in converted
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        converted["additionalProperties"] = False
    return converted


def _metrics_source(description: str) -> Schema:
    return _closed(
        {
            "enabled": _boolean(),
            "name": _string("The MetricsSource's name (policies' metrics[].source).", minLength=1),
            "pollInterval": _duration("Time between two polls, a Go duration above 0."),
            "reservoirSize": _integer(1, description="Most samples kept per profile, container and resource."),
        },
        description,
    )


def _cluster_resource_policy() -> Schema:
    spec = crd_values(ClusterResourcePolicy)
    properties = {
        "enabled": _boolean(),
        "name": _string("The ClusterResourcePolicy's name.", minLength=1),
        **spec["properties"],
    }
    return spec | {"description": "The catch-all ClusterResourcePolicy (its spec, plus enabled and name).",
                   "properties": properties}  # fmt: skip


def _trust_zone() -> Schema:
    selector = crd_values(ClusterResourcePolicy)["properties"]["selector"]
    return _closed(
        {
            "name": _string("The zone's ClusterResourcePolicy name.", minLength=1),
            "namespaces": selector["properties"]["namespaces"],
            "priority": {"type": "integer", "description": "Default 10, above the catch-all."},
        },
        "A trust zone: a ClusterResourcePolicy with the catch-all's formulas over these namespaces.",
        required=["name", "namespaces"],
    )


def _ballast_config() -> Schema:
    spec = crd_values(BallastConfig)
    properties = {"enabled": _boolean(), **spec["properties"]}
    # The chart always renders identityLabels (values.yaml has them); an override may leave them out.
    return {k: v for k, v in spec.items() if k != "required"} | {
        "description": "The BallastConfig `ballast` (its spec, plus enabled).",
        "properties": properties,
    }


def values_schema() -> Schema:
    """The chart's `values.schema.json`."""
    level = _string(enum=LOG_LEVELS)
    lane_level = _string("'' inherits logging.level.", enum=["", *LOG_LEVELS])
    properties: dict[str, Schema] = {
        "global": {"type": "object", "description": "Values a parent chart shares with its dependencies."},
        "image": _image("The operator's image; tag defaults to the chart's appVersion."),
        "imagePullSecrets": _OPEN_ARRAY,
        "replicaCount": _integer(1, description="More than 1 needs leaderElect and a shared store."),
        "leaderElect": _boolean(),
        "podDisruptionBudget": _closed({"minAvailable": {"type": ["integer", "string"]}}),
        "gracefulShutdownTimeout": _integer(1, description="Seconds; below terminationGracePeriodSeconds."),
        "terminationGracePeriodSeconds": _integer(1),
        "resources": _RESOURCES,
        "webhook": _closed({"timeoutSeconds": _integer(1, 30, "The API server accepts 1 to 30.")}),
        "leaveAloneNamespaces": {
            "type": "array",
            "description": "Namespaces no lane touches, besides the release's (docs/design.md, difference 60).",
            "items": _string(pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", maxLength=63),
            "uniqueItems": True,
        },
        "scheduling": _closed(
            {
                "enabled": _boolean(),
                "failurePolicy": _string(enum=["Ignore", "Fail"]),
                "timeoutSeconds": _integer(1, 30, "The API server accepts 1 to 30."),
            },
            "The scheduling-policy (kupid) webhook configurations.",
        ),
        "balancer": _enabled("The Balancer controller.", reprocessPeriod=_duration("A Go duration above 0.")),
        "consolidation": _enabled(
            "The consolidation advisor (off by default).",
            interval=_duration("A Go duration above 0."),
            policy=_string(enum=["Balanced", "WhenEmptyOrUnderutilized", "WhenEmpty"]),
            poolLabel=_string(minLength=1),
            k=_integer(1, description="Karpenter's is 2."),
            karpenter=_boolean("Read Karpenter NodePools (needs enabled)."),
        ),
        "certManager": _enabled("Webhook TLS through cert-manager (false: ballastd's self-signed pair)."),
        "store": _closed(
            {
                "url": _string(
                    "redis://…, rediss://…, redis+sentinel://…/<service> or redis+cluster://… "
                    "(needs valkey.enabled=false).",
                    pattern=r"^(rediss?(\+sentinel|\+cluster)?://.+)?$",
                ),
                "minReplicas": _integer(
                    -1, description="Replicas that acknowledge each cycle; -1: ballastd's default."
                ),
                "bufferBytes": _integer(0, description="Memory for unacknowledged cycles; 0: ballastd's 64 MiB."),
                "existingSecret": _string(),
                "existingSecretKey": _string(minLength=1),
                "sqlite": _enabled(
                    "An embedded SQLite file (one replica, leaderElect=false).",
                    persistence=_enabled(
                        "A PersistentVolumeClaim (false: an emptyDir).",
                        size=_string(minLength=1),
                        storageClassName=_string(),
                    ),
                ),
            },
            "The history store: exactly one of valkey.enabled, url/existingSecret and sqlite.enabled.",
        ),
        "valkey": _enabled(
            "The bundled single-instance Valkey.",
            image=_image("Valkey's image."),
            resources=_RESOURCES,
            valkeyConfig=_string(),
            dataStorage=_enabled(
                "A volume claim (false: an emptyDir).", requestedSize=_string(minLength=1), className=_string()
            ),
            networkPolicy=_enabled("Ingress only from the operator's pods."),
            sentinel=_enabled(
                "Sentinel mode: a primary, replicas and sentinels (failover).",
                replicas=_integer(2, description="Data pods: one primary, the rest replicas."),
                sentinels=_integer(3, description="Sentinel pods (3 or more for a quorum that survives one loss)."),
                quorum=_integer(1),
                masterName=_string(minLength=1, pattern="^[A-Za-z0-9_.-]+$"),
                downAfterMilliseconds=_integer(100),
                failoverTimeoutMilliseconds=_integer(1000),
                resources=_RESOURCES,
            ),
            nodeSelector=_STRING_MAP,
            tolerations=_OPEN_ARRAY,
        ),
        "crds": _closed({"upgradeHook": _enabled("The pre-install/pre-upgrade Job running ballastd apply-crds.")}),
        "uninstallHook": _enabled("The pre-delete Job running ballastd uninstall."),
        "hookResources": _RESOURCES,
        "rbac": _closed({"kubeletSummary": _boolean("Grant nodes/proxy get (read values.yaml's warning).")}),
        "logging": _closed(
            {
                "level": level,
                "webhook": lane_level,
                "watcher": lane_level,
                "collector": lane_level,
                "adjuster": lane_level,
                "format": _string(enum=["json", "text"]),
            }
        ),
        "dryRun": _closed({"measure": _boolean(), "apply": _boolean(), "resize": _boolean()}),
        "telemetry": _closed(
            {
                "prometheus": _enabled(
                    "Serve /metrics with a Service <release>-metrics.",
                    port=_integer(1, 65535),
                    secure=_boolean(
                        "HTTPS, each scrape authenticated and authorised by the API server (ballastd --metrics-secure)."
                    ),
                    serviceMonitor=_enabled(
                        "A prometheus-operator ServiceMonitor.", interval=_duration(), scrapeTimeout=_duration()
                    ),
                ),
                "otel": _enabled(
                    "Push metrics over OTLP.",
                    endpoint=_string("host:port of an OpenTelemetry collector."),
                    protocol=_string(enum=["grpc", "http/protobuf"]),
                    insecure=_boolean(),
                    interval=_duration(),
                ),
                "serviceName": _string(minLength=1),
                "serviceNamespace": _string(),
            }
        ),
        "ballastConfig": _ballast_config(),
        "defaultMetricsSources": _closed(
            {
                "kubernetesMetrics": _metrics_source("cpu and memory from metrics.k8s.io."),
                "kubeletSummary": _metrics_source("ephemeral-storage from the kubelet Summary API."),
            }
        ),
        "trustZones": {"type": "array", "items": _trust_zone()},
        "defaultClusterResourcePolicy": _cluster_resource_policy(),
        "priorityClassName": _string(),
        "nodeSelector": _STRING_MAP,
        "tolerations": _OPEN_ARRAY,
        "affinity": _OPEN_OBJECT,
        "topologySpreadConstraints": _OPEN_ARRAY,
        "podAnnotations": _STRING_MAP,
        "podLabels": _STRING_MAP,
        "extraArgs": {"type": "array", "items": {"type": "string"}},
        "extraEnv": {"type": "array", "items": {"type": "object"}},
    }
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Ballast for Python chart values",
        "description": "Generated by hack/gen-manifests (ballast.internal.manifests.values_schema); do not edit.",
        **_closed(properties),
    }


def rendered(root: Path) -> dict[Path, str]:
    """The chart's `values.schema.json` under the repository `root` → its text."""
    return {root / OUTPUT: json.dumps(values_schema(), indent=2, ensure_ascii=False) + "\n"}
