"""kupid's own example policies, restated as wire dicts: the sample policies its README points to (one per
scheduling mechanism, namespaced and cluster-wide) and the ClusterPodSchedulingPolicies its Gardener chart renders
from the example `policies` of its values (`etcd`, `fluent-bit`). Every one must be accepted as it is."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
API_VERSION = "kupid.gardener.cloud/v1alpha1"
DEDICATED = "worker-pool.gardener.cloud/dedicated-for"
POOL_DEDICATED = "pool.worker.gardener.cloud/dedicated-for"
ETCD_MAIN = {"app": "etcd-statefulset", "role": "main"}


def _policy(kind: str, name: str, spec: JSON, namespace: str | None) -> JSON:
    metadata: JSON = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def _required_in(key: str, value: str) -> JSON:
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


_POD_AFFINITIES: JSON = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": dict(ETCD_MAIN)}, "topologyKey": "kubernetes.io/hostname"}
        ]
    },
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "podAffinityTerm": {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "app", "operator": "NotIn", "values": ["etcd-statefulset"]},
                            {"key": "role", "operator": "NotIn", "values": ["main"]},
                        ]
                    },
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    },
}


def _namespaced_specs() -> dict[str, JSON]:
    selector = {"matchLabels": dict(ETCD_MAIN)}
    equal_etcd = {"key": DEDICATED, "operator": "Equal", "value": "etcd", "effect": "NoSchedule"}
    return {
        "psp-node-affinity": {"podSelector": selector, "affinity": _required_in(DEDICATED, "etcd")},
        "psp-node-name": {"podSelector": selector, "nodeName": "node-1"},
        "psp-node-selector": {"podSelector": selector, "nodeSelector": {DEDICATED: "etcd"}},
        "psp-node-selector-tolerations": {
            "podSelector": {"matchLabels": {"app": "etcd-statefulset", "role": "events"}},
            "nodeSelector": {DEDICATED: "etcd"},
            "tolerations": [equal_etcd],
        },
        "psp-pod-affinity-anti-affinity": {"podSelector": selector, "affinity": _POD_AFFINITIES},
        "psp-scheduler-name": {"podSelector": selector, "schedulerName": "dedicated-worker-pool-scheduler"},
        "psp-tolerations": {"podSelector": selector, "tolerations": [equal_etcd]},
    }


def namespaced_samples(namespace: str) -> list[JSON]:
    """The PodSchedulingPolicy samples, in `namespace` (kupid applies them with `kubectl -n`)."""
    return [_policy("PodSchedulingPolicy", name, spec, namespace) for name, spec in _namespaced_specs().items()]


def cluster_samples() -> list[JSON]:
    """The ClusterPodSchedulingPolicy samples: the same mechanisms, for every namespace (`namespaceSelector: {}`)."""
    samples = []
    for name, spec in _namespaced_specs().items():
        cluster_spec = {**spec, "namespaceSelector": {}}
        samples.append(_policy("ClusterPodSchedulingPolicy", name.replace("psp-", "cpsp-"), cluster_spec, None))
    samples.append(
        _policy(
            "ClusterPodSchedulingPolicy",
            "cpsp-node-affinity-tolerations",
            {
                "namespaceSelector": {},
                "podSelector": {"matchLabels": dict(ETCD_MAIN)},
                "affinity": _required_in(POOL_DEDICATED, "etcd"),
                "tolerations": [{"key": POOL_DEDICATED, "operator": "Equal", "value": "etcd", "effect": "NoExecute"}],
            },
            None,
        )
    )
    return samples


def chart_samples() -> list[JSON]:
    """What kupid's chart renders for the example `policies` of its values: `kupid-policy-<name>`, labelled with
    the policy and release names."""
    no_execute = [{"key": POOL_DEDICATED, "operator": "Equal", "value": "etcd", "effect": "NoExecute"}]
    etcd = _policy(
        "ClusterPodSchedulingPolicy",
        "kupid-policy-etcd",
        {
            "namespaceSelector": {},
            "podSelector": {"matchLabels": dict(ETCD_MAIN)},
            "affinity": _required_in(POOL_DEDICATED, "etcd"),
            "tolerations": no_execute,
        },
        None,
    )
    fluent_bit = _policy(
        "ClusterPodSchedulingPolicy",
        "kupid-policy-fluent-bit",
        {
            "namespaceSelector": {},
            "podSelector": {"matchLabels": {"app": "fluent-bit", "role": "logging", "gardener.cloud/role": "logging"}},
            "tolerations": no_execute,
        },
        None,
    )
    for policy in (etcd, fluent_bit):
        name = policy["metadata"]["name"]
        policy["metadata"]["labels"] = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": "kupid"}
    return [etcd, fluent_bit]


def all_samples(namespace: str = "garden") -> list[JSON]:
    """Every sample above; the namespaced ones in `namespace`."""
    return [*namespaced_samples(namespace), *cluster_samples(), *chart_samples()]
