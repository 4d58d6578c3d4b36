"""RELIABILITY.md's table, rendered from the figures the tests record (build/figures/<scenario>.json).

    python -m tests.e2e.reliability            # rewrite the table in RELIABILITY.md
    python -m tests.e2e.reliability --check    # exit 1 when the file differs from what the figures give

The e2e suite renders it at the end of a run that recorded figures. A scenario with no figure file here keeps
the row the document already holds (the figures are not committed, so a fresh clone that ran one scenario must
not erase the others'); one never measured says so.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from tests.paths import REPOSITORY

FIGURES_DIR = REPOSITORY / "build" / "figures"
DOCUMENT = REPOSITORY / "RELIABILITY.md"
BEGIN = "<!-- figures:begin (rendered by `python -m tests.e2e.reliability`; do not edit) -->"
END = "<!-- figures:end -->"

Figures = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Scenario:
    key: str
    title: str
    asserts: str
    command: str
    figure: Callable[[Figures], str]


def _e2e(test: str) -> str:
    return f"`ballast-envtest netns -- pytest tests/e2e/{test}`"


def _cores(cores: Mapping[str, float]) -> str:
    busiest = sorted(cores.items(), key=lambda item: -item[1])
    return "; cores meanwhile: " + ", ".join(f"{name} {share}" for name, share in busiest) if cores else ""


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "leader_failover",
        "1. Leader killed right after a resize patch (2 replicas)",
        "a new leader within the bound; never two leaders; no step sent twice; the successor waits out the cooldown",
        _e2e("test_failover.py"),
        lambda f: (
            f"handover {f['handover_seconds']} s (bound {f['bound_seconds']} s); {f['repeated_steps']} repeated "
            f"steps; next step {f['first_gap_seconds']} s after the crashed one (cooldown {f['cooldown_seconds']} s)"
        ),
    ),
    Scenario(
        "apiserver_restart",
        "2. kube-apiserver restarted under write load",
        "cache == fresh LIST (names, resourceVersions); every last version reconciled; queue empty",
        _e2e("test_relist.py -k restart"),
        lambda f: (
            f"informer caught up {f['relist_recovery_seconds']} s after the API server was back "
            f"(restart {f['apiserver_ready_seconds']} s); {f['writes']} writes, 0 lost"
        ),
    ),
    Scenario(
        "watch_expiry",
        "3. Watch expiry (410) from etcd compaction under write load",
        "as 2, with the informer cut off while writes go on and etcd is compacted",
        _e2e("test_relist.py -k expiry"),
        lambda f: f"{f['expired_410']} × 410 over {f['cuts']} cuts; {f['writes']} writes, 0 lost",
    ),
    Scenario(
        "redis_outage",
        "4. Redis stopped for several collection cycles, and slow",
        "cycles skipped and counted; stored samples intact; collection resumes within one interval",
        _e2e("test_redis_outage.py"),
        lambda f: (
            f"{f['samples_lost']} samples lost; {f['skipped_cycles']} cycles skipped; resumed "
            f"{f['resume_seconds']} s after Redis returned"
        ),
    ),
    Scenario(
        "certificate_rotation",
        "5. Webhook certificate rotated under admission load",
        "zero failed admissions",
        _e2e("test_rotation.py"),
        lambda f: f"{f['failed']} failed of {f['admissions']} admissions at {f['rate_per_second']}/s",
    ),
    Scenario(
        "rolling_upgrade",
        "6. Rolling upgrade of 2 replicas under admission load",
        "zero failed admissions; one leader throughout; apply-crds changes no object",
        _e2e("test_upgrade.py"),
        lambda f: (
            f"{f['failed']} failed of {f['admissions']} admissions at {f['rate_per_second']}/s (p99 {f['p99_ms']} ms); "
            f"max leaders at once {f['max_leaders']}; {f['objects_unchanged_by_apply_crds']} CRDs and objects "
            "unchanged by apply-crds"
        ),
    ),
    Scenario(
        "operator_down",
        "7. Operator down: failurePolicy Fail vs Ignore",
        "Fail refuses enrolled pods only, naming the webhook; Ignore admits them untouched; nothing stuck",
        _e2e("test_operator_down.py"),
        lambda f: f"refused in {f['refusal_seconds']} s; {f['stuck_terminating']} pods stuck Terminating",
    ),
    Scenario(
        "karpenter_side_by_side",
        "8. Consolidation advisor side by side with Karpenter v1.15.0 (kwok provider, Balanced) after a shrink",
        "Karpenter's first command is the advisor's first move (same score); the nodes gone are the freed set; a "
        "move the advisor rejects Karpenter does not take",
        _e2e("test_karpenter.py"),
        lambda f: (
            f"{f['first_move']}: score {f['advisor_score']} (Karpenter {f['karpenter_score']}); "
            f"{f['freed_nodes']} node freed by {f['karpenter_commands']} command; {f['advisor_rejected']} rejected "
            f"move, rejected by Karpenter too; decided {f['decided_after_seconds']} s and converged "
            f"{f['converged_after_seconds']} s after the shrink; scenario {f['scenario_seconds']} s"
        ),
    ),
    Scenario(
        "store_failover",
        "Store primary SIGKILLed under collection on the mini-cluster (Sentinel: 1 primary, 2 replicas, 3 sentinels; "
        "1 s cycles)",
        "a replica promoted; the cycles meanwhile held and written after the promotion, none dropped; every sample "
        "the collector wrote stored once, its memory equal to and its cpu within 15 % of what metrics.k8s.io serves; "
        "the status moves with the first cycle that starts after the promotion",
        _e2e("test_store_failover.py"),
        lambda f: (
            f"{f['samples_lost']} samples lost, {f['cycles_written_twice']} cycles twice (of "
            f"{f['samples_checked']}); replica promoted {f['promotion_seconds']} s and held cycles written "
            f"{f['failover_seconds']} s after the kill (down-after {f['down_after_ms']} ms); cycles buffered "
            f"meanwhile: {f['cycles_buffered']}; status moved {f['status_resumed_seconds']} s after the promotion"
        ),
    ),
    Scenario(
        "real_node_resize",
        "Real node: the operator resizes a running container in place (kubelet v1.37.2, containerd v2.4.2)",
        "the container's cgroup (cpu.shares, cpu.cfs_quota_us, memory.limit_in_bytes) holds what the kubelet reports; "
        "stepped down only; restartCount 0, same container",
        _e2e("realnode/test_workloads.py -k resizes"),
        lambda f: (
            f"{f['steps']} steps ({' → '.join(f['cpu_requests'])} CPU); spec to cgroup within "
            f"{f['max_patch_to_cgroup_seconds']} s per step; settled after {f['settled_after_seconds']} s; "
            f"{f['restarts']} restarts"
        ),
    ),
    Scenario(
        "real_node_oom",
        "Real node: a container leaking past its memory limit",
        "killed by the kernel (exit 137, OOMKilled), restarted with the same cgroup limit; the collector keeps "
        "sampling, no traceback",
        _e2e("realnode/test_workloads.py -k oom"),
        lambda f: (
            f"{f['reason']} ({f['exit_code']}) {f['leak_to_kill_seconds']:g} s into the leak; memory.limit_in_bytes "
            f"{f['memory_limit_bytes_after']} after {f['restarts']} restart(s); samples {f['samples_at_kill']} → "
            f"{f['samples_after']}"
        ),
    ),
    Scenario(
        "real_node_refused_upsize",
        "Real node: an in-place upsize above the node's allocatable (refused by the API server)",
        "two containers each recommended 0.75 × the node's allocatable memory: 403 before the kubelet sees it; the "
        "pod gets the blocked annotation and a ResizeBlocked event; at most one attempt per resize interval in the "
        "API server's audit log; spec, status and cgroup unchanged; restartCount 0",
        _e2e("realnode/test_refusals.py -k allocatable"),
        lambda f: (
            f"HTTP {f['code']}; {f['attempts']} attempts in {f['window_seconds']} s (interval "
            f"{f['interval_seconds']} s, closest {f['min_gap_seconds']} s apart); cgroup unchanged; "
            f"{f['restarts']} restarts"
        ),
    ),
    Scenario(
        "real_node_below_usage",
        "Real node: a memory limit below the container's usage (the kubelet's Error)",
        "the kubelet keeps the old cgroup limit and the container (restartCount 0); the pod is marked blocked once "
        "with the kubelet's message and nothing more is sent (audit log); a later recommendation above usage "
        "replaces the failing spec and the kernel enforces it (docs/design.md, difference 74)",
        _e2e("realnode/test_refusals.py -k below_usage"),
        lambda f: (
            f"limit {f['wanted_limit_bytes'] / 2**20:.0f} MiB asked under {f['usage_bytes'] / 2**20:.0f} MiB used: "
            f"{f['attempts_before_block']} patch, then {f['attempts_in_window']} in {f['window_seconds']} s; "
            f"memory.limit_in_bytes kept at {f['kept_limit_bytes'] / 2**20:.0f} MiB, then "
            f"{f['limit_after_bytes'] / 2**20:.0f} MiB {f['replaced_after_seconds']} s after the new "
            f"recommendation; {f['restarts']} restarts"
        ),
    ),
    Scenario(
        "real_node_metrics_server",
        "Real node: metrics-server v0.8.0 scraping the real kubelet",
        "a running container's PodMetrics against the kernel's own counters: memory within 10 % (or 4 MiB) of "
        "memory.usage_in_bytes − total_inactive_file, CPU within 20 % of cpuacct.usage over the same window",
        _e2e("realnode/test_workloads.py -k metrics_server"),
        lambda f: (
            f"memory {f['memory_reported_mib']} MiB (cgroup {f['memory_cgroup_mib']} MiB); CPU "
            f"{f['cpu_reported_millicores']}m (cgroup {f['cpu_cgroup_millicores']}m) over {f['window']}"
        ),
    ),
    Scenario(
        "real_node_lifecycle",
        "Real node: start and teardown",
        "after the stop no process, mount, cgroup, /run/containerd or changed sysctl remains; a run after a killed "
        "one starts clean",
        _e2e("realnode/test_lifecycle.py"),
        lambda f: (
            f"containerd ready {f['containerd_ready_seconds']} s, Node Ready {f['node_ready_seconds']} s after the "
            f"control plane; teardown {f['teardown_seconds']} s; {f['leftovers']} leftovers; "
            f"{f['sysctls_changed']} sysctls changed"
        ),
    ),
    Scenario(
        "karpenter_delete",
        "Load: a consolidation DELETE side by side with Karpenter v1.15.0",
        "Karpenter deletes the node the advisor's first move deletes, with the same score, in one command",
        "`make test-load` (tests/load/test_karpenter_scenarios.py)",
        lambda f: (
            f"{f['first_move']}: score {f['advisor_score']} (Karpenter {f['karpenter_score']}); "
            f"{f['freed_nodes']} node freed by {f['karpenter_commands']} command; decided "
            f"{f['decided_after_seconds']} s and converged {f['converged_after_seconds']} s after the change"
        ),
    ),
    Scenario(
        "karpenter_blocked",
        "Load: a node blocked by karpenter.sh/do-not-disrupt, side by side with Karpenter v1.15.0",
        "the advisor's reason is Karpenter's DisruptionBlocked event; Karpenter sends no command",
        "`make test-load` (tests/load/test_karpenter_scenarios.py)",
        lambda f: (
            f"reason {f['reason']!r} (Karpenter's event after {f['karpenter_blocked_after_seconds']} s); "
            f"{f['karpenter_commands']} commands over {f['watched_seconds']} s"
        ),
    ),
    Scenario(
        "operator_footprint",
        "Load: 1,000 enrolled pods among 1,000 vs 20,000 cluster pods",
        "peak RSS at 20,000 within 1.1 × that at 1,000, for each configuration but the advisor (which lists every "
        "pod by design: recorded, and its report must observe them all); the collector kept collecting",
        "`make test-load`",
        lambda f: "; ".join(
            f"{name}: {f['at_1000'][name]['rss_mib']} → {f['at_20000'][name]['rss_mib']} MiB "
            f"(×{ratio['rss']}), CPU {f['at_1000'][name]['cpu_seconds']} → {f['at_20000'][name]['cpu_seconds']} s "
            f"per {f['window_seconds']:g} s (×{ratio['cpu']})"
            for name, ratio in f["ratios"].items()
        ),
    ),
    Scenario(
        "store_failover_load",
        "Load: store primary SIGKILLed while 1,000 pods are collected (Sentinel: 1 primary, 2 replicas, 3 sentinels)",
        "as the mini-cluster scenario above, for 100 profiles of 10 pods: 0 samples lost, none twice, every held "
        "cycle written after the promotion, every status moved by the first cycle that starts after it",
        "`make test-load` (tests/load/test_store_failover.py)",
        lambda f: (
            f"{f['pods']} pods, {f['profiles']} profiles: {f['samples_lost']} samples lost, "
            f"{f['cycles_written_twice']} cycles twice (of {f['samples_checked']} cpu samples); replica promoted "
            f"{f['promotion_seconds']} s and held cycles written {f['failover_seconds']} s after the kill "
            f"(down-after {f['down_after_ms']} ms); cycles buffered meanwhile: {f['cycles_buffered']}; statuses "
            f"moved {f['status_resumed_seconds']} s after the promotion (a cycle every "
            f"{f.get('cycle_seconds', '?')} s, poll interval {f['poll_seconds']:g} s)"
        ),
    ),
    Scenario(
        "admission_load",
        "Load: admissions offered at 200/s to 2 replicas in a 20,000-pod cluster",
        "zero failed admissions",
        "`make test-load`",
        lambda f: (
            f"{f['failed']} failed of {f['admissions']}, {f['rate_per_second']}/s achieved of "
            f"{f.get('offered_per_second', 200)}/s offered ({f.get('late', 0)} slots not started: 64 already in "
            f"flight); p99 {f['p99_ms']} ms ({f['replicas']} replicas, {f['cluster_pods']} cluster pods)"
            + _cores(f.get("cores", {}))
        ),
    ),
    Scenario(
        "object_fuzz",
        "Pods fuzzed through the API server (mode variants, absurd quantities, up to 200 containers)",
        "the created pod, an API 4xx or the webhook's 403 naming the label — never a webhook error; operator ready",
        _e2e("test_bad_input.py -k fuzzed"),
        lambda f: (
            f"{f['cases']} cases ({f['created_for_real']} also created for real); {f['webhook_errors']} webhook "
            f"errors; {f['operator_restarts']} operator restarts; answers "
            + ", ".join(f"{status}: {count}" for status, count in f["by_status"].items())
        ),
    ),
    Scenario(
        "bad_policies",
        "Malformed policies and configuration",
        "an API refusal naming the field; one that slipped past the Ignore webhook gets Valid=False naming it; "
        "good objects keep their status; no stored sample lost",
        _e2e("test_bad_input.py -k malformed"),
        lambda f: (
            f"{f['refused']} refused naming the field; {f['flagged_after_slipping_through']} flagged by "
            f"Valid=False; samples {f['samples_before']} → {f['samples_after']} ({f['samples_lost']} lost)"
        ),
    ),
    Scenario(
        "kill_switch_garbage",
        "Kill-switch ConfigMap of garbage",
        "switch on (existence only): an apply pod admitted unchanged; deleted: sizing restored",
        _e2e("test_bad_input.py -k kill_switch"),
        lambda f: (
            f"on in {f['on_seconds']} s; sizing back {f['sizing_restored_seconds']} s after deletion; "
            f"{f['sized_while_on']} pods sized while on"
        ),
    ),
    Scenario(
        "sentinel_failover",
        "Store primary SIGKILLed under collection (Sentinel: 1 primary, 2 replicas, 3 sentinels)",
        "a replica promoted; every sample of every cycle stored once (0 lost, 0 twice); the cycles meanwhile held "
        "and written after the promotion",
        "`pytest tests/integration/internal/history/test_sentinel.py -k killed`",
        lambda f: (
            f"{f['samples_lost']} samples lost, {f['cycles_written_twice']} cycles twice; writes resumed "
            f"{f['failover_seconds']} s after the kill (down-after {f['down_after_ms']} ms); "
            f"{f['cycles_held']} cycles held meanwhile"
        ),
    ),
    Scenario(
        "crd_reinstall",
        "CRD deleted and reinstalled under load",
        "`kubectl delete crd workloadprofiles…` then a reinstall under a running operator and a collector writing "
        "throughout: the profiles come back with their measurement hashes and every sample is still there",
        "`ballast-envtest netns -- pytest tests/integration/controllers/lanes/test_crd_reinstall.py`",
        lambda f: (
            f"samples {f['samples_before']} → {f['samples_after']} ({f['samples_written_meanwhile']} written "
            f"meanwhile, {f['samples_lost']} lost); profiles back {f['profiles_back_seconds']} s after the reinstall; "
            f"{f['tracebacks']} tracebacks while the CRD was gone"
        ),
    ),
    Scenario(
        "silent_api_server",
        "API server that accepts and never answers",
        "a listener that accepts TCP and never answers stands for the API server: `ballast profiles` fails in one "
        "line naming the server and the deadline; `ballastd` logs where it connects and each attempt, answers "
        "/healthz, fails /readyz naming the reason, and becomes ready on the real API server once it answers",
        "`ballast-envtest netns -- pytest tests/integration/internal/cmd/ballastd/test_unreachable.py`",
        lambda f: (
            f"`ballast profiles` clear error after {f['cli_seconds_request_timeout_1s']} s (--request-timeout 1s) and "
            f"{f['cli_seconds_default']} s (default); ballastd alive through {f['attempts_logged']} attempts "
            f"(/healthz {f['healthz_status']}, /readyz {f['readyz_status']} naming the server), ready "
            f"{f['ready_seconds_after_answer']} s after the server answered; {f['tracebacks']} tracebacks"
        ),
    ),
    Scenario(
        "fuzz_reviews",
        "Raw AdmissionReviews fuzzed at the webhook server",
        "a valid AdmissionReview or an HTTP 4xx for every request; the server never dies",
        "`pytest tests/unit/webhook/test_fuzz_reviews.py`",
        lambda f: f"{f['cases']} cases; {f['crashes']} crashes; {f['http_5xx']} HTTP 5xx",
    ),
)


def _load(key: str, directory: Path) -> dict[str, Any] | None:
    path = directory / f"{key}.json"
    if not path.is_file():
        return None
    document: dict[str, Any] = orjson.loads(path.read_bytes())
    return document


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def recorded_rows(text: str) -> dict[str, str]:
    """The rows of the table in `text`, by their first cell (the scenario's title as rendered)."""
    _, begin, rest = text.partition(BEGIN)
    body, _, _ = rest.partition(END)
    rows = {}
    for line in body.splitlines()[2:] if begin else ():
        if line.startswith("| "):
            rows[line[2:].split(" | ", 1)[0]] = line
    return rows


def table(directory: Path = FIGURES_DIR, recorded: Mapping[str, str] | None = None) -> str:
    """The markdown table of every scenario, its latest figure (or why there is none) and its command; a
    scenario without a figure file in `directory` keeps its row from `recorded` when there is one."""
    rows = ["| Scenario | Asserts | Latest figure | Measured | Reproduce |", "|---|---|---|---|---|"]
    for scenario in SCENARIOS:
        document = _load(scenario.key, directory)
        if document is None and _cell(scenario.title) in (recorded or {}):
            rows.append((recorded or {})[_cell(scenario.title)])
            continue
        if document is None:
            figure, measured = "not measured yet", "—"
        else:
            figures = document.get("figures", document)  # the fuzz suite writes its figures at the top level
            try:
                figure = scenario.figure(figures)
            except KeyError as exc:
                figure = f"figure file lacks {exc}"
            measured = str(document.get("measured") or document.get("measured_at") or "—")[:10]
        cells = (scenario.title, scenario.asserts, figure, measured, scenario.command)
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def render(text: str, directory: Path = FIGURES_DIR) -> str:
    """`text` with the part between the markers replaced by the current table."""
    head, begin, rest = text.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{DOCUMENT.name} lacks the markers {BEGIN!r} … {END!r}")
    return f"{head}{BEGIN}\n{table(directory, recorded_rows(text))}{END}{tail}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.reliability", description=__doc__)
    parser.add_argument("--check", action="store_true", help="report a stale table instead of rewriting it")
    args = parser.parse_args(argv)
    current = DOCUMENT.read_text()
    wanted = render(current)
    if args.check:
        if wanted != current:
            print(f"{DOCUMENT.name} is stale: run python -m tests.e2e.reliability", file=sys.stderr)
            return 1
        return 0
    DOCUMENT.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
