"""`ballast`: the user CLI — bulk enrollment, profiles, why a pod got its resources, scheduling policy previews,
how a Balancer places its replicas, which nodes consolidation would free.

    ballast enroll --mode measure [--apply] [-n NS] [--ignore RE] [--no-restart] [--remode] [--timeout S]
    ballast profiles [NAME ...] [-o wide|json|yaml]
    ballast explain pod/<namespace>/<name>
    ballast scheduling preview -f policy.yaml [-n NS] [-o json]
    ballast balancer status NAME [-n NS] [-o json]
    ballast consolidation plan [--what-if recommended] [--k 2] [--catalogue FILE|cm/NS/NAME] [-o table|json]
    ballast simulate [--seed 1] [--days 3] [--out demo] | --usage CSV --side YAML | --from-cluster YAML

Global flags `--kubeconfig`, `--context`, `--request-timeout` and `--verbose` go before or after the subcommand.
Everything is read from the API server (profiles, policies, the pod's annotations, a Balancer's targets and pods,
nodes), so it works from a laptop that cannot reach the operator's history store. This module only parses flags;
each subcommand's module is imported when it runs, which keeps `--help` fast.

Exit codes: 0 success; 1 bad usage, an unreachable API server, or an object that does not exist; 2 when
`enroll` failed on at least one workload (the enroll script's code); 141 when the reader of the output went away
(`ballast profiles -o json | head`), as a tool killed by SIGPIPE. Every failure is one line, `ballast: <cause>`;
`--verbose` adds the traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ballast import __version__

EXIT_USAGE = 1
FIELD_MANAGER = "ballast-cli"
"""The field manager of the CLI's writes (shown in managedFields)."""


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors exiting 1, as the enroll script's do (2 means "a workload failed")."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def request_timeout(text: str) -> float:
    """kubectl's `--request-timeout`: seconds as a bare number or a Go duration (`30s`, `1m`); 0 for none."""
    from ballast.internal.stats.duration import parse_duration  # noqa: PLC0415

    try:
        seconds = float(text) if text.replace(".", "", 1).isdigit() else parse_duration(text) / 1e9
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (e.g. 30s, 1m, or seconds)") from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return seconds


def _connection_flags(parser: argparse.ArgumentParser, *, default: Any) -> None:
    parser.add_argument(
        "--kubeconfig",
        default=default,
        help="kubeconfig file (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)",
    )
    parser.add_argument("--context", default=default, help="kubeconfig context (default: the current one)")
    parser.add_argument(
        "--request-timeout",
        type=request_timeout,
        default=default,
        metavar="DURATION",
        help="give up on a request (its retries included) after this long, e.g. 30s or 1m; 0 for no limit "
        "(default: 60s); connecting (TCP and TLS) is bounded by 10s either way",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=default if default is argparse.SUPPRESS else False,
        help="on failure, print the traceback after the one-line error",
    )


def _add_enroll(subparsers: Any, common: argparse.ArgumentParser) -> None:
    enroll = subparsers.add_parser(
        "enroll",
        parents=[common],
        help="label Deployments/StatefulSets/DaemonSets that carry the identity tuple with the mode",
        description=(
            "Bulk-enroll Deployments, StatefulSets and DaemonSets (and their pods) by adding the "
            "ballast.tightlinesoftware.com/mode label to every workload whose pod template carries every "
            "identity-tuple label. The tuple is read from the BallastConfig 'ballast', or --identity-labels, or the "
            "chart default. Multi-replica workloads are rolling-restarted; single-replica and OnDelete ones are "
            "enrolled in place (no pod recreated). Dry-run unless --apply."
        ),
        epilog=(
            "examples:\n"
            "  ballast enroll --mode measure                               # dry-run, all namespaces\n"
            "  ballast enroll --mode apply -n web --apply                  # enroll namespace 'web' at apply\n"
            "  ballast enroll --mode resize --ignore 'consul|vault' --apply\n"
            "  ballast enroll --mode measure --no-restart --apply          # fast first enroll, no restarts\n"
            "  ballast enroll --mode resize --remode --no-restart --apply  # fast mode upgrade in place\n\n"
            "Summary line: 'Summary: N enrolled, N failed, N warning(s), N skipped.'; exit 2 when any workload failed."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    enroll.add_argument("--mode", help="enrollment rung: measure, apply or resize (required)")
    enroll.add_argument("--apply", action="store_true", help="make the changes (default: print the plan only)")
    enroll.add_argument("-n", "--namespace", help="only this namespace (default: all namespaces)")
    enroll.add_argument(
        "--identity-labels",
        metavar="A,B,C",
        help="comma-separated pod-label keys a workload must carry (overrides the BallastConfig's identityLabels)",
    )
    enroll.add_argument("--ignore", metavar="REGEX", help="skip workloads whose name matches (default: none)")
    enroll.add_argument(
        "--no-restart",
        action="store_true",
        help="enroll every workload in place, multi-replica ones too (at --mode apply, in-place pods keep their "
        "resources until they next restart)",
    )
    enroll.add_argument(
        "--remode",
        action="store_true",
        help="also change workloads enrolled at a different mode (default: warn and leave them alone)",
    )
    enroll.add_argument(
        "--timeout",
        type=int,
        default=300,
        metavar="SECS",
        help="rollout wait per workload (default: %(default)s); a timeout is a warning, not a failure",
    )
    enroll.add_argument(
        "--settle",
        type=float,
        default=8.0,
        metavar="SECS",
        help="wait before checking that an in-place enrollment restarted no pod (default: %(default)g)",
    )


def _add_profiles(subparsers: Any, common: argparse.ArgumentParser) -> None:
    profiles = subparsers.add_parser(
        "profiles",
        parents=[common],
        help="list WorkloadProfiles (like kubectl get workloadprofiles)",
        description=(
            "List WorkloadProfiles with the columns of `kubectl get workloadprofiles`: NAME, ACTIVEWORKLOADS, "
            "POLICY, STATE, ORPHANED, AGE. -o wide adds READY (the Ready condition), CONTAINERS, SAMPLES (the "
            "fewest samples of any container and resource: what readiness waits for) and TUPLE."
        ),
    )
    profiles.add_argument("names", nargs="*", metavar="NAME", help="only these profiles")
    profiles.add_argument("-o", "--output", choices=["wide", "json", "yaml"], help="output format")


def _add_explain(subparsers: Any, common: argparse.ArgumentParser) -> None:
    explain = subparsers.add_parser(
        "explain",
        parents=[common],
        help="why a pod has its requests and limits: profile, policy, samples, statistics, formulas",
        description=(
            "Explain an enrolled pod: its identity tuple and profile, the policy that governs it and why it won, "
            "the samples and statistics in the profile, how each recommended value is computed, and what admission "
            "wrote into the pod. Reads only the API server (profile status, policies, the pod's annotations)."
        ),
    )
    explain.add_argument("pod", metavar="pod/NAMESPACE/NAME", help="the pod (also NAMESPACE/NAME, or NAME with -n)")
    explain.add_argument("-n", "--namespace", help="the pod's namespace when only its name is given")


def _add_scheduling(subparsers: Any, common: argparse.ArgumentParser) -> None:
    scheduling = subparsers.add_parser(
        "scheduling",
        parents=[common],
        help="scheduling policies (kupid): preview what a policy would change",
        description="Scheduling policies (PodSchedulingPolicy, ClusterPodSchedulingPolicy of kupid.gardener.cloud).",
    )
    actions = scheduling.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    preview = actions.add_parser(
        "preview",
        parents=[common],
        help="the change policies from a file would make to existing workloads and pods; writes nothing",
        description=(
            "Merge the policies of a file, together with the scheduling policies already in the cluster and in "
            "merge order, into every existing workload and pod a policy of the file selects, as the admission "
            "webhook would; print a unified diff of the pod spec's scheduling fields and a summary line per "
            "object (applied, unchanged, conflict, error). Reads only; nothing is written to the cluster."
        ),
        epilog=(
            "examples:\n"
            "  ballast scheduling preview -f spot.yaml               # every namespace\n"
            "  ballast scheduling preview -f team-a.yaml -n team-a   # one namespace; the file's policies land there\n"
            "  kubectl get clusterpodschedulingpolicies etcd -o yaml | ballast scheduling preview -f - -o json"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    preview.add_argument(
        "-f", "--filename", required=True, metavar="FILE", help="YAML policies (documents or a List); - for stdin"
    )
    preview.add_argument(
        "-n", "--namespace", help="only this namespace; also the namespace of a PodSchedulingPolicy that names none"
    )
    preview.add_argument("-o", "--output", choices=["text", "json"], default="text", help="output format")


def _add_balancer(subparsers: Any, common: argparse.ArgumentParser) -> None:
    balancer = subparsers.add_parser(
        "balancer",
        parents=[common],
        help="Balancers: how one replica count is placed over several targets, and why",
        description="Balancers (balancer.x-k8s.io/v1alpha1): one replica count spread over several targets.",
    )
    actions = balancer.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    status = actions.add_parser(
        "status",
        parents=[common],
        help="per target: bounds, replicas now, the placement the controller computes and why, pods; conditions",
        description=(
            "Read a Balancer, its targets' scale subresources and the pods each target's selector selects, and "
            "print per target its minReplicas/maxReplicas, its replicas now, the placement the controller computes "
            "from those pods with the reasons (late pods, full targets, fallback, missing and overflow), its "
            "Running, Pending and late pods; then the Balancer's conditions. Reads only; nothing is written."
        ),
        epilog=(
            "examples:\n"
            "  ballast balancer status nginx -n shop\n"
            "  ballast balancer status nginx -n shop -o json | jq '.targets[] | {name, placement}'"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    status.add_argument("name", metavar="NAME", help="the Balancer")
    status.add_argument("-n", "--namespace", help="the Balancer's namespace (default: default)")
    status.add_argument("-o", "--output", choices=["text", "json"], default="text", help="output format")


def _add_consolidation(subparsers: Any, common: argparse.ArgumentParser) -> None:
    consolidation = subparsers.add_parser(
        "consolidation",
        parents=[common],
        help="consolidation advice: which nodes the pods' requests free, and whether each move is worth it",
        description="The consolidation advisor: Karpenter's consolidation and Balanced score, deleting nothing.",
    )
    actions = consolidation.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    plan = actions.add_parser(
        "plan",
        parents=[common],
        help="per pool: nodes and $/month now and after the freed set; every node's move with its score and reason",
        description=(
            "Read the Nodes, their Pods, the PodDisruptionBudgets and the Karpenter NodePools, price the nodes "
            "from the catalogue, and plan as Karpenter's consolidation would: per pool its nodes, $/hour and "
            "$/month now and after the freed set (the nodes gone once every command has run, each on the state "
            "the last left), then each node's move with its decision, Balanced score, savings, disruption cost and "
            "reason. --what-if recommended plans again with the requests the pods' WorkloadProfiles recommend and "
            "shows both. Reads only; nothing is written."
        ),
        epilog=(
            "examples:\n"
            "  ballast consolidation plan --catalogue config/samples/consolidation/catalogue-configmap.yaml\n"
            "  ballast consolidation plan --what-if recommended \\\n"
            "      --catalogue cm/ballast-system/ballast-consolidation-catalogue\n"
            "  ballast consolidation plan --what-if recommended -o json | jq '.plans.recommended.freed.nodes'"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plan.add_argument(
        "--what-if",
        choices=["recommended"],
        help="also plan with the requests the pods' WorkloadProfiles recommend (side by side with the current)",
    )
    plan.add_argument(
        "--k",
        default="2",
        metavar="K",
        help="the Balanced threshold is 1/K: a positive integer, or inf to take every move that saves (default: 2)",
    )
    plan.add_argument(
        "--catalogue",
        metavar="FILE|cm/NS/NAME",
        help="the price list: a YAML/JSON file or ConfigMap manifest (- for stdin), or a ConfigMap in the cluster "
        "(default: cm/ballast-system/ballast-consolidation-catalogue)",
    )
    plan.add_argument(
        "--policy",
        default="Balanced",
        choices=["Balanced", "WhenEmptyOrUnderutilized", "WhenEmpty"],
        help="the consolidation policy of pools no Karpenter NodePool describes (every pool, without Karpenter; "
        "default %(default)s), as ballastd's --consolidation-policy; a NodePool's spec.disruption always wins",
    )
    plan.add_argument(
        "--pool-label",
        default="node.kubernetes.io/instance-type",
        metavar="LABEL",
        help="the node label naming the pool of a node without karpenter.sh/nodepool (default %(default)s), as "
        "ballastd's --consolidation-pool-label",
    )
    plan.add_argument("-o", "--output", choices=["table", "json"], default="table", help="output format")


def _add_simulate(subparsers: Any, common: argparse.ArgumentParser) -> None:
    from ballast.internal.cmd import simulate  # noqa: PLC0415 - its flags live with it; it imports nothing heavy

    simulate.add_parser(subparsers, common)


class ConnectError(ValueError):
    """No client for the flags: the kubeconfig or the in-cluster configuration could not be loaded. Its text is
    the loader's own message, which the commands print as `ballast: <message>`."""


def connect(args: argparse.Namespace, *, typed: bool = True) -> Any:
    """A client for `--kubeconfig`/`--context` (`RESTConfig.load` order otherwise), with our kinds as models;
    `typed=False` leaves every object a dict and spares importing the models (`profiles` reads dicts, and starts
    faster for it).

    Raises `ConnectError` when the configuration cannot be loaded (e.g. an unknown context).
    """
    from ballast.runtime import RESTConfig, Scheme, new_client  # noqa: PLC0415

    scheme = Scheme()
    if typed:
        from ballast.api.scheme import add_to_scheme  # noqa: PLC0415 - the models take a while to import

        scheme = add_to_scheme(scheme)
    options = _timeouts(getattr(args, "request_timeout", None))
    try:
        config = RESTConfig.load(getattr(args, "kubeconfig", None), getattr(args, "context", None), **options)
        return new_client(config, scheme=scheme, field_owner=FIELD_MANAGER)
    except Exception as exc:  # the loader's ConfigLoadError, and anything new_client raises on a bad host
        raise ConnectError(str(exc)) from exc


def _timeouts(request_timeout: float | None) -> dict[str, Any]:
    """RESTConfig's timeouts for `--request-timeout` (None: RESTConfig's defaults; 0: no request budget). A
    silent server is reported after one deadline, not retried: a person is waiting."""
    options: dict[str, Any] = {"retry_timeouts": False}
    if request_timeout is None:
        return options
    if request_timeout == 0:
        return {**options, "timeout": 0.0}
    from ballast.runtime.rest import DEFAULT_CONNECT_TIMEOUT  # noqa: PLC0415

    return {**options, "timeout": request_timeout, "connect_timeout": min(DEFAULT_CONNECT_TIMEOUT, request_timeout)}


def fail(message: object) -> int:
    """Print `ballast: <message>` on stderr; returns the usage exit code (1)."""
    print(f"ballast: {message}", file=sys.stderr)
    return EXIT_USAGE


def parser() -> argparse.ArgumentParser:
    """The `ballast` argument parser (subcommands enroll, profiles, explain, scheduling, balancer, consolidation,
    simulate)."""
    top = _Parser(
        prog="ballast",
        description="Ballast user CLI: enroll workloads and explain the resources Ballast gives them.",
    )
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _connection_flags(top, default=None)
    # Subcommands accept the global flags too; SUPPRESS keeps a value given before the subcommand.
    common = argparse.ArgumentParser(add_help=False)
    _connection_flags(common, default=argparse.SUPPRESS)
    subparsers = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_enroll(subparsers, common)
    _add_profiles(subparsers, common)
    _add_explain(subparsers, common)
    _add_scheduling(subparsers, common)
    _add_balancer(subparsers, common)
    _add_consolidation(subparsers, common)
    _add_simulate(subparsers, common)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ballast` with `argv` (default: the process arguments); returns the exit code."""
    top = parser()
    args = top.parse_args(argv)
    if args.command is None:
        top.print_help(sys.stderr)
        return EXIT_USAGE
    from ballast.internal.cmd.failures import guarded  # noqa: PLC0415

    return guarded(lambda: _dispatch(args), program="ballast", verbose=args.verbose)


def _dispatch(args: argparse.Namespace) -> int:  # noqa: PLR0911 - one return per subcommand
    if args.command == "enroll":
        from ballast.internal.cmd import enroll  # noqa: PLC0415 - subcommands load on use: `--help` stays fast

        return enroll.run(args)
    if args.command == "profiles":
        from ballast.internal.cmd import profiles  # noqa: PLC0415

        return profiles.run(args)
    if args.command == "scheduling":
        from ballast.internal.cmd import scheduling  # noqa: PLC0415

        return scheduling.run(args)
    if args.command == "balancer":
        from ballast.internal.cmd import balancer  # noqa: PLC0415

        return balancer.run(args)
    if args.command == "consolidation":
        from ballast.internal.cmd import consolidation  # noqa: PLC0415

        return consolidation.run(args)
    if args.command == "simulate":
        from ballast.internal.cmd import simulate  # noqa: PLC0415

        return simulate.run(args)
    from ballast.internal.cmd import explain  # noqa: PLC0415

    return explain.run(args)


if __name__ == "__main__":
    sys.exit(main())
