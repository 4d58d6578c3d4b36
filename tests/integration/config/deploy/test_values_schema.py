"""The chart's values.schema.json with a real helm: values the API server would refuse and keys the chart does not
read fail `helm template` and `helm lint`, naming the key; good values, every preset file, the chart as a dependency
(with `global`) and every values example in the docs pass."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.integration.config.deploy.conftest import CHART, REPO, helm_run, one, render, render_error, values_args

SCHEMA_ERROR = "values don't meet the specifications of the schema"
VALUE_KEYS = set(yaml.safe_load((CHART / "values.yaml").read_text())) | {"global"}
DOCS = sorted(
    [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "config").rglob("*.md")],
)
# `--set a=b,c=d` (or --set-string) in a command or a code span; a `# refused` comment on its line expects a refusal.
SET_FLAG = re.compile(r"--set(?:-string)?[ =]['\"]?([^\s`'\"]+)")
FENCED_YAML = re.compile(r"^```ya?ml\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _lint(helm: Path, *args: str) -> tuple[int, str]:
    result = helm_run(helm, "lint", "--strict", str(CHART), *args)
    return result.returncode, result.stdout + result.stderr


# -------------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("settings", "reported"),
    [
        # issue 29: each rendered before, then the API server refused it (or the typo vanished).
        ({"scheduling.failurePolicy": "Sometimes"}, "at '/scheduling/failurePolicy': value must be one of"),
        ({"scheduling.timeoutSeconds": "100"}, "at '/scheduling/timeoutSeconds': maximum: got 100, want 30"),
        ({"replicaCont": "3"}, "at '': additional properties 'replicaCont' not allowed"),
        ({"webhook.timeoutSeconds": "0"}, "at '/webhook/timeoutSeconds': minimum: got 0, want 1"),
        ({"scheduling.enabled": "nope"}, "at '/scheduling/enabled': got string, want boolean"),
        ({"balancer.reprocessPeriod": "15"}, "at '/balancer/reprocessPeriod': got number, want string"),
        ({"consolidation.intervall": "1h"}, "at '/consolidation': additional properties 'intervall' not allowed"),
        ({"consolidation.policy": "Sometimes"}, "at '/consolidation/policy': value must be one of"),
        ({"store.url": "http://redis"}, "at '/store/url': 'http://redis' does not match pattern"),
        ({"logging.level": "verbose"}, "at '/logging/level': value must be one of"),
        ({"telemetry.prometheus.port": "70000"}, "at '/telemetry/prometheus/port': maximum: got 70,000, want 65,535"),
        ({"valkey.image.pullPolicy": "Sometimes"}, "at '/valkey/image/pullPolicy': value must be one of"),
        # The policy objects' fields are the CRDs' schemas, closed: a typo fails instead of being pruned.
        ({"ballastConfig.orphanTtl": "1h"}, "at '/ballastConfig': additional properties 'orphanTtl' not allowed"),
        ({"ballastConfig.orphanTTL": "a week"}, "at '/ballastConfig/orphanTTL': 'a week' does not match pattern"),
        (
            {"defaultClusterResourcePolicy.readiness.minDatapoints": "5"},
            "at '/defaultClusterResourcePolicy/readiness': additional properties 'minDatapoints' not allowed",
        ),
        (
            {"defaultClusterResourcePolicy.metrics[0].aggregation": "median"},
            "at '/defaultClusterResourcePolicy/metrics/0/aggregation': value must be one of",
        ),
        ({"trustZones[0].name": "zone-a"}, "at '/trustZones/0': missing property 'namespaces'"),
        ({"defaultMetricsSources.kubeletSummary.reservoirSize": "0"}, "reservoirSize': minimum: got 0, want 1"),
    ],
)
def test_values_outside_the_schema_are_refused_naming_the_key(
    helm: Path, settings: dict[str, str], reported: str
) -> None:
    error = render_error(helm, settings)
    assert SCHEMA_ERROR in error
    assert reported in error
    returncode, output = _lint(helm, *values_args(settings=settings))
    assert returncode != 0
    assert reported in output


def test_the_issues_scheduling_values_rendered_before_and_the_api_server_refuses_them(helm: Path) -> None:
    # What values.schema.json now catches at render time was rendered as is without it (the API server then
    # refused the configurations); the typo rendered replicas: 1 silently.
    settings = {"scheduling.failurePolicy": "Sometimes", "scheduling.timeoutSeconds": "100", "replicaCont": "3"}
    error = render_error(helm, settings)
    assert "'/scheduling/failurePolicy'" in error
    assert "'/scheduling/timeoutSeconds'" in error
    assert "'replicaCont' not allowed" in error
    # Without the schema the templates still refuse what the API server would.
    error = render_error(helm, settings, "--skip-schema-validation")
    assert 'scheduling.failurePolicy "Sometimes": the API server accepts Ignore or Fail' in error


# ------------------------------------------------------------------------------------------------- good values


def test_good_values_render_and_lint(helm: Path) -> None:
    settings = {
        "global.imageRegistry": "registry.example.com",  # what a parent chart may pass
        "image.tag": "1.2",  # a number from --set, still a tag
        "scheduling.failurePolicy": "Fail",
        "scheduling.timeoutSeconds": "30",
        "webhook.timeoutSeconds": "1",
        "podDisruptionBudget.minAvailable": "50%",
        "consolidation.enabled": "true",
        "consolidation.karpenter": "true",
        "logging.webhook": "debug",
        "nodeSelector.kubernetes\\.io/os": "linux",
        "ballastConfig.orphanTTL": "72h",
        "defaultClusterResourcePolicy.readiness.minDataPoints": "50",
    }
    documents = render(helm, settings=settings)
    assert one(documents, "Deployment")["spec"]["template"]["spec"]["containers"][0]["image"] == "ballast:1.2"
    assert one(documents, "BallastConfig")["spec"]["orphanTTL"] == "72h"
    returncode, output = _lint(helm, *values_args(settings=settings))
    assert returncode == 0, output


@pytest.mark.parametrize("preset", sorted(p.name for p in (CHART / "presets").glob("*.yaml")))
def test_every_preset_file_validates(helm: Path, preset: str) -> None:
    returncode, output = _lint(helm, "-f", str(CHART / "presets" / preset))
    assert returncode == 0, output
    assert "[ERROR]" not in output


def test_the_chart_works_as_a_dependency_with_global_values(helm: Path, tmp_path: Path) -> None:
    parent = tmp_path / "platform"
    shutil.copytree(CHART, parent / "charts" / "ballast")
    chart = {"apiVersion": "v2", "name": "platform", "version": "0.1.0"}
    (parent / "Chart.yaml").write_text(yaml.safe_dump(chart))
    values = {"global": {"imageRegistry": "registry.example.com"}, "ballast": {"replicaCount": 2}}
    (parent / "values.yaml").write_text(yaml.safe_dump(values))
    result = helm_run(helm, "template", "ballast", str(parent), "--namespace", "ballast-system")
    assert result.returncode == 0, result.stderr
    deployment = one([d for d in yaml.safe_load_all(result.stdout) if d], "Deployment", "ballast")
    assert deployment["spec"]["replicas"] == 2
    result = helm_run(helm, "template", "ballast", str(parent), "--set", "ballast.replicaCont=2")
    assert result.returncode != 0
    assert "'replicaCont' not allowed" in result.stderr


# ------------------------------------------------------------------------------------------- the docs' examples


def _set_examples() -> list[tuple[str, str, bool]]:
    """(where, the --set argument, whether it must render) for every `--set` in the docs."""
    found = []
    for path in DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in SET_FLAG.finditer(line):
                found.append((f"{path.relative_to(REPO)}:{number}", match.group(1), "# refused" not in line))
    return found


def _values_blocks() -> list[tuple[str, str]]:
    """(where, text) of every fenced YAML block in the docs that is chart values: a mapping whose every top-level
    key is one of values.yaml's (a Kubernetes object, a kustomization or a CR is not)."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCED_YAML.finditer(text):
            try:
                document = yaml.safe_load(match.group(1))
            except yaml.YAMLError:
                continue
            if isinstance(document, dict) and document and set(document) <= VALUE_KEYS:
                where = f"{path.relative_to(REPO)}:{text.count(chr(10), 0, match.start()) + 1}"
                found.append((where, match.group(1)))
    return found


def test_the_docs_have_values_examples() -> None:
    assert len(_set_examples()) >= 5
    assert any(not renders for _, _, renders in _set_examples())  # a refusal is shown, and checked
    assert _values_blocks()


@pytest.mark.parametrize(("where", "argument", "renders"), _set_examples())
def test_every_set_example_in_the_docs_validates(helm: Path, where: str, argument: str, renders: bool) -> None:
    result = helm_run(helm, "template", "ballast", str(CHART), "--set", argument)
    if renders:
        assert result.returncode == 0, f"{where}: --set {argument}\n{result.stderr}"
    else:
        assert result.returncode != 0, f"{where}: --set {argument} is marked '# refused' but renders"
        assert SCHEMA_ERROR in result.stderr or "execution error" in result.stderr, result.stderr


@pytest.mark.parametrize(("where", "text"), _values_blocks())
def test_every_values_file_example_in_the_docs_validates(helm: Path, tmp_path: Path, where: str, text: str) -> None:
    values = tmp_path / "values.yaml"
    values.write_text(text)
    returncode, output = _lint(helm, "-f", str(values))
    assert returncode == 0, f"{where}:\n{output}"
