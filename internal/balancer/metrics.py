"""The Balancer controller's gauges: what upstream computes and throws away, per Balancer.

`ballast_balancer_replicas{namespace,balancer,target,kind}` — per target, `kind` ∈ `desired` (placed by the
policy, fallback included), `placed` (the target's `scale.spec.replicas`), `running`, `not_started` (Pending past
the startup timeout). `ballast_balancer_problem_replicas{namespace,balancer,problem}` — `missing` (the minimums
above `spec.replicas`) and `overflow` (replicas no target can take). A Balancer's series are replaced as a whole
at each run and removed when it is deleted.
"""

from __future__ import annotations

from collections.abc import Mapping

from ballast.internal.telemetry.metrics import LabelledGauge

REPLICA_KINDS = ("desired", "placed", "running", "not_started")
"""The `kind` label values of `ballast_balancer_replicas`."""
PROBLEMS = ("missing", "overflow")
"""The `problem` label values of `ballast_balancer_problem_replicas`."""


class _BalancerGauge(LabelledGauge):
    """A gauge whose series are grouped by (namespace, balancer): replaced and forgotten one Balancer at a time."""

    def replace_balancer(self, namespace: str, balancer: str, samples: list[tuple[Mapping[str, str], float]]) -> None:
        owner = {("namespace", namespace), ("balancer", balancer)}
        with self._lock:
            kept = {labels: value for labels, value in self._values.items() if not owner <= labels}
            for labels, value in samples:
                kept[frozenset({"namespace": namespace, "balancer": balancer, **labels}.items())] = value
            self._values = kept

    def forget(self, namespace: str, balancer: str) -> None:
        self.replace_balancer(namespace, balancer, [])


BALANCER_REPLICAS = _BalancerGauge(
    "ballast_balancer_replicas",
    "Replicas of a Balancer's target by kind: desired (by the policy), placed (scale.spec.replicas), running, "
    "not_started (Pending past the startup timeout)",
    otel_name="ballast.balancer.replicas",
)
BALANCER_PROBLEM_REPLICAS = _BalancerGauge(
    "ballast_balancer_problem_replicas",
    "Replicas a Balancer could not place as asked: missing (the minimums above spec.replicas), overflow (no "
    "target can take them)",
    otel_name="ballast.balancer.problem_replicas",
)


def record_balancer(
    namespace: str,
    balancer: str,
    targets: Mapping[str, Mapping[str, int | None]],
    problems: Mapping[str, int] | None,
) -> None:
    """Replace the Balancer's series: `targets` name → {kind: value} (None: not known this run, no series),
    `problems` {"missing": n, "overflow": n} (None: no placement this run, no series)."""
    BALANCER_REPLICAS.replace_balancer(namespace, balancer, [
        ({"target": target, "kind": kind}, float(value))
        for target, values in sorted(targets.items()) for kind in REPLICA_KINDS
        if (value := values.get(kind)) is not None
    ])  # fmt: skip
    BALANCER_PROBLEM_REPLICAS.replace_balancer(
        namespace, balancer, [({"problem": p}, float(problems.get(p, 0))) for p in PROBLEMS] if problems else []
    )


def forget_balancer(namespace: str, balancer: str) -> None:
    """Remove every series of a deleted Balancer."""
    BALANCER_REPLICAS.forget(namespace, balancer)
    BALANCER_PROBLEM_REPLICAS.forget(namespace, balancer)
