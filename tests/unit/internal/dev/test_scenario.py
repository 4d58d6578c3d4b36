"""The demo's workloads and the pure helpers of the orchestration: manifests, statuses, cold-start checks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.dev.demo import (
    admitted_as_recommended,
    ballast_command,
    describe_objects,
    describe_resources,
    recommendations_of,
)
from ballast.internal.dev.preset import SAMPLES_DIR, load_preset
from ballast.internal.dev.scenario import (
    APPS,
    CATALOG,
    CHECKOUT,
    COLD_START_POD,
    FALLBACK_USAGE,
    NAMESPACES,
    RESIZE_POD,
    SEARCH,
    WORKLOADS,
    actuated_status,
    pod_manifest,
    running_status,
    usage_profile,
)
from ballast.internal.enrollment import MODE_LABEL, is_enrolled

NOW = "2026-11-29T12:00:00Z"


def test_profiles_are_named_as_the_operator_names_them() -> None:
    assert [app.profile_name() for app in APPS] == [
        "checkout--api--default-a9696153",
        "catalog--api--default-a9696153",
        "search--indexer--default-a9696153",
    ]


def test_the_scenario_spans_three_namespaces_and_cold_starts_in_a_fourth() -> None:
    assert {pod.namespace for pod in WORKLOADS} == set(NAMESPACES)
    assert COLD_START_POD.namespace not in NAMESPACES
    # The cold-start app is known: it runs in every demo namespace, so its profile learns from all of them.
    assert {p.namespace for p in WORKLOADS if p.app is COLD_START_POD.app} == set(NAMESPACES)
    assert COLD_START_POD.mode == "apply"
    assert RESIZE_POD in WORKLOADS
    assert RESIZE_POD.mode == "resize"
    assert len({pod.key for pod in WORKLOADS}) == len(WORKLOADS)


def test_pod_manifests_are_enrolled_over_provisioned_pods() -> None:
    pod = RESIZE_POD.manifest()
    assert is_enrolled(pod["metadata"]["labels"])
    assert pod["metadata"]["labels"][MODE_LABEL] == "resize"
    assert pod["metadata"]["labels"]["app.kubernetes.io/name"] == "checkout"
    (container,) = pod["spec"]["containers"]
    assert container["name"] == "api"
    assert container["resources"] == {"requests": {"cpu": "1", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}
    assert pod_manifest("x", "y", SEARCH, "measure")["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "2"


def test_usage_profiles_by_app_name() -> None:
    assert usage_profile("catalog") is CATALOG.usage
    assert usage_profile("someone-elses-app") is FALLBACK_USAGE


def test_running_status_reports_the_resources_a_resize_capable_kubelet_reports() -> None:
    pod = pod_manifest("ns", "p", CHECKOUT, "apply")
    status = running_status(pod, NOW)["status"]
    assert status["phase"] == "Running"
    assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "True"
    (container,) = status["containerStatuses"]
    assert container["ready"] is True
    assert container["resources"] == {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}
    assert container["allocatedResources"] == {"cpu": "500m", "memory": "512Mi"}


def test_actuated_status_follows_a_resize_once() -> None:
    pod: dict[str, Any] = pod_manifest("ns", "p", CHECKOUT, "resize")
    assert actuated_status(pod) is None  # no status yet: nothing a kubelet would report
    pod["status"] = running_status(pod, NOW)["status"]
    assert actuated_status(pod) is None  # in line with the spec
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "643m"
    patch = actuated_status(pod)
    assert patch is not None
    (container,) = patch["status"]["containerStatuses"]
    assert container["resources"]["requests"] == {"cpu": "643m", "memory": "512Mi"}
    assert container["allocatedResources"] == {"cpu": "643m", "memory": "512Mi"}
    assert container["state"] == {"running": {"startedAt": NOW}}  # the rest of the status is kept
    pod["status"] = patch["status"]
    assert actuated_status(pod) is None


PROFILE = {
    "status": {
        "containers": [
            {"name": "sidecar", "recommendations": {"cpu": {"request": "10m"}}},
            {
                "name": "api",
                "recommendations": {"cpu": {"request": "287m"}, "memory": {"request": "192Mi", "limit": "240Mi"}},
            },
        ]
    }
}


def test_recommendations_of_a_container() -> None:
    assert recommendations_of(PROFILE, "api") == {
        "cpu": {"request": "287m"},
        "memory": {"request": "192Mi", "limit": "240Mi"},
    }
    assert recommendations_of(PROFILE, "other") == {}
    assert recommendations_of({}, "api") == {}


def test_admitted_as_recommended_compares_quantities() -> None:
    recommended = recommendations_of(PROFILE, "api")
    pod = pod_manifest("ns", "p", CHECKOUT, "apply")
    assert not admitted_as_recommended(pod, recommended)
    pod["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "0.287", "memory": "196608Ki"},  # the same quantities, written differently
        "limits": {"memory": "240Mi"},
    }
    assert admitted_as_recommended(pod, recommended)
    assert not admitted_as_recommended(pod, {})  # nothing recommended is never "as recommended"
    del pod["spec"]["containers"][0]["resources"]["limits"]
    assert not admitted_as_recommended(pod, recommended)


def test_descriptions() -> None:
    pod = pod_manifest("ns", "p", CHECKOUT, "apply")
    assert describe_resources(pod) == "cpu 500m, memory 512Mi (limit memory 1Gi)"
    assert describe_objects(load_preset(SAMPLES_DIR / "local-testing")) == (
        "BallastConfig ballast, ClusterResourcePolicy default, MetricsSource kubernetes-metrics + kubelet-summary"
    )


def test_the_ballast_command_is_the_one_beside_the_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.chdir(tmp_path)
    assert ballast_command() == "ballast"  # not installed there: whatever is on PATH
    (bin_dir / "ballast").touch()
    assert ballast_command() == ".venv/bin/ballast"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert ballast_command() == str(bin_dir / "ballast")
    monkeypatch.chdir(bin_dir)
    assert ballast_command() == str(bin_dir / "ballast")  # never a bare name that PATH would resolve
