"""config/samples: the presets as plain objects, valid for the API models and equal to docs/compatibility.md"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy, MetricsSource
from ballast.internal.dev.preset import KINDS, SAMPLES_DIR, PresetError, load_preset, object_path

PRESETS = ("local-testing", "homogeneous-large-fleet")


def metric_table(policy: ClusterResourcePolicy) -> list[tuple[str, str, str, str, str]]:
    return [
        (m.resource, m.field or "", m.source, m.aggregation or "", m.headroom or "") for m in policy.spec.metrics or []
    ]


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_has_the_four_objects_and_a_kustomization_listing_its_files(name: str) -> None:
    preset = load_preset(SAMPLES_DIR / name)
    assert [(o.KIND, o.metadata.name) for o in preset.objects] == [
        ("BallastConfig", "ballast"),
        ("ClusterResourcePolicy", "default"),
        ("MetricsSource", "kubernetes-metrics"),
        ("MetricsSource", "kubelet-summary"),
    ]
    kustomization = yaml.safe_load((SAMPLES_DIR / name / "kustomization.yaml").read_text())
    files = sorted(p.name for p in (SAMPLES_DIR / name).glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(kustomization["resources"]) == files
    for obj in preset.objects:
        assert object_path(obj).endswith(f"/{obj.PLURAL}/{obj.metadata.name}")


@pytest.mark.parametrize("name", PRESETS)
def test_the_files_are_complete_the_models_add_nothing(name: str) -> None:
    """Every field is written out: validating and writing back gives the file's own documents."""
    for path in (SAMPLES_DIR / name).glob("*.yaml"):
        if path.name == "kustomization.yaml":
            continue
        for document in yaml.safe_load_all(path.read_text()):
            kind = KINDS[document["kind"]]
            assert kind.model_validate(document).to_wire() == document, path


def test_the_default_preset_is_the_charts_default() -> None:
    preset = load_preset(SAMPLES_DIR / "homogeneous-large-fleet")
    policy = preset.policy()
    assert (policy.spec.priority, policy.spec.selector.to_wire() if policy.spec.selector else None) == (0, {})
    assert metric_table(policy) == [
        ("cpu", "request", "kubernetes-metrics", "avg", "1.25"),
        ("memory", "request", "kubernetes-metrics", "p95", "1.0"),  # Go: p75 (docs/design.md, difference 75)
        ("memory", "limit", "kubernetes-metrics", "p99", "1.2"),
        ("ephemeral-storage", "request", "kubelet-summary", "p90", "1.0"),
        ("ephemeral-storage", "limit", "kubelet-summary", "p99", "1.2"),
    ]
    assert policy.spec.readiness is not None
    assert policy.spec.readiness.to_wire() == {
        "minDataPoints": 250,
        "minTimeSpan": "24h",
        "maxCV": "1.5",
        "cvMeanFloor": {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"},
    }
    assert policy.spec.behaviors is not None
    assert policy.spec.behaviors.to_wire() == {
        "thresholds": {"default": "10%"},
        "resize": {"maxChangePerCycle": "50%", "interval": "15m"},
    }
    sources = {s.metadata.name: s.spec for s in preset.of_kind(MetricsSource)}
    assert {n: (s.type, s.config.poll_interval, s.config.reservoir_size) for n, s in sources.items()} == {
        "kubernetes-metrics": ("kubernetesMetrics", "300s", 10000),
        "kubelet-summary": ("kubeletSummary", "300s", 10000),
    }
    (config,) = preset.of_kind(BallastConfig)
    assert config.spec.identity_labels == ["app.kubernetes.io/name", "app.kubernetes.io/component"]
    assert (config.spec.orphan_ttl, config.spec.retention_window, config.spec.suspended) == ("168h", "168h", False)


def test_local_testing_is_the_default_with_its_overrides() -> None:
    base = load_preset(SAMPLES_DIR / "homogeneous-large-fleet")
    local = load_preset(SAMPLES_DIR / "local-testing")
    policy = local.policy()
    # Lists replace the base's wholesale: no ephemeral-storage entries.
    assert metric_table(policy) == metric_table(base.policy())[:3]
    assert policy.spec.readiness is not None
    assert policy.spec.readiness.to_wire() == {
        "minDataPoints": 5,
        "minTimeSpan": "1m",
        "maxCV": "2.0",
        "cvMeanFloor": {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"},  # inherited
    }
    assert policy.spec.behaviors is not None
    assert policy.spec.behaviors.to_wire() == {
        "thresholds": {"default": "10%"},
        "resize": {"maxChangePerCycle": "50%", "interval": "30s"},
    }
    assert {s.metadata.name: s.spec.config.poll_interval for s in local.of_kind(MetricsSource)} == {
        "kubernetes-metrics": "15s",
        "kubelet-summary": "15s",
    }
    assert local.of_kind(BallastConfig)[0].to_wire() == base.of_kind(BallastConfig)[0].to_wire()


def test_a_bad_document_is_refused_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(PresetError, match="does not exist"):
        load_preset(tmp_path / "missing")
    with pytest.raises(PresetError, match="holds no objects"):
        load_preset(tmp_path)
    (tmp_path / "policy.yaml").write_text(
        "apiVersion: ballast.tightlinesoftware.com/v1\nkind: ClusterResourcePolicy\nmetadata: {name: x}\n"
        "spec:\n  metrics:\n    - {resource: cpu, source: s, aggregation: p42}\n"
    )
    with pytest.raises(PresetError, match=r"(?s)policy\.yaml.*spec\.metrics\.0\.aggregation"):
        load_preset(tmp_path)
    (tmp_path / "policy.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(PresetError, match="not a Ballast configuration kind"):
        load_preset(tmp_path)
    with pytest.raises(PresetError, match="no ClusterResourcePolicy"):
        load_preset(SAMPLES_DIR / "local-testing").policy("other")


def test_the_memory_request_is_p95_in_the_chart_and_the_preset_and_the_go_preset_is_one_value_away() -> None:
    """docs/design.md, difference 75: the chart's defaultClusterResourcePolicy and the preset agree on every metric;
    the Go preset's memory request (p75 × 1.0) is the same policy with `aggregation: p75`."""
    values = yaml.safe_load((SAMPLES_DIR.parent / "helm" / "ballast" / "values.yaml").read_text())
    chart = values["defaultClusterResourcePolicy"]
    policy = load_preset(SAMPLES_DIR / "homogeneous-large-fleet").policy()
    assert policy.to_wire()["spec"]["metrics"] == chart["metrics"]
    wire = policy.to_wire()
    (memory_request,) = [m for m in wire["spec"]["metrics"] if (m["resource"], m["field"]) == ("memory", "request")]
    assert (memory_request["aggregation"], memory_request["headroom"]) == ("p95", "1.0")
    memory_request["aggregation"] = "p75"
    go = ClusterResourcePolicy.model_validate(wire)
    assert ("memory", "request", "kubernetes-metrics", "p75", "1.0") in metric_table(go)
