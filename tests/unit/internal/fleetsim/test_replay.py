"""A recorded fleet as the simulator's input: the example recording, the 15 s grid (holding, not running before the
first sample, replacement pods), every bad input with its file, line and column, and side files from a cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from ballast.internal.fleetsim.model import STEP_SECONDS, Slot, Usage
from ballast.internal.fleetsim.replay import (
    PodSpan,
    Replay,
    ReplayError,
    load_replay,
    side_file_from_cluster,
    write_side_file,
)
from ballast.internal.fleetsim.run import AsWritten
from ballast.internal.fleetsim.world import World

EXAMPLE = Path(__file__).resolve().parents[3] / "data" / "replay"
MI = 2**20
GI = 2**30
HEADER = "timestamp,namespace,pod,container,resource,value"
T0 = 1_772_366_400  # 2026-03-01T12:00:00Z


def _ages(replay: Replay) -> np.ndarray[Any, np.dtype[np.int64]]:
    return np.zeros(len(replay.usage.slots), dtype=np.int64)


def _slot(replay: Replay, workload: str, replica: int, container: str) -> int:
    return list(replay.usage.slots).index(Slot(workload, replica, container))


def _side(pods: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A side file of one Deployment `api` in `prod` (pods api-a, api-b, api-c; container `app`) and one node."""
    if pods is None:
        pods = [_pod(name) for name in ("api-a", "api-b", "api-c")]
    return {"nodes": [{"name": "n1", "allocatable": {"cpu": "4", "memory": "16Gi"}}], "pods": pods}


def _pod(name: str, owner: str = "api", kind: str = "Deployment") -> dict[str, Any]:
    return {
        "namespace": "prod",
        "name": name,
        "labels": {"app": owner, "pod-template-hash": "h1"},
        "owner": {"kind": kind, "name": owner},
        "node": "n1",
        "containers": [{"name": "app", "requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}],
    }


def _write(tmp_path: Path, side: dict[str, Any], rows: list[str], header: str = HEADER) -> tuple[Path, Path]:
    usage, side_path = tmp_path / "usage.csv", tmp_path / "side.yaml"
    usage.write_text("\n".join([header, *rows]) + "\n")
    side_path.write_text(yaml.safe_dump(side))
    return usage, side_path


def _row(seconds: int, pod: str, resource: str, value: str, container: str = "app") -> str:
    return f"{T0 + seconds},prod,{pod},{container},{resource},{value}"


GOOD = _row(0, "api-a", "cpu", "0.5")


# ------------------------------------------------------------------------------------------ the example


@pytest.fixture(scope="module")
def example() -> Replay:
    return load_replay(EXAMPLE / "usage.csv", EXAMPLE / "side.yaml")


def test_example_workloads_are_the_owners_with_their_most_pods_alive_at_once(example: Replay) -> None:
    workloads = {w.key: w for w in example.fleet.workloads}
    assert list(workloads) == ["shop/cache", "shop/web"]
    assert {key: w.replicas for key, w in workloads.items()} == {"shop/cache": 2, "shop/web": 2}
    assert [w.app.name for w in example.fleet.workloads] == ["cache", "web"]


def test_example_apps_take_the_common_labels_and_the_first_pods_containers(example: Replay) -> None:
    web = example.fleet.workload("shop/web").app
    cache = example.fleet.workload("shop/cache").app
    assert web.labels == {"app.kubernetes.io/name": "web", "app.kubernetes.io/component": "frontend"}
    assert cache.labels == {"app.kubernetes.io/name": "cache", "app.kubernetes.io/component": "redis"}
    assert [(c.name, dict(c.requests), dict(c.limits)) for c in web.containers] == [
        ("app", {"cpu": 0.25, "memory": 512 * MI}, {"memory": 1 * GI}),
        ("envoy", {"cpu": 0.1, "memory": 128 * MI}, {"cpu": 0.5, "memory": 256 * MI}),
    ]
    assert web.shapes == {"app": "recorded", "envoy": "recorded"}
    assert cache.shapes == {"redis": "recorded"}


def test_example_fleet_has_the_nodes_identity_labels_and_duration(example: Replay) -> None:
    fleet = example.fleet
    assert [(n.name, dict(n.allocatable)) for n in fleet.nodes] == [
        (name, {"cpu": 3.92, "memory": 15 * GI, "ephemeral-storage": 95 * GI}) for name in ("node-a", "node-b")
    ]
    assert fleet.identity_labels == ("app.kubernetes.io/name", "app.kubernetes.io/component")
    # Samples from 12:00:00 to 12:59:00: the last one's step (236) is the run's last.
    assert fleet.duration_s == 237 * STEP_SECONDS
    assert example.usage.steps == 237
    assert example.start_s == T0
    assert example.unsampled_pods == ()


def test_example_has_one_slot_per_replica_and_container(example: Replay) -> None:
    usage: Usage = example.usage  # mypy checks that a recording is the simulator's Usage
    assert list(usage.slots) == [
        Slot("shop/cache", 0, "redis"),
        Slot("shop/cache", 1, "redis"),
        Slot("shop/web", 0, "app"),
        Slot("shop/web", 0, "envoy"),
        Slot("shop/web", 1, "app"),
        Slot("shop/web", 1, "envoy"),
    ]
    assert [s.pod for s in example.usage.spans(_slot(example, "shop/cache", 1, "redis"))] == ["shop/cache-1"]


def test_example_values_are_the_samples_of_their_step(example: Replay) -> None:
    app = _slot(example, "shop/web", 0, "app")  # web-5d8f7b9c4-q7m4t sorts first of the two started at step 0
    assert example.usage.spans(app) == (PodSpan("shop/web-5d8f7b9c4-q7m4t", 0, 236),)
    at_0 = example.usage.at(0, _ages(example))
    at_4 = example.usage.at(4, _ages(example))  # 12:01:00
    assert at_0.shape == (6, 3)
    assert at_0[app].tolist() == [0.268, 320 * MI, 0.0]
    assert at_4[app].tolist() == [0.259, 321.5 * MI, 0.0]


def test_example_holds_each_value_until_the_next_sample(example: Replay) -> None:
    at_0 = example.usage.at(0, _ages(example))
    for step in (1, 2, 3):
        np.testing.assert_array_equal(example.usage.at(step, _ages(example)), at_0)
    assert not np.array_equal(example.usage.at(4, _ages(example)), at_0)


def test_example_pod_is_not_running_before_its_first_sample(example: Replay) -> None:
    late = _slot(example, "shop/cache", 1, "redis")  # cache-1: first sample at 12:20:00, step 80
    assert example.usage.first_step.tolist()[late] == 80
    assert example.usage.last_step.tolist()[late] == 236
    assert example.usage.alive(79).tolist() == [True, False, True, True, True, True]
    assert example.usage.at(79, _ages(example))[late].tolist() == [0.0, 0.0, 0.0]
    assert example.usage.alive(80).all()
    assert example.usage.started(80).tolist() == [False, True, False, False, False, False]
    assert example.usage.started(0).tolist() == [True, False, True, True, True, True]
    assert example.usage.at(80, _ages(example))[late].tolist() == [0.108, 900 * MI, 0.0]
    assert example.usage.pod_at(late, 79) is None
    assert example.usage.pod_at(late, 80) == "shop/cache-1"


def test_example_reads_nothing_outside_the_recording(example: Replay) -> None:
    assert not example.usage.alive(237).any()
    assert not example.usage.alive(-1).any()
    assert example.usage.at(237, _ages(example)).tolist() == [[0.0, 0.0, 0.0]] * 6


def test_example_ignores_container_ages(example: Replay) -> None:
    old = np.full(len(example.usage.slots), 10_000, dtype=np.int64)
    np.testing.assert_array_equal(example.usage.at(100, old), example.usage.at(100, _ages(example)))


def test_rows_in_any_order_give_the_same_replay(example: Replay, tmp_path: Path) -> None:
    header, *rows = (EXAMPLE / "usage.csv").read_text().splitlines()
    rows = [rows[i] for i in np.random.default_rng(7).permutation(len(rows))]
    shuffled = tmp_path / "usage.csv"
    shuffled.write_text("\n".join([header, *rows]) + "\n")
    replay = load_replay(shuffled, EXAMPLE / "side.yaml")
    assert replay.fleet == example.fleet
    assert list(replay.usage.slots) == list(example.usage.slots)
    assert replay.usage.samples == example.usage.samples
    for step in range(example.usage.steps):
        np.testing.assert_array_equal(replay.usage.at(step, _ages(replay)), example.usage.at(step, _ages(example)))


# --------------------------------------------------------------------------------------- the 15 s grid


def test_a_replacement_pod_takes_over_the_slot_of_the_pod_it_replaced(tmp_path: Path) -> None:
    # api-a runs steps 0-9, api-c steps 5-19 (a surge), api-b replaces api-a from step 10.
    rows = [_row(0, "api-a", "cpu", "1"), _row(135, "api-a", "cpu", "1"), _row(135, "api-a", "memory", "500")]
    rows += [_row(75, "api-c", "cpu", "3"), _row(285, "api-c", "cpu", "3")]
    rows += [_row(150, "api-b", "cpu", "2"), _row(285, "api-b", "cpu", "2")]
    replay = load_replay(*_write(tmp_path, _side(), rows))
    assert replay.fleet.workload("prod/api").replicas == 2
    assert list(replay.usage.slots) == [Slot("prod/api", 0, "app"), Slot("prod/api", 1, "app")]
    assert replay.usage.spans(0) == (PodSpan("prod/api-a", 0, 9), PodSpan("prod/api-b", 10, 19))
    assert replay.usage.spans(1) == (PodSpan("prod/api-c", 5, 19),)
    assert replay.usage.started(10).tolist() == [True, False]
    assert replay.usage.alive(9).tolist() == [True, True]
    # api-b has no memory sample: it starts from zero, not from api-a's 500.
    assert replay.usage.at(9, _ages(replay))[0].tolist() == [1.0, 500.0, 0.0]
    assert replay.usage.at(10, _ages(replay))[0].tolist() == [2.0, 0.0, 0.0]


def test_the_world_runs_each_recorded_pod_only_while_it_was_recorded(tmp_path: Path) -> None:
    # api-a runs steps 0-9, api-c steps 5-14 (a surge), api-b replaces api-a from step 10 to 19.
    rows = [_row(0, "api-a", "cpu", "1"), _row(135, "api-a", "cpu", "1")]
    rows += [_row(75, "api-c", "cpu", "3"), _row(210, "api-c", "cpu", "3")]
    rows += [_row(150, "api-b", "cpu", "2"), _row(285, "api-b", "cpu", "2")]
    replay = load_replay(*_write(tmp_path, _side(), rows))
    world = World(replay.fleet, replay.usage, AsWritten())
    running = []
    for step in range(replay.fleet.duration_s // STEP_SECONDS):
        world.advance(step)
        running.append(len(world.pods))
    assert running == [1] * 5 + [2] * 10 + [1] * 5
    admitted = [(change.at_s // STEP_SECONDS, change.replica) for change in world.trace().changes]
    assert admitted == [(0, 0), (5, 1), (10, 0)]  # api-a, api-c, then api-b in api-a's slot


def test_the_latest_sample_of_a_step_counts_and_timestamps_may_mix_forms(tmp_path: Path) -> None:
    rows = [
        "2026-03-01T12:00:00Z,prod,api-a,app,cpu,1",
        f"{T0 + 10},prod,api-a,app,cpu,2",  # same step (0), 10 s later
        "2026-03-01T14:00:30.5+02:00,prod,api-a,app,cpu,3",  # T0 + 30.5 s: step 2
    ]
    replay = load_replay(*_write(tmp_path, _side(), rows))
    assert [replay.usage.at(step, _ages(replay))[0, 0] for step in range(3)] == [2.0, 2.0, 3.0]
    assert replay.fleet.duration_s == 3 * STEP_SECONDS


def test_a_spreadsheet_export_with_a_byte_order_mark_and_crlf_loads(tmp_path: Path) -> None:
    usage, side = _write(tmp_path, _side(), [])
    usage.write_bytes(("\ufeff" + HEADER + "\r\n" + GOOD + "\r\n").encode())
    replay = load_replay(usage, side)
    assert replay.usage.at(0, _ages(replay)).tolist() == [[0.5, 0.0, 0.0]]


def test_a_workload_lives_from_its_first_sample_to_its_last(tmp_path: Path) -> None:
    side = _side([_pod("api-a"), _pod("db-0", owner="db", kind="StatefulSet")])
    rows = [_row(0, "db-0", "cpu", "1"), _row(300, "db-0", "cpu", "1")]
    rows += [_row(60, "api-a", "cpu", "1"), _row(150, "api-a", "cpu", "1")]
    replay = load_replay(*_write(tmp_path, side, rows))
    api, db = replay.fleet.workload("prod/api"), replay.fleet.workload("prod/db")
    assert (api.created_s, api.deleted_s) == (60, 165)  # steps 4 to 10
    assert (db.created_s, db.deleted_s) == (0, None)  # to the end


def test_side_file_pods_without_samples_are_listed_not_replayed(tmp_path: Path) -> None:
    replay = load_replay(*_write(tmp_path, _side(), [_row(0, "api-b", "cpu", "1")]))
    assert replay.unsampled_pods == ("prod/api-a", "prod/api-c")
    assert replay.fleet.workload("prod/api").replicas == 1
    assert replay.fleet.identity_labels == ("app.kubernetes.io/name", "app.kubernetes.io/component")  # the default


# ----------------------------------------------------------------------------------------- bad usage


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [GOOD, "2026-03-01T12:00:15,prod,api-a,app,cpu,1"],
            'column "timestamp": not an RFC 3339 time or unix seconds: "2026-03-01T12:00:15"',
        ),
        (
            [GOOD, "2026-02-30T12:00:15Z,prod,api-a,app,cpu,1"],
            'column "timestamp": not an RFC 3339 time or unix seconds: "2026-02-30T12:00:15Z"',
        ),
        (
            [GOOD, _row(15, "api-a", "gpu", "1")],
            'column "resource": unknown resource "gpu" (expected cpu, memory or ephemeral-storage)',
        ),
        ([GOOD, _row(15, "api-a", "cpu", "12x")], 'column "value": not a number: "12x"'),
        ([GOOD, _row(15, "api-a", "memory", "512Mi")], 'column "value": not a number: "512Mi"'),
        ([GOOD, _row(15, "api-a", "cpu", "1_000")], 'column "value": not a number: "1_000"'),
        ([GOOD, _row(15, "api-a", "cpu", "")], 'column "value": not a number: ""'),
        ([GOOD, _row(15, "api-a", "cpu", "-0.25")], 'column "value": negative: "-0.25"'),
        ([GOOD, _row(15, "api-a", "cpu", "NaN")], 'column "value": not finite: "NaN"'),
        ([GOOD, _row(15, "api-a", "cpu", "+Inf")], 'column "value": not finite: "+Inf"'),
        ([GOOD, _row(15, "api-a", "cpu", "1e999")], 'column "value": not finite: "1e999"'),
        ([GOOD, f"{T0},prod,,app,cpu,1"], 'column "pod": empty'),
        ([GOOD, _row(15, "ghost-1", "cpu", "1")], 'column "pod": pod prod/ghost-1 is not in {side}'),
        (
            [GOOD, _row(15, "api-a", "cpu", "1", container="sidecar")],
            'column "container": pod prod/api-a has no container "sidecar" in {side}',
        ),
        ([GOOD, f"{T0},prod,api-a,app,cpu"], f"5 columns, expected 6 ({HEADER})"),
        ([GOOD, f"{T0},prod,api-a,app,cpu,1,cores"], f"7 columns, expected 6 ({HEADER})"),
    ],
)
def test_a_bad_row_names_the_file_line_and_column(tmp_path: Path, rows: list[str], message: str) -> None:
    usage, side = _write(tmp_path, _side(), rows)
    with pytest.raises(ReplayError) as raised:
        load_replay(usage, side)
    assert str(raised.value) == f"{usage}:3: " + message.format(side=side)


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("timestamp,namespace,pod,container,value", 'missing column "resource"'),
        ("timestamp,namespace,pod,container,resource,value,unit", 'extra column "unit"'),
        ("namespace,timestamp,pod,container,resource,value", "columns out of order"),
    ],
)
def test_a_wrong_header_is_refused(tmp_path: Path, header: str, reason: str) -> None:
    usage, side = _write(tmp_path, _side(), [GOOD], header=header)
    with pytest.raises(ReplayError) as raised:
        load_replay(usage, side)
    assert str(raised.value) == f"{usage}:1: header: {reason} (expected {HEADER})"


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    usage, side = _write(tmp_path, _side(), [])
    usage.write_text("")
    with pytest.raises(ReplayError) as raised:
        load_replay(usage, side)
    assert str(raised.value) == f"{usage}: empty file (expected the header {HEADER})"


def test_a_header_without_samples_is_refused(tmp_path: Path) -> None:
    usage, side = _write(tmp_path, _side(), [])
    with pytest.raises(ReplayError) as raised:
        load_replay(usage, side)
    assert str(raised.value) == f"{usage}: no samples after the header"


def test_a_duplicate_sample_names_both_lines(tmp_path: Path) -> None:
    rows = [GOOD, _row(15, "api-a", "cpu", "1"), _row(15, "api-b", "cpu", "1"), _row(15, "api-a", "cpu", "2")]
    usage, side = _write(tmp_path, _side(), rows)
    with pytest.raises(ReplayError) as raised:
        load_replay(usage, side)
    assert str(raised.value) == (
        f'{usage}:5: duplicate sample of prod/api-a container "app" cpu at 2026-03-01T12:00:15Z (also on line 3)'
    )


def test_samples_of_a_pod_missing_from_the_side_file_name_its_first_line(tmp_path: Path) -> None:
    rows = [GOOD, _row(15, "api-a", "cpu", "1"), _row(0, "ghost-1", "memory", "1"), _row(15, "ghost-1", "cpu", "1")]
    usage, side = _write(tmp_path, _side(), rows)
    with pytest.raises(ReplayError) as raised:
        load_replay(usage, side)
    assert str(raised.value) == f'{usage}:4: column "pod": pod prod/ghost-1 is not in {side}'


def test_the_same_instant_in_both_forms_is_a_duplicate(tmp_path: Path) -> None:
    rows = [GOOD, "2026-03-01T12:00:00Z,prod,api-a,app,cpu,1"]
    usage, side = _write(tmp_path, _side(), rows)
    with pytest.raises(ReplayError, match=r":3: duplicate sample of prod/api-a .* \(also on line 2\)$"):
        load_replay(usage, side)


# ------------------------------------------------------------------------------------------ bad side file


def _side_error(tmp_path: Path, side: dict[str, Any]) -> tuple[str, Path]:
    usage, side_path = _write(tmp_path, side, [GOOD])
    with pytest.raises(ReplayError) as raised:
        load_replay(usage, side_path)
    return str(raised.value), side_path


def test_a_bad_quantity_names_its_field_path(tmp_path: Path) -> None:
    side = _side()
    side["pods"][1]["containers"][0]["requests"]["cpu"] = "12x"
    message, path = _side_error(tmp_path, side)
    assert message == (
        f"{path}: pods[1].containers[0].requests.cpu: '12x' is not a Kubernetes quantity "
        "(expected e.g. '250m', '1.5', '192Mi', '1e3')"
    )


def test_a_negative_quantity_names_its_field_path(tmp_path: Path) -> None:
    side = _side()
    side["nodes"][0]["allocatable"]["memory"] = "-1Gi"
    message, path = _side_error(tmp_path, side)
    assert message == f'{path}: nodes[0].allocatable.memory: "-1Gi" is negative'


def test_plain_yaml_numbers_are_quantities(tmp_path: Path) -> None:
    side = _side()
    side["pods"][0]["containers"][0]["requests"] = {"cpu": 0.5, "memory": 1073741824}
    replay = load_replay(*_write(tmp_path, side, [GOOD]))
    assert replay.fleet.workload("prod/api").app.containers[0].requests == {"cpu": 0.5, "memory": 1 * GI}


@pytest.mark.parametrize(
    ("change", "fault"),
    [
        (lambda s: s["pods"][2].update(ownr={}), "pods[2].ownr: Extra inputs are not permitted"),
        (lambda s: s["pods"][0].pop("owner"), "pods[0].owner: Field required"),
        (
            lambda s: s["pods"][0]["containers"][0]["limits"].update(gpu="1"),
            "pods[0].containers[0].limits.gpu (key): Input should be 'cpu', 'memory' or 'ephemeral-storage'",
        ),
        (
            lambda s: s["pods"][1].update(containers=[]),
            "pods[1].containers: List should have at least 1 item after validation, not 0",
        ),
        (lambda s: s["pods"][1].update(name=""), "pods[1].name: String should have at least 1 character"),
        (lambda s: s.update(nodes=[]), "nodes: List should have at least 1 item after validation, not 0"),
        (lambda s: s["pods"][2].update(name="api-a"), "pods[2]: pod prod/api-a is listed twice (pods[0])"),
        (lambda s: s["pods"][1].update(node="n9"), 'pods[1].node: node "n9" is not among the nodes'),
        (
            lambda s: s["pods"][0]["containers"].append({"name": "app"}),
            'pods[0].containers[1].name: container "app" is listed twice',
        ),
    ],
)
def test_a_side_file_fault_names_its_field(tmp_path: Path, change: Any, fault: str) -> None:
    side = _side()
    change(side)
    message, path = _side_error(tmp_path, side)
    assert message == f"{path}: {fault}"


def test_two_kinds_of_owner_with_one_name_are_refused(tmp_path: Path) -> None:
    side = _side([_pod("api-a"), _pod("api-0", kind="StatefulSet")])
    usage, side_path = _write(tmp_path, side, [GOOD, _row(15, "api-0", "cpu", "1")])
    with pytest.raises(ReplayError) as raised:
        load_replay(usage, side_path)
    assert str(raised.value) == (
        f"{side_path}: pods[1].owner: StatefulSet api has the name of Deployment api in namespace prod (pods[0]); "
        "a replay names workloads by namespace and name"
    )


def test_a_side_file_that_is_not_yaml_is_refused(tmp_path: Path) -> None:
    usage, side = _write(tmp_path, _side(), [GOOD])
    side.write_text("pods: [\n")
    with pytest.raises(ReplayError, match=rf"^{side}: not valid YAML: "):
        load_replay(usage, side)


# ---------------------------------------------------------------------------------- side file from a cluster


WEB_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-7c9d8f6b5-k2x4q",
        "namespace": "shop",
        "uid": "1b7e",
        "labels": {"app": "web", "pod-template-hash": "7c9d8f6b5"},
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7c9d8f6b5", "controller": True, "uid": "9a"}
        ],
    },
    "spec": {
        "nodeName": "node-a",
        "initContainers": [
            {"name": "migrate", "resources": {"requests": {"cpu": "1"}}},
            {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}},
        ],
        "containers": [
            {
                "name": "app",
                "image": "web:1",
                "resources": {
                    "requests": {"cpu": "250m", "memory": "512Mi", "nvidia.com/gpu": "1"},
                    "limits": {"memory": "1Gi", "nvidia.com/gpu": "1"},
                },
            }
        ],
    },
    "status": {"phase": "Running"},
}
DB_POD: dict[str, Any] = {
    "metadata": {
        "name": "db-0",
        "namespace": "shop",
        "labels": {"app": "db", "controller-revision-hash": "db-6d4b", "statefulset.kubernetes.io/pod-name": "db-0"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": True}],
    },
    "spec": {"nodeName": "node-a", "containers": [{"name": "postgres", "resources": {"requests": {"memory": "2Gi"}}}]},
}
NODE: dict[str, Any] = {
    "metadata": {"name": "node-a", "labels": {"kubernetes.io/os": "linux"}},
    "status": {
        "capacity": {"cpu": "4", "memory": "16Gi"},
        "allocatable": {"cpu": "3920m", "memory": "15Gi", "ephemeral-storage": "95Gi", "pods": "110"},
    },
}


def test_side_file_from_cluster_maps_owners_resources_and_nodes() -> None:
    document = side_file_from_cluster([WEB_POD, DB_POD], [NODE], ["app"])
    assert document == {
        "identityLabels": ["app"],
        "nodes": [{"name": "node-a", "allocatable": {"cpu": "3920m", "memory": "15Gi", "ephemeral-storage": "95Gi"}}],
        "pods": [
            {
                "namespace": "shop",
                "name": "web-7c9d8f6b5-k2x4q",
                "labels": {"app": "web", "pod-template-hash": "7c9d8f6b5"},
                "owner": {"kind": "Deployment", "name": "web"},
                "node": "node-a",
                "containers": [
                    {"name": "app", "requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
                    {"name": "proxy", "requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {}},
                ],
            },
            {
                "namespace": "shop",
                "name": "db-0",
                "labels": {
                    "app": "db",
                    "controller-revision-hash": "db-6d4b",
                    "statefulset.kubernetes.io/pod-name": "db-0",
                },
                "owner": {"kind": "StatefulSet", "name": "db"},
                "node": "node-a",
                "containers": [{"name": "postgres", "requests": {"memory": "2Gi"}, "limits": {}}],
            },
        ],
    }


def test_a_replicaset_without_the_template_hash_and_a_bare_pod_keep_their_own_names() -> None:
    bare = {"metadata": {"name": "debug", "namespace": "shop"}, "spec": {"containers": [{"name": "sh"}]}}
    orphan_rs = {
        "metadata": {
            "name": "batch-x1",
            "namespace": "shop",
            "ownerReferences": [{"kind": "ReplicaSet", "name": "batch", "controller": True}],
        },
        "spec": {"containers": [{"name": "job"}]},
    }
    pods = side_file_from_cluster([bare, orphan_rs], [], [])["pods"]
    assert [pod["owner"] for pod in pods] == [{"kind": "Pod", "name": "debug"}, {"kind": "ReplicaSet", "name": "batch"}]
    assert "node" not in pods[0]


def test_a_side_file_from_a_cluster_loads_back_with_its_usage(tmp_path: Path) -> None:
    side = tmp_path / "side.yaml"
    write_side_file(side_file_from_cluster([WEB_POD, DB_POD], [NODE], ["app"]), side)
    assert side.read_text().startswith("# Pods and nodes of a recorded fleet")
    usage = tmp_path / "usage.csv"
    rows = [
        f"{T0},shop,web-7c9d8f6b5-k2x4q,app,cpu,0.2",
        f"{T0},shop,web-7c9d8f6b5-k2x4q,proxy,memory,{40 * MI}",
        f"{T0 + 60},shop,web-7c9d8f6b5-k2x4q,app,cpu,0.3",
        f"{T0 + 60},shop,db-0,postgres,memory,{GI}",
    ]
    usage.write_text("\n".join([HEADER, *rows]) + "\n")
    replay = load_replay(usage, side)
    assert [(w.key, w.replicas) for w in replay.fleet.workloads] == [("shop/db", 1), ("shop/web", 1)]
    web, db = replay.fleet.workload("shop/web"), replay.fleet.workload("shop/db")
    assert web.app.labels == {"app": "web"}
    assert db.app.labels == {"app": "db"}
    assert [(c.name, dict(c.requests)) for c in web.app.containers] == [
        ("app", {"cpu": 0.25, "memory": 512 * MI}),
        ("proxy", {"cpu": 0.05, "memory": 64 * MI}),
    ]
    assert replay.fleet.identity_labels == ("app",)
    assert [(n.name, n.allocatable["cpu"]) for n in replay.fleet.nodes] == [("node-a", 3.92)]
    assert replay.usage.at(4, _ages(replay)).tolist() == [
        [0.0, float(GI), 0.0],  # db-0 from step 4
        [0.3, 0.0, 0.0],
        [0.0, 40.0 * MI, 0.0],  # held from step 0
    ]
    assert replay.usage.alive(3).tolist() == [False, True, True]
