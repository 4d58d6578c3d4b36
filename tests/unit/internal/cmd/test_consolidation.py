"""`ballast consolidation plan`: the sample catalogue, the catalogue from a file (document, JSON, ConfigMap
manifest) or `cm/NS/NAME`, `--k`, the table (pools now and after, the freed sets, every move with its score and
reason) and the JSON, current and recommended side by side, and the errors as exit 1 naming what was wrong."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.internal.cmd import ballast as cli
from ballast.internal.cmd import consolidation as plan_cmd
from ballast.internal.cmd.ballastd import CONSOLIDATION_CATALOGUE
from ballast.internal.cmd.consolidation import configmap_ref, parse_k, read_catalogue_file
from ballast.internal.consolidation import (
    ON_DEMAND,
    SPOT,
    Catalogue,
    node_from_wire,
    parse_catalogue,
    plan_report,
    pod_from_wire,
    pool_from_nodepool,
)
from ballast.internal.consolidation.inputs import CATALOGUE_KEY, Inputs, Observed, ReadSettings, read_catalogue
from ballast.internal.consolidation.plan_report import (
    Analysis,
    PlanError,
    analyse,
    catalogue_from_text,
    priced,
    render_json,
    render_table,
    saving_split,
)
from ballast.internal.consolidation.report import requests_report
from ballast.runtime import FakeAPI
from tests.paths import REPOSITORY
from tests.unit.internal.consolidation.builders import node, offering, pod

JSON = dict[str, Any]
SAMPLE = REPOSITORY / "config" / "samples" / "consolidation" / "catalogue-configmap.yaml"
CATALOGUE = {"offerings": [offering("m.large", 0.10, "2", "8Gi"), offering("m.xlarge", 0.20, "4", "16Gi")]}
NO_CATALOGUE = "no catalogue configured (--consolidation-catalogue): every node priced 0"


def nodepool(policy: str = "Balanced") -> JSON:
    return {"metadata": {"name": "general"},
            "spec": {"disruption": {"consolidationPolicy": policy, "budgets": [{"nodes": "100%"}]}}}  # fmt: skip


def inputs_of(nodes: list[JSON], pods: list[JSON], catalogue: Catalogue, *, policy: str = "Balanced",
              recommended: dict[str, dict[str, dict[str, str]]] | None = None) -> Inputs:  # fmt: skip
    """What the reader makes of these objects: nodes priced from `catalogue`, pods with their current and their
    recommended requests, the NodePool `general`."""
    recommended = recommended or {}
    keys = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods]
    return Inputs(
        nodes=tuple(node_from_wire(n, catalogue) for n in nodes),
        pods=tuple(pod_from_wire(p) for p in pods),
        recommended_pods=tuple(pod_from_wire(p, recommended.get(key)) for p, key in zip(pods, keys, strict=True)),
        pdbs=(),
        pools={"general": pool_from_nodepool(nodepool(policy))},
        catalogue=catalogue,
        karpenter=True,
        observed=Observed(len(nodes), len(pods), 0, 1, 1, sum(key in recommended for key in keys)),
        problems=catalogue.problems,
        catalogue_problems=catalogue.problems,
    )


def two_nodes(catalogue: Catalogue | None = None, policy: str = "Balanced") -> Inputs:
    """Two 4-cpu nodes ($0.20/h) with two 1500m pods each: nothing fits elsewhere now; at the recommended 600m,
    a's pods fit on b (and b's 2400m then fit no cheaper node)."""
    pods = [pod(f"web-{n}{i}", n, "1500m") for n in "ab" for i in (1, 2)]
    recommended = {f"default/web-{n}{i}": {"app": {"cpu": "600m", "memory": "1Gi"}} for n in "ab" for i in (1, 2)}
    return inputs_of([node(n) for n in "ab"], pods, catalogue or parse_catalogue(CATALOGUE), policy=policy,
                     recommended=recommended)  # fmt: skip


def marginal(policy: str = "Balanced") -> Inputs:
    """Three 4-cpu nodes: a and b full of 1800m pods, c with six 250m pods (the costliest to disrupt). Replacing c
    by a 2-cpu node saves 1/6 of the pool's cost for 7/13 of its disruption: Balanced rejects it at k 2."""
    pods = [pod(f"api-{n}{i}", n, "1800m") for n in "ab" for i in (1, 2)]
    pods += [pod(f"worker-{i}", "c", "250m", "256Mi") for i in range(6)]
    return inputs_of([node(n) for n in "abc"], pods, parse_catalogue(CATALOGUE), policy=policy)


def rows(lines: list[str], header: str) -> list[list[str]]:
    """The table under the line starting with `header`, as lists of cells (columns are 3+ spaces apart)."""
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(header))
    table = []
    for line in lines[start:]:
        if not line.strip():
            break
        table.append([cell.strip() for cell in line.strip().split("   ") if cell.strip()])
    return table


# ------------------------------------------------------------------------------------------------ the sample


def test_the_sample_catalogue_parses_with_no_problems() -> None:
    document = read_catalogue_file(str(SAMPLE))
    catalogue = parse_catalogue(document)
    assert catalogue.problems == ()
    types = {o.instance_type for o in catalogue.offerings}
    assert types == {f"{family}.{size}" for family in ("m5", "c5", "r5")
                     for size in ("large", "xlarge", "2xlarge", "4xlarge")}  # fmt: skip
    assert len(catalogue.offerings) == 24  # each type on-demand and spot
    for instance_type in types:
        on_demand = catalogue.offering(instance_type, ON_DEMAND, "us-east-1a")
        spot = catalogue.offering(instance_type, SPOT, "us-east-1a")  # zone-less entries price every zone
        assert on_demand is not None
        assert spot is not None
        assert 0 < spot.price < on_demand.price
        assert (spot.cpu, spot.memory, spot.pods) == (on_demand.cpu, on_demand.memory, on_demand.pods)
    large = catalogue.offering("m5.large", ON_DEMAND, None)
    assert large is not None
    assert (large.cpu, large.price) == (1930, 0.096)  # 2 vCPU less the reservation; the list price
    assert 6 * 2**30 < large.memory < 8 * 2**30  # 8 GiB less the VM's and the kubelet's share
    assert {pool: len(types) for pool, types in catalogue.pool_instance_types.items()} == {"general": 8, "memory": 4}


def test_the_sample_is_a_configmap_under_the_agreed_key() -> None:
    (configmap,) = [doc for doc in yaml.safe_load_all(SAMPLE.read_text()) if doc]
    assert (configmap["kind"], configmap["metadata"]["namespace"], configmap["metadata"]["name"]) == (
        "ConfigMap", "ballast-system", "ballast-consolidation-catalogue",
    )  # fmt: skip
    assert list(configmap["data"]) == [CATALOGUE_KEY]  # the reader's key
    assert plan_cmd.DEFAULT_CATALOGUE == "cm/ballast-system/ballast-consolidation-catalogue"
    # The operator's default, which its RBAC lets it read by name: the CLI and the report read the same ConfigMap.
    assert f"cm/ballast-system/{CONSOLIDATION_CATALOGUE}" == plan_cmd.DEFAULT_CATALOGUE


# ------------------------------------------------------------------------------------------------ inputs


@pytest.mark.parametrize(("text", "k"), [("2", 2), ("1", 1), ("10", 10), ("inf", math.inf), ("+Inf", math.inf)])
def test_k_is_a_positive_integer_or_inf(text: str, k: float) -> None:
    assert parse_k(text) == k


@pytest.mark.parametrize("text", ["0", "-1", "1.5", "two", "", "2147483648"])
def test_a_bad_k_is_named(text: str) -> None:
    with pytest.raises(PlanError, match=r"--k .*not a positive integer"):
        parse_k(text)


def test_a_catalogue_file_may_be_the_document_json_or_a_configmap_manifest(tmp_path: Path) -> None:
    as_yaml = tmp_path / "catalogue.yaml"
    as_yaml.write_text(yaml.safe_dump(CATALOGUE))
    as_json = tmp_path / "catalogue.json"
    as_json.write_text(json.dumps(CATALOGUE))
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                        "data": {"catalogue.yaml": yaml.safe_dump(CATALOGUE)}}))  # fmt: skip
    assert read_catalogue_file(str(as_yaml)) == read_catalogue_file(str(as_json)) == CATALOGUE
    assert read_catalogue_file(str(manifest)) == CATALOGUE
    offerings = tmp_path / "offerings.yaml"
    offerings.write_text(yaml.safe_dump(CATALOGUE["offerings"]))
    assert read_catalogue_file(str(offerings)) == CATALOGUE  # a bare list is the offerings


def test_a_catalogue_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(CATALOGUE)))
    assert read_catalogue_file("-") == CATALOGUE


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("offerings: [", "catalogue file F: not YAML or JSON"),
        ("just text\n", "catalogue file F: is a str, not a mapping"),
        ("a: 1\n---\nb: 2\n", "catalogue file F: holds 2 documents; expected one catalogue"),
        ("", "catalogue file F: holds 0 documents"),
        ("kind: ConfigMap\ndata: {prices: 'x'}\n", "catalogue file F: no data key 'catalogue.yaml' (keys: prices)"),
        ("kind: ConfigMap\n", "catalogue file F: no data key 'catalogue.yaml' (keys: none)"),
        ("kind: ConfigMap\ndata: {catalogue.yaml: '[1'}\n", "catalogue file F data['catalogue.yaml']: not YAML"),
    ],
)
def test_a_bad_catalogue_file_is_named_with_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(PlanError) as raised:
        catalogue_from_text(text, "catalogue file F")
    assert str(raised.value).startswith(message)


def test_a_missing_catalogue_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match=r"^catalogue file .*/absent.yaml: No such file or directory$"):
        read_catalogue_file(str(tmp_path / "absent.yaml"))


def test_cm_references() -> None:
    assert configmap_ref("cm/ballast-system/prices") == ("ballast-system", "prices")
    assert configmap_ref("prices.yaml") is None
    assert configmap_ref("./cm/a/b") is None
    for bad in ("cm/prices", "cm//prices", "cm/a/b/c"):
        with pytest.raises(PlanError, match=r"a ConfigMap is cm/NAMESPACE/NAME"):
            configmap_ref(bad)


def test_a_catalogue_with_no_offering_is_refused() -> None:
    bad = parse_catalogue({"offerings": ["m5.large"]})
    with pytest.raises(PlanError, match=r"^catalogue X: no offering read \(offerings\[0\]: is a str, not a mapping"):
        analyse(two_nodes(bad), "X", 2, what_if=False)
    with pytest.raises(PlanError, match=r"^catalogue X: no offering read \(the document lists none\)$"):
        analyse(two_nodes(parse_catalogue({})), "X", 2, what_if=False)


def test_a_local_catalogue_prices_what_was_read_without_one() -> None:
    unpriced = two_nodes(Catalogue(problems=(NO_CATALOGUE,)))
    unpriced = replace(unpriced, problems=(NO_CATALOGUE, "pod x/y: left out"))
    assert {n.price for n in unpriced.nodes} == {0.0}
    spot = {"defaults": {"capacityType": "spot"}, "offerings": [
        offering("m.xlarge", 0.07, "4", "16Gi", capacity_type="spot"), {"instanceType": "bad"}]}  # fmt: skip
    # The nodes' karpenter.sh/capacity-type label says on-demand; a node without it takes the catalogue's default.
    unlabelled = replace(unpriced, nodes=(*unpriced.nodes, node_from_wire(node("c", capacity_type=None), Catalogue())))
    result = priced(unlabelled, parse_catalogue(spot))
    assert [(n.name, n.capacity_type, n.price) for n in result.nodes] == [
        ("a", ON_DEMAND, 0.0), ("b", ON_DEMAND, 0.0), ("c", SPOT, 0.07),
    ]  # fmt: skip
    result = priced(unpriced, parse_catalogue(CATALOGUE))
    assert [(n.name, n.price, n.allocatable) for n in result.nodes] == [
        (n.name, 0.20, n.allocatable) for n in unpriced.nodes
    ]
    assert result.catalogue.offerings == parse_catalogue(CATALOGUE).offerings
    assert result.problems == ("pod x/y: left out",)  # "no catalogue" is gone, the rest stays
    problems = priced(unpriced, parse_catalogue(spot)).problems
    assert problems[0].startswith("offerings[1] (bad): pricePerHour None")
    assert problems[1:] == ("pod x/y: left out",)


# ------------------------------------------------------------------------------------------------ table


def test_the_table_shows_the_pools_now_and_after_both_requests() -> None:
    lines = render_table(analyse(two_nodes(), "prices.yaml", 2, what_if=True))
    assert lines[:5] == [
        "Consolidation plan: 2 nodes in 1 pool, $292.00/month now",
        "Requests: current, and recommended for 4 pods (their WorkloadProfiles)",
        "Pools: 1 Karpenter NodePool (a pool none describes is Balanced); grouped as general (2 nodes)",
        "Catalogue: prices.yaml; k 2: a Balanced move needs a score ≥ 0.500",
        "",
    ]
    assert rows(lines, "POOL") == [
        ["POOL", "POLICY", "REQUESTS", "NODES", "FREED", "LAUNCHED", "AFTER", "$/HOUR", "AFTER", "$/MONTH",
         "AFTER", "SAVING/MONTH"],
        ["general", "Balanced", "current", "2", "0", "0", "2", "0.400", "0.400", "292.00", "292.00", "0.00"],
        ["general", "Balanced", "recommended", "2", "1", "0", "1", "0.400", "0.200", "292.00", "146.00", "146.00"],
    ]  # fmt: skip
    assert "Freed with the current requests: none" in lines
    assert ("Freed with the recommended requests: 1 of today's nodes, a (saving $0.200/hour, $146.00/month: "
            "$146.00 from right-sized requests, $0.00 from cheaper offerings and packing today's requests allow), "
            "in 1 command:") in lines  # fmt: skip
    assert "  1. single-node: delete a (score 1.000)" in lines


def test_the_table_shows_every_move_with_its_score_and_reason() -> None:
    lines = render_table(analyse(two_nodes(), "prices.yaml", 2, what_if=True))
    current_at = lines.index("Moves with the current requests (the first round; a multi-node command first):")
    recommended_at = lines.index("Moves with the recommended requests (the first round; a multi-node command first):")
    assert rows(lines[current_at + 1 :], "NODES") == [
        ["NODES", "POOL", "METHOD", "DECISION", "SCORE", "SAVING/MONTH", "DISRUPTION", "APPROVED", "REASON"],
        ["a", "general", "single-node", "no-op", "-", "0.00", "3.00", "no", "Can't replace with a cheaper node"],
        ["b", "general", "single-node", "no-op", "-", "0.00", "3.00", "no", "Can't replace with a cheaper node"],
    ]
    moves = rows(lines[recommended_at + 1 :], "NODES")
    assert moves[1][:8] == ["a", "general", "single-node", "delete", "1.000", "146.00", "3.00", "yes"]
    assert moves[1][8].startswith("score 1.00 >= threshold 0.50")
    assert lines[-2:] == ["Problems:", "  none"]


def test_a_marginal_move_is_rejected_where_when_empty_or_underutilized_takes_it() -> None:
    balanced = analyse(marginal(), "prices.yaml", 2, what_if=False)
    (move,) = [m for m in balanced.current.moves if m.nodes == ("c",)]
    assert (move.decision, move.approved) == ("replace", False)
    assert move.score == pytest.approx((0.10 / 0.60) / (7 / 13))  # savings share over disruption share
    (row,) = [r for r in rows(render_table(balanced), "NODES") if r[0] == "c"]
    assert row[3:8] == ["replace → m.large/on-demand", "0.310", "73.00", "7.00", "no"]
    assert row[8].startswith("score 0.31 < threshold 0.50")
    assert "c" not in balanced.current.freed.nodes

    underutilized = analyse(marginal("WhenEmptyOrUnderutilized"), "p", 2, what_if=False)
    (taken,) = [m for m in underutilized.current.moves if m.nodes == ("c",)]
    assert (taken.decision, taken.approved) == ("replace", True)


def test_several_pools_get_a_total_row_and_problems_are_listed() -> None:
    inputs = two_nodes()
    batch = node_from_wire(node("z", pool="batch"), inputs.catalogue)
    inputs = replace(inputs, nodes=(*inputs.nodes, batch), problems=("pod x/y: left out",))
    lines = render_table(analyse(inputs, "p", 2, what_if=True))
    assert [row[:7] for row in rows(lines, "POOL")[1:]] == [
        ["batch", "Balanced", "current", "1", "1", "0", "0"],  # empty: Emptiness deletes it
        ["batch", "Balanced", "recommended", "1", "1", "0", "0"],
        ["general", "Balanced", "current", "2", "0", "0", "2"],
        ["general", "Balanced", "recommended", "2", "1", "0", "1"],
        ["TOTAL", "current", "3", "1", "0", "2", "0.600"],  # the empty POLICY cell is no cell
        ["TOTAL", "recommended", "3", "2", "0", "1", "0.600"],
    ]
    assert lines[-2:] == ["Problems:", "  pod x/y: left out"]


def test_without_karpenter_the_pools_line_says_how_nodes_are_grouped() -> None:
    lines = render_table(analyse(replace(two_nodes(), karpenter=False), "p", 2, what_if=False))
    assert lines[2] == ("Pools: no Karpenter NodePools served: nodes grouped by their instance type, each group "
                        "Balanced; grouped as general (2 nodes)")  # fmt: skip
    assert lines[1] == "Requests: current"
    assert not any(line.startswith("Moves with the recommended") for line in lines)


def test_the_pools_line_names_the_default_policy_and_the_pool_label() -> None:
    unpooled = replace(marginal(), pools={}, karpenter=False)
    lines = render_table(analyse(unpooled, "p", 2, what_if=False, policy="WhenEmpty", pool_label="team"))
    assert lines[2].startswith("Pools: no Karpenter NodePools served: nodes grouped by team, each group WhenEmpty; ")
    lines = render_table(analyse(marginal(), "p", 2, what_if=False, policy="WhenEmptyOrUnderutilized"))
    assert lines[2].startswith("Pools: 1 Karpenter NodePool (a pool none describes is WhenEmptyOrUnderutilized); ")


# ------------------------------------------------------------------------------------------------ JSON


def test_the_json_has_both_plans_with_the_freed_sets_and_the_moves() -> None:
    document = json.loads(render_json(analyse(two_nodes(), "prices.yaml", 2, what_if=True)))
    assert (document["catalogue"], document["k"], document["threshold"]) == ("prices.yaml", 2, "0.50")
    assert document["whatIf"] == "recommended"
    assert document["observed"] == {"nodes": 2, "pods": 4, "podDisruptionBudgets": 0, "nodePools": 1,
                                    "karpenter": True, "profiles": 1, "podsWithRecommendations": 4}  # fmt: skip
    assert document["problems"] == []
    current, recommended = document["plans"]["current"], document["plans"]["recommended"]
    assert current["freed"]["nodes"] == []
    assert current["first"] is None
    assert recommended["freed"]["nodes"] == ["a"]
    assert recommended["freed"]["savingsPerMonth"] == "146.00"
    (pool,) = recommended["pools"]
    assert {key: pool[key] for key in ("name", "policy", "nodes", "nodesAfter", "nodesFreed")} == {
        "name": "general", "policy": "Balanced", "nodes": 2, "nodesAfter": 1, "nodesFreed": 1,
    }  # fmt: skip
    assert (pool["costPerMonth"], pool["costPerMonthAfter"]) == ("292.00", "146.00")
    first = recommended["first"]
    assert {key: first[key] for key in ("method", "nodes", "decision", "approved")} == {
        "method": "single-node", "nodes": ["a"], "decision": "delete", "approved": True,
    }  # fmt: skip
    assert first["score"] == "1.00"
    assert first["scores"]["general"]["threshold"] == "0.50"
    assert first["placements"] == {"default/web-a1": "b", "default/web-a2": "b"}
    assert [move["reason"] for move in current["moves"]] == ["Can't replace with a cheaper node"] * 2


def test_the_json_of_a_replacement_and_of_k_inf() -> None:
    document = json.loads(render_json(analyse(marginal(), "p", math.inf, what_if=False)))
    assert (document["k"], document["threshold"], document["whatIf"]) == ("inf", "0.00", None)
    assert list(document["plans"]) == ["current"]
    (move,) = [m for m in document["plans"]["current"]["moves"] if m["nodes"] == ["c"]]
    assert (move["decision"], move["approved"]) == ("replace", True)  # k inf: every saving move passes
    assert move["launch"]["offering"] == {"instanceType": "m.large", "capacityType": "on-demand", "zone": None,
                                         "pricePerHour": "0.1000"}  # fmt: skip


# ------------------------------------------------------------------------------------------------ the command


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    """The fake API server as the CLI's connection, and `two_nodes` as what the reader reads from it: priced
    from the catalogue ConfigMap the reader's own `read_catalogue` finds there, else unpriced."""
    fake = FakeAPI()
    monkeypatch.setattr(plan_cmd, "connect", lambda *_, **__: fake.client())

    def read_inputs(client: Any, settings: ReadSettings, *, now: datetime | None = None) -> Inputs:
        catalogue = read_catalogue(client, settings)
        return replace(two_nodes(catalogue), problems=catalogue.problems, catalogue_problems=catalogue.problems)

    monkeypatch.setattr(plan_report, "read_inputs", read_inputs)
    yield fake
    fake.close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["consolidation", "plan", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_flags_and_their_defaults() -> None:
    args = cli.parser().parse_args(["consolidation", "plan", "--context", "c"])
    assert (args.command, args.action, args.what_if, args.k, args.catalogue, args.output, args.context) == (
        "consolidation", "plan", None, "2", None, "table", "c",
    )  # fmt: skip
    args = cli.parser().parse_args(["consolidation", "plan", "--what-if", "recommended", "--k", "3", "-o", "json",
                                    "--catalogue", "cm/a/b"])  # fmt: skip
    assert (args.what_if, args.k, args.catalogue, args.output) == ("recommended", "3", "cm/a/b", "json")
    assert (args.policy, args.pool_label) == ("Balanced", "node.kubernetes.io/instance-type")  # as ballastd's


def test_policy_and_pool_label_reach_the_reader_and_the_planner(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Without NodePools, --policy is every pool's policy (as ballastd's --consolidation-policy): the marginal
    move Balanced rejects is taken under WhenEmptyOrUnderutilized and nothing moves under WhenEmpty."""
    fake = FakeAPI()
    monkeypatch.setattr(plan_cmd, "connect", lambda *_, **__: fake.client())
    settings: list[ReadSettings] = []
    times: list[datetime | None] = []

    def read_inputs(client: Any, read: ReadSettings, *, now: datetime | None = None) -> Inputs:
        settings.append(read)
        times.append(now)
        return replace(marginal(), pools={}, karpenter=False)

    monkeypatch.setattr(plan_report, "read_inputs", read_inputs)
    prices = tmp_path / "prices.yaml"
    prices.write_text(yaml.safe_dump(CATALOGUE))
    approved = {}
    for policy in ("Balanced", "WhenEmptyOrUnderutilized", "WhenEmpty"):
        code, out, err = run(
            capsys, "--catalogue", str(prices), "--policy", policy, "--pool-label", "team", "-o", "json"
        )
        assert (code, err) == (0, "")
        document = json.loads(out)
        assert (document["defaultPolicy"], document["poolLabel"]) == (policy, "team")
        moves = document["plans"]["current"]["moves"]
        approved[policy] = sorted(node for move in moves if move["approved"] for node in move["nodes"])
    assert [read.pool_label for read in settings] == ["team"] * 3
    # Scheduled NodePool budgets are decided at the time of the run.
    assert all(now is not None and abs((datetime.now(UTC) - now).total_seconds()) < 60 for now in times)
    assert approved == {"Balanced": ["a", "b"], "WhenEmptyOrUnderutilized": ["a", "b", "c"], "WhenEmpty": []}
    fake.close()


def test_an_empty_pool_label_is_refused(cluster: FakeAPI, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--pool-label", " ")
    assert (code, out, err) == (1, "", "ballast: --pool-label: must not be empty\n")


@pytest.mark.parametrize(
    "argv", [["consolidation"], ["consolidation", "apply"], ["consolidation", "plan", "--what-if", "lowest"],
             ["consolidation", "plan", "-o", "yaml"]]
)  # fmt: skip
def test_usage_errors_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 1
    assert "error:" in capsys.readouterr().err


def test_the_command_prices_from_a_file_and_prints_the_table_and_the_json(
    cluster: FakeAPI, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(yaml.safe_dump(CATALOGUE))
    code, out, err = run(capsys, "--what-if", "recommended", "--catalogue", str(prices))
    assert (code, err) == (0, "")
    assert out.splitlines() == render_table(analyse(two_nodes(), str(prices), 2, what_if=True))
    code, out, err = run(capsys, "--catalogue", str(prices), "-o", "json", "--k", "inf")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert (document["k"], list(document["plans"]), document["problems"]) == ("inf", ["current"], [])
    assert document["plans"]["current"]["pools"][0]["costPerHour"] == "0.4000"


def test_the_catalogue_from_a_configmap(cluster: FakeAPI, capsys: pytest.CaptureFixture[str]) -> None:
    (configmap,) = [doc for doc in yaml.safe_load_all(SAMPLE.read_text()) if doc]
    configmap["data"]["catalogue.yaml"] = yaml.safe_dump(CATALOGUE)
    cluster.client().create(configmap)
    code, out, err = run(capsys, "-o", "json")  # the default: the sample's ConfigMap
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["catalogue"] == "cm/ballast-system/ballast-consolidation-catalogue"
    assert document["plans"]["current"]["pools"][0]["costPerHour"] == "0.4000"
    code, out, err = run(capsys, "--catalogue", "cm/ballast-system/elsewhere")
    assert (code, out) == (1, "")
    assert err == ("ballast: catalogue cm/ballast-system/elsewhere: no offering read (catalogue ConfigMap "
                   "ballast-system/elsewhere not found: every node priced 0)\n")  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--k", "0"], "ballast: --k '0': not a positive integer (or inf)\n"),
        (["--catalogue", "/nonexistent/prices.yaml"],
         "ballast: catalogue file /nonexistent/prices.yaml: No such file or directory\n"),
        (["--catalogue", "cm/prices"],
         "ballast: --catalogue 'cm/prices': a ConfigMap is cm/NAMESPACE/NAME (a file named so: ./cm/prices)\n"),
    ],
)  # fmt: skip
def test_errors_exit_1_naming_what_was_wrong(
    cluster: FakeAPI, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (1, "", message)


def test_advice_lists_its_plans_in_order() -> None:
    analysis = analyse(two_nodes(), "p", 2, what_if=True)
    assert [label for label, _ in analysis.plans] == ["current", "recommended"]
    assert [label for label, _ in Analysis(analysis.current, "p").plans] == ["current"]


def test_freed_means_todays_nodes_gone_in_the_table_the_text_and_the_report_and_a_replacement_is_launched() -> None:
    analysis = analyse(marginal("WhenEmptyOrUnderutilized"), "p", 2, what_if=False)
    plan = analysis.current
    (pool,) = plan.pools.values()
    assert (pool.nodes, pool.freed, pool.launched, pool.nodes_after) == (3, 1, 1, 3)  # a node traded for a cheaper
    lines = render_table(analysis)
    (row,) = [r for r in rows(lines, "POOL")[1:] if r[2] == "current"]
    assert row[3:7] == ["3", "1", "1", "3"]  # NODES, FREED, LAUNCHED, AFTER
    freed_line = next(line for line in lines if line.startswith("Freed with the current requests:"))
    gone = plan.freed.nodes[0]
    assert freed_line.startswith(f"Freed with the current requests: 1 of today's nodes, {gone}, for 1 launched (")
    report_freed = requests_report(plan).freed
    assert report_freed is not None
    assert report_freed.count == pool.freed
    document = json.loads(render_json(analysis))
    current = document["plans"]["current"]
    assert (current["pools"][0]["nodesFreed"], current["pools"][0]["nodesLaunched"]) == (1, 1)
    assert current["freed"]["count"] == 1
    assert "savingsFromRightSizingPerMonth" not in current["freed"]  # nothing to compare the current plan with


def test_the_recommended_saving_is_split_into_right_sizing_and_what_todays_requests_allow() -> None:
    analysis = analyse(two_nodes(), "p", 2, what_if=True)
    assert analysis.recommended is not None
    right_sizing, today = saving_split(analysis.recommended, analysis.current)
    assert today == 0.0  # today's requests free nothing
    assert right_sizing == pytest.approx(0.2)
    assert right_sizing + today == pytest.approx(analysis.recommended.freed.savings_per_hour)
    freed = json.loads(render_json(analysis))["plans"]["recommended"]["freed"]
    assert (freed["savingsFromRightSizingPerMonth"], freed["savingsWithCurrentRequestsPerMonth"]) == ("146.00", "0.00")
