"""One refresh of the ConsolidationReport on a real kube-apiserver + etcd: the reader's paged LISTs and the two
plans (current and recommended requests), timed apart, with the process's memory.

The cluster (`Environment`, our CRDs): `--nodes` m5.xlarge nodes (4 cpu, 16Gi, pool `general`) with `--pods` pods
spread over them (1 container, 500m / 512Mi, profile `web`, recommended 150m / 256Mi), a catalogue ConfigMap with
the offerings of config/samples/consolidation/ and one WorkloadProfile. The refresh is the controller's:
`read_inputs` (pages of 500) then `advise` (k = 2, Balanced); `--runs` of them, the median printed. Memory: RSS
before the first read and after the last, and the peak (`ru_maxrss`): nothing is kept between refreshes, so
after-the-last should stay near before-the-first.

    .venv/bin/python benchmarks/consolidation_refresh.py [--nodes 50] [--pods 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from pathlib import Path

import yaml

from ballast.internal.consolidation.inputs import ReadSettings, advise, read_inputs
from ballast.runtime import RESTConfig
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.rest import Transport

ROOT = Path(__file__).resolve().parent.parent
CRD_DIR = ROOT / "config" / "crd" / "bases"
SAMPLE = ROOT / "config" / "samples" / "consolidation" / "catalogue-configmap.yaml"
PROFILES = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"


def _rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def populate(env: Environment, nodes: int, pods: int) -> None:
    rest = env.rest
    rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
    sample = yaml.safe_load(SAMPLE.read_text())
    sample["metadata"] = {"name": "catalogue", "namespace": "bench"}
    rest.create("/api/v1/namespaces/bench/configmaps", sample)
    for i in range(nodes):
        name = f"node-{i}"
        labels = {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": "m5.xlarge",
                  "karpenter.sh/nodepool": "general", "karpenter.sh/capacity-type": "on-demand"}  # fmt: skip
        rest.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})
        rest.request("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": []}},
                     content_type="application/merge-patch+json")  # fmt: skip
        rest.patch_status(f"/api/v1/nodes/{name}", {"status": {
            "allocatable": {"cpu": "3920m", "memory": "14162Mi", "pods": "58"},
            "conditions": [{"type": "Ready", "status": "True"}]}})  # fmt: skip
    rest.create(PROFILES, {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile",
                           "metadata": {"name": "web"}})  # fmt: skip
    rest.patch_status(
        f"{PROFILES}/web",
        {
            "status": {
                "meetsThreshold": True,
                "containers": [
                    {"name": "app", "recommendations": {"cpu": {"request": "150m"}, "memory": {"request": "256Mi"}}}
                ],
            }
        },
    )
    for i in range(pods):
        rest.create("/api/v1/namespaces/bench/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"web-{i}", "annotations": {"ballast.tightlinesoftware.com/profile-ref": "web"}},
            "spec": {"nodeName": f"node-{i % nodes}", "containers": [{"name": "app", "image": "example/app:1",
                     "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]},
        })  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with Environment(crd_paths=[CRD_DIR], network_mode="loopback") as env:
        populate(env, args.nodes, args.pods)
        client = APIServerClient(Transport(RESTConfig(env.client_configuration())))
        settings = ReadSettings(catalogue=("bench", "catalogue"))
        before = _rss_mib()
        reads, plans = [], []
        for _ in range(args.runs):
            started = time.perf_counter()
            inputs = read_inputs(client, settings)
            read_at = time.perf_counter()
            advice = advise(inputs)
            plans.append(time.perf_counter() - read_at)
            reads.append(read_at - started)
            del inputs
        after = _rss_mib()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{args.nodes} nodes, {args.pods} pods, {args.runs} refreshes")
        print(f"read (paged LISTs): median {statistics.median(reads) * 1000:.0f} ms")
        print(f"plan (current + recommended): median {statistics.median(plans) * 1000:.0f} ms")
        print(f"freed: current {len(advice.current.freed.nodes)}, recommended {len(advice.recommended.freed.nodes)} "
              f"nodes ({advice.recommended.freed.savings_per_month:.2f}/month)")  # fmt: skip
        print(f"RSS: before {before:.1f} MiB, after {after:.1f} MiB, peak {peak:.1f} MiB")


if __name__ == "__main__":
    main()
