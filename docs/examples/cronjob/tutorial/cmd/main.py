"""The manager (cmd/main.go): the CronJob controller, metrics and health probes, and leader election. Run as
`python -m tutorial.cmd.main [--metrics-bind-address :8443] [--metrics-secure=false] [--leader-elect]`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ballast.runtime import Manager, RESTConfig, Scheme
from tutorial.api.v1 import add_to_scheme
from tutorial.internal.controller.cronjob_controller import setup_with_manager


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="manager", description="The CronJob tutorial's manager.")
    parser.add_argument("--metrics-bind-address", default="0", help="where /metrics listens (0: off)")
    parser.add_argument("--metrics-secure", default="true", help="HTTPS, scrapes authenticated and authorized")
    parser.add_argument("--health-probe-bind-address", default=":8081", help="where /healthz and /readyz listen")
    parser.add_argument("--leader-elect", action="store_true", help="one active manager among replicas (a Lease)")
    parser.add_argument("--leader-election-namespace", help="where the Lease lives (default: the pod's namespace)")
    parser.add_argument("--kubeconfig", help="path to a kubeconfig (default: in-cluster, then $KUBECONFIG)")
    args = parser.parse_args(argv)

    manager = Manager(
        RESTConfig.load(args.kubeconfig),
        scheme=add_to_scheme(Scheme()),
        metrics_bind_address=args.metrics_bind_address,
        metrics_secure=args.metrics_secure.lower() == "true",
        health_probe_bind_address=args.health_probe_bind_address,
        leader_election=args.leader_elect,
        leader_election_id="80807133.tutorial.kubebuilder.io",
        leader_election_namespace=args.leader_election_namespace,
    )
    setup_with_manager(manager)
    manager.start(handle_signals=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
