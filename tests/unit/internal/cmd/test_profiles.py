"""`ballast profiles`: kubectl's table layout and ages, the wide columns, and the List documents."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
import yaml

from ballast.internal.cmd.profiles import COLUMNS, human_duration, profile_row, render, render_table

NOW = datetime.datetime(2026, 11, 29, 12, 0, 0, tzinfo=datetime.UTC)


def profile(name: str, status: dict[str, Any] | None = None, created: str = "2026-11-29T11:58:00Z") -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "ballast.tightlinesoftware.com/v1",
        "kind": "WorkloadProfile",
        "metadata": {"name": name, "creationTimestamp": created},
    }
    if status is not None:
        obj["status"] = status
    return obj


SUFFICIENT = profile(
    "billing--api--default-a9696153",
    {
        "activeWorkloads": 3,
        "state": "Sufficient",
        "policyRef": {"kind": "ClusterResourcePolicy", "name": "default"},
        "tupleLabels": {"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "api"},
        "conditions": [
            {"type": "Orphaned", "status": "False"},
            {"type": "Ready", "status": "True"},
        ],
        "containers": [
            {
                "name": "app",
                "usageStats": [{"resource": "cpu", "samples": 900}, {"resource": "memory", "samples": 880}],
            },
            {"name": "sidecar", "usageStats": [{"resource": "cpu", "samples": 12}]},
        ],
    },
)


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (599, "9m59s"),
        (600, "10m"),
        (3 * 3600 - 1, "179m"),
        (3 * 3600, "3h"),
        (4 * 3600 + 12 * 60, "4h12m"),
        (30 * 3600, "30h"),
        (3 * 86400 + 4 * 3600, "3d4h"),
        (3 * 86400, "3d"),
        (120 * 86400, "120d"),
        (2 * 365 * 86400 + 30 * 86400, "2y30d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_ages_are_kubectls_human_durations(seconds: int, expected: str) -> None:
    assert human_duration(seconds) == expected


def test_the_table_has_the_printer_columns_with_empty_cells_for_unset_fields() -> None:
    fresh = profile("a--b--nopolicy")  # no status yet: every status column is empty
    text = render([fresh, SUFFICIENT], None, NOW)
    assert text.splitlines() == [
        "NAME                             ACTIVEWORKLOADS   POLICY    STATE        ORPHANED   AGE",
        "a--b--nopolicy                                                                       2m",
        "billing--api--default-a9696153   3                 default   Sufficient   False      2m",
    ]


def test_wide_adds_ready_containers_fewest_samples_and_the_tuple() -> None:
    row = profile_row(SUFFICIENT, NOW, wide=True)
    assert row[len(COLUMNS) :] == [
        "True",
        "2",
        "12",
        "app.kubernetes.io/component=api,app.kubernetes.io/name=billing",
    ]
    assert render([SUFFICIENT], "wide", NOW).splitlines()[0].split() == [
        *COLUMNS,
        "READY",
        "CONTAINERS",
        "SAMPLES",
        "TUPLE",
    ]


def test_render_table_pads_every_column_but_the_last_by_three() -> None:
    assert render_table(["A", "BB"], [["xyz", "1"], ["", "22"]]) == "A     BB\nxyz   1\n      22"


def test_json_and_yaml_are_a_v1_list_with_sorted_keys() -> None:
    document = json.loads(render([SUFFICIENT], "json", NOW))
    assert document["apiVersion"] == "v1"
    assert document["kind"] == "List"
    assert document["items"] == [SUFFICIENT]
    assert render([SUFFICIENT], "json", NOW).splitlines()[1] == '    "apiVersion": "v1",'  # kubectl's 4-space indent
    assert yaml.safe_load(render([SUFFICIENT], "yaml", NOW)) == document


def test_json_and_yaml_leave_managed_fields_out_as_kubectl_does() -> None:
    managed = [{"manager": "ballastd", "operation": "Apply", "fieldsV1": {"f:status": {}}}]
    stored = {**SUFFICIENT, "metadata": {**SUFFICIENT["metadata"], "managedFields": managed}}
    for output in ("json", "yaml"):
        [item] = yaml.safe_load(render([stored], output, NOW))["items"]
        assert item == SUFFICIENT
        assert "managedFields" not in render([stored], output, NOW)


def test_no_profiles_is_an_empty_table_but_still_a_list_document() -> None:
    assert render([], None, NOW) == ""
    assert json.loads(render([], "json", NOW))["items"] == []
