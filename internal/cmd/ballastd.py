"""`ballastd`: the operator process — controllers on the leader; webhook, caches and kill switch on every replica.

ballastd [flags]          run the manager
ballastd apply-crds       server-side apply the CRDs rendered from the API models (field manager
                          ballast-crd-installer), as the chart's upgrade hook does
ballastd uninstall        stop the operator (--deployment) and remove its finalizers from WorkloadProfiles,
                          so the CRDs can be deleted, as the chart's pre-delete hook does
ballastd copy-history     copy a single-instance history (--from redis://…) into a Cluster (--to
                          redis+cluster://…): idempotent, resumable, reports what it copied
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ballast import __version__
from ballast.internal.cmd.ballast import request_timeout
from ballast.internal.cmd.wiring import (
    CONTROLLERS,
    DISABLED_BY_DEFAULT,
    Dependencies,
    add_core_lanes,
    add_optional_lanes,
    new_manager,
    register_webhooks,
    watch_scheduling_crds,
)

CRD_FIELD_MANAGER = "ballast-crd-installer"
_NAMESPACE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
COMPONENT_LOGGERS = {  # --log-level-<component>: the loggers its code logs through
    "webhook": ("ballast.webhook", "ballast.runtime.webhook"),
    "watcher": (
        "ballast.runtime.controller.workloadwatcher-pod",
        "ballast.runtime.controller.workloadwatcher-profile",
        "ballast.migration",
    ),
    "collector": ("ballast.runtime.controller.metricscollector", "ballast.collection"),
    "adjuster": ("ballast.runtime.controller.resourceadjuster",),
}


CONTROLLER_SWITCHES = {
    "balancer": "Balancers, on by default",
    "consolidation": "the ConsolidationReport, off by default",
}
"""Controllers with a flag of their own, `--<name>=true|false`, applied after `--controllers`."""


def _flag_bool(value: str) -> bool:
    """A Go-style boolean flag value (`--scheduling-webhooks=false`)."""
    lowered = value.lower()
    if lowered in ("true", "1", "t"):
        return True
    if lowered in ("false", "0", "f"):
        return False
    raise argparse.ArgumentTypeError(f"must be true or false, not {value!r}")


def _serving_flags(serving: Any) -> None:
    """Metrics, health probes and the admission webhook server."""
    serving.add_argument(
        "--metrics-bind-address",
        default="0",
        help="serve Prometheus /metrics there: :8443 for HTTPS, :8080 for HTTP (default: 0, metrics off — as "
        "controller-runtime's)",
    )
    serving.add_argument(
        "--metrics-secure",
        type=_flag_bool,
        nargs="?",
        const=True,
        default=False,
        help="serve metrics over HTTPS, each scrape authenticated (TokenReview) and authorised (SubjectAccessReview: "
        "get on /metrics); default false (docs/design.md, difference 69)",
    )
    serving.add_argument(
        "--metrics-cert-path", default="", help="directory with the metrics serving certificate (default: self-signed)"
    )
    serving.add_argument("--metrics-cert-name", default="tls.crt", help="certificate file in --metrics-cert-path")
    serving.add_argument("--metrics-cert-key", default="tls.key", help="key file in --metrics-cert-path")
    serving.add_argument("--health-probe-bind-address", default=":8081", help="/healthz and /readyz")
    serving.add_argument("--webhook-bind-address", default=":9443", help="admission webhook server")
    serving.add_argument(
        "--webhook-cert-path",
        default="/tmp/k8s-webhook-server/serving-certs",
        help="directory with the serving certificate (a mounted cert-manager Secret)",
    )
    serving.add_argument(
        "--webhook-max-body-bytes",
        type=int,
        default=4 * 1024 * 1024,
        help="largest AdmissionReview accepted; larger ones are refused with 413 unread (default %(default)s: an "
        "UPDATE's object and oldObject at etcd's 1.5 MiB each)",
    )
    serving.add_argument(
        "--webhook-max-connections",
        type=int,
        default=10_000,
        help="open webhook connections kept at most; past it the oldest idle one is closed (default %(default)s)",
    )
    serving.add_argument("--webhook-cert-name", default="tls.crt")
    serving.add_argument("--webhook-cert-key", default="tls.key")
    serving.add_argument(
        "--webhook-self-signed",
        action="store_true",
        help="issue and rotate the webhook certificate ourselves (clusters without cert-manager)",
    )
    serving.add_argument("--webhook-service-name", default="ballast-webhook", help="Service in front of the webhook")
    serving.add_argument("--webhook-secret-name", default="ballast-webhook-cert", help="Secret of the self-signed pair")
    serving.add_argument(
        "--webhook-configuration-name",
        default="ballast",
        help="Mutating/ValidatingWebhookConfiguration names whose caBundle the self-signed mode sets",
    )
    serving.add_argument(
        "--scheduling-webhooks",
        type=_flag_bool,
        nargs="?",
        const=True,
        default=True,
        metavar="true|false",
        help="serve scheduling policies (kupid) at admission; their configurations are "
        "<--webhook-configuration-name>-scheduling (default: true)",
    )


def _consolidation_flags(advisor: Any) -> None:
    """The ConsolidationReport's refresh, inputs and judgement."""
    advisor.add_argument(
        "--consolidation-interval",
        default="10m",
        help="recompute the ConsolidationReport this often (Go duration above 0, default %(default)s); annotating "
        "it ballast.tightlinesoftware.com/refresh recomputes it at once",
    )
    advisor.add_argument(
        "--consolidation-policy",
        default="Balanced",
        choices=["Balanced", "WhenEmptyOrUnderutilized", "WhenEmpty"],
        help="the consolidation policy of pools no Karpenter NodePool describes (every pool, without Karpenter; "
        "default %(default)s); a NodePool's spec.disruption always wins",
    )
    advisor.add_argument(
        "--consolidation-catalogue",
        default="",
        metavar="NS/NAME",
        help="the price-list ConfigMap (key catalogue.yaml; default: <--operator-namespace>/"
        "ballast-consolidation-catalogue)",
    )
    advisor.add_argument(
        "--consolidation-pool-label",
        default="node.kubernetes.io/instance-type",
        help="the node label naming the pool of a node without karpenter.sh/nodepool (default %(default)s)",
    )
    advisor.add_argument(
        "--consolidation-k",
        type=int,
        default=2,
        help="Balanced moves need a score of at least 1/k (Karpenter's k is 2; default %(default)s)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ballastd",
        description="Ballast operator: keeps pods' resource requests and limits matched to measured usage.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "command",
        nargs="?",
        choices=["run", "apply-crds", "uninstall", "copy-history"],
        default="run",
        help="default: run",
    )
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument(
        "--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)"
    )
    cluster.add_argument(
        "--request-timeout",
        type=request_timeout,
        default=None,
        metavar="DURATION",
        help="give up on an API request (its retries included) after this long, e.g. 30s; 0 for no limit "
        "(default: 60s); connecting (TCP and TLS) is bounded by 10s either way",
    )
    cluster.add_argument(
        "--operator-namespace",
        default=os.environ.get("POD_NAMESPACE", "ballast-system"),
        help="namespace of the operator, its lease and its kill switch (default: $POD_NAMESPACE or %(default)s)",
    )
    cluster.add_argument(
        "--leave-alone-namespaces",
        default="",
        help="comma-separated namespaces no lane enrolls, sizes, resizes or schedules in, besides the operator's "
        "own (which every lane leaves alone); the webhook configurations must exclude them too (the chart's "
        "leaveAloneNamespaces does both)",
    )
    _serving_flags(parser.add_argument_group("serving"))
    election = parser.add_argument_group("leader election")
    election.add_argument("--leader-elect", action="store_true", help="run controllers only on the Lease holder")
    election.add_argument(
        "--leader-elect-release-on-cancel",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="clear the Lease on shutdown so a standby takes over at once (default: on)",
    )
    election.add_argument(
        "--leader-elect-lease-duration", type=float, default=15.0, help="seconds (default %(default)s)"
    )
    election.add_argument(
        "--leader-elect-renew-deadline", type=float, default=10.0, help="seconds (default %(default)s)"
    )
    election.add_argument("--leader-elect-retry-period", type=float, default=2.0, help="seconds (default %(default)s)")
    storage = parser.add_argument_group("history store")
    storage.add_argument(
        "--store",
        help="redis://…, rediss://…, redis+sentinel://…/<service>, redis+cluster://… or sqlite:///path "
        "(wins over --redis-url)",
    )
    storage.add_argument("--redis-url", default=os.environ.get("REDIS_URL"), help="default: $REDIS_URL")
    storage.add_argument("--data-dir", default="/var/lib/ballast", help="SQLite store directory when no URL is given")
    storage.add_argument(
        "--history-min-replicas",
        type=int,
        default=None,
        help="replicas that must acknowledge each collection cycle (WAIT) before it counts as written "
        "(default: 1 behind Sentinel, else 0)",
    )
    storage.add_argument(
        "--history-buffer-bytes",
        type=int,
        default=64 * 1024 * 1024,
        help="memory for collection cycles the store did not acknowledge, written again later (default: 64 MiB)",
    )
    behaviour = parser.add_argument_group("behaviour")
    behaviour.add_argument("--dry-run-measure", action="store_true", help="collect nothing (implies apply and resize)")
    behaviour.add_argument("--dry-run-apply", action="store_true", help="admit without patches (implies resize)")
    behaviour.add_argument("--dry-run-resize", action="store_true", help="never resize in place")
    behaviour.add_argument(
        "--controllers",
        default="*",
        help="controllers to run: '*' (all but the disabled-by-default ones), names, or -name to disable, "
        f"comma-separated; known: {', '.join(CONTROLLERS)}; disabled by default: {', '.join(DISABLED_BY_DEFAULT)}",
    )
    for name, what in CONTROLLER_SWITCHES.items():
        behaviour.add_argument(
            f"--{name}",
            type=_flag_bool,
            nargs="?",
            const=True,
            default=None,
            metavar="true|false",
            help=f"run the {name} controller ({what}) or not, whatever --controllers says (default: as --controllers)",
        )
    behaviour.add_argument("--graceful-shutdown-timeout", type=float, default=30.0)
    behaviour.add_argument(
        "--stats-refresh-fraction",
        type=float,
        default=0.02,
        help="recompute a full series' statistics once the samples written since reach this fraction of it "
        "(0: every cycle; default %(default)s)",
    )
    behaviour.add_argument(
        "--stats-refresh-max-age",
        default="15m",
        help="recompute every series' statistics at least this often (Go duration, default %(default)s)",
    )
    behaviour.add_argument(
        "--balancer-reprocess-period",
        default="15s",
        help="run every Balancer again at least this often (Go duration, default %(default)s; upstream's "
        "--reprocess-period-sec)",
    )
    _consolidation_flags(parser.add_argument_group("consolidation advisor (--consolidation=true)"))
    telemetry = parser.add_argument_group("OpenTelemetry")
    telemetry.add_argument(
        "--otel-metrics-endpoint", default="", help="push metrics over OTLP to host:port (default: no push)"
    )
    telemetry.add_argument("--otel-metrics-protocol", default="grpc", choices=["grpc", "http/protobuf"])
    telemetry.add_argument("--otel-metrics-interval", default="30s", help="Go duration (default %(default)s)")
    telemetry.add_argument("--otel-metrics-insecure", action="store_true", help="plaintext to the collector")
    telemetry.add_argument(
        "--log-otel-enabled",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --otel-metrics-endpoint, also ship logs over OTLP (default: on, as the Go operator)",
    )
    logging_ = parser.add_argument_group("logging")
    logging_.add_argument("--log-level", default="info", choices=["debug", "info", "warn", "error"])
    for component in COMPONENT_LOGGERS:
        logging_.add_argument(f"--log-level-{component}", choices=["debug", "info", "warn", "error"])
    logging_.add_argument("--log-format", default="json", choices=["json", "text"])
    logging_.add_argument(
        "-v", "--verbose", action="store_true", help="on a fatal error, print the traceback after its one line"
    )
    copying = parser.add_argument_group("copy-history")
    copying.add_argument("--from", dest="copy_from", help="the single-instance store: redis://… or redis+sentinel://…")
    copying.add_argument("--to", dest="copy_to", help="the Cluster: redis+cluster://…")
    removal = parser.add_argument_group("uninstall")
    removal.add_argument(
        "--deployment",
        help="the operator's Deployment in --operator-namespace, scaled to 0 (and its pods awaited) before the "
        "finalizers go, so no replica adds them back",
    )
    removal.add_argument(
        "--uninstall-timeout",
        type=float,
        default=120.0,
        help="seconds to wait for the operator's pods to go, and for its Lease to expire",
    )
    removal.add_argument(
        "--uninstall-quiet-period",
        type=float,
        default=30.0,
        help="seconds no finalizer may come back before the CRDs are called deletable (default %(default)s)",
    )
    return parser


def selected_controllers(args: argparse.Namespace) -> set[str]:
    """The controllers to run: `--controllers`, then each switch given (`--balancer=false`, `--consolidation=true`),
    which wins over it wherever it stands. One flag per concern, so that config/'s kustomize components (and the
    chart's values) each set their own and combine in any order."""
    enabled = enabled_controllers(args.controllers)
    for name in CONTROLLER_SWITCHES:
        switch = getattr(args, name)
        if switch is True:
            enabled.add(name)
        elif switch is False:
            enabled.discard(name)
    return enabled


def enabled_controllers(spec: str) -> set[str]:
    """kube-controller-manager's `--controllers`: `*` all, `name` adds, `-name` removes; unknown names refused."""
    enabled: set[str] = set()
    for item in (part.strip() for part in spec.split(",") if part.strip()):
        if item == "*":
            enabled |= set(CONTROLLERS) - set(DISABLED_BY_DEFAULT)
            continue
        name = item.removeprefix("-")
        if name not in CONTROLLERS:
            raise ValueError(f"--controllers: unknown controller {name!r}; known: {', '.join(CONTROLLERS)}")
        if item.startswith("-"):
            enabled.discard(name)
        else:
            enabled.add(name)
    return enabled


def store_url(args: argparse.Namespace) -> str:
    """`--store`, else `--redis-url`/`REDIS_URL`, else SQLite under `--data-dir` (one replica only)."""
    url = args.store or args.redis_url or f"sqlite:///{Path(args.data_dir).resolve() / 'history.db'}"
    if args.leader_elect and url.startswith("sqlite:"):
        raise ValueError(
            "--leader-elect needs a shared store (Redis/Valkey: --store or --redis-url): with SQLite each replica "
            "would keep its own history"
        )
    return url


def leave_alone_namespaces(args: argparse.Namespace) -> tuple[str, ...]:
    """`--leave-alone-namespaces a,b` as names; ValueError naming the flag and a name that cannot be a namespace."""
    names = tuple(
        dict.fromkeys(name.strip() for name in (args.leave_alone_namespaces or "").split(",") if name.strip())
    )
    for name in names:
        if not _NAMESPACE_NAME.fullmatch(name) or len(name) > 63:
            raise ValueError(f"--leave-alone-namespaces: {name!r} is not a namespace name (a DNS-1123 label)")
    return names


def _bind(address: str, default_host: str = "") -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host or default_host, int(port)


def metrics_options(args: argparse.Namespace) -> dict[str, Any]:
    """The Manager's metrics options from `--metrics-*` (the Go operator's flags; `--metrics-secure` off by default:
    docs/design.md, difference 69)."""
    from ballast.runtime.metricsserver import MetricsServerOptions  # noqa: PLC0415 - keep `--help` fast

    return {
        "metrics_bind_address": args.metrics_bind_address,
        "metrics_secure": args.metrics_secure,
        "metrics_server_options": MetricsServerOptions(
            cert_dir=args.metrics_cert_path or None, cert_name=args.metrics_cert_name, key_name=args.metrics_cert_key
        ),
    }


def rest_config(args: argparse.Namespace) -> Any:
    """The API server `--kubeconfig` names (`RESTConfig.load` order), with `--request-timeout`; `ConfigLoadError`
    naming the file when it cannot be loaded."""
    from ballast.runtime import RESTConfig  # noqa: PLC0415
    from ballast.runtime.rest import DEFAULT_CONNECT_TIMEOUT  # noqa: PLC0415

    options: dict[str, float] = {}
    if args.request_timeout is not None:
        options["timeout"] = args.request_timeout
        if args.request_timeout > 0:
            options["connect_timeout"] = min(DEFAULT_CONNECT_TIMEOUT, args.request_timeout)
    return RESTConfig.load(args.kubeconfig, None, **options)


def build(args: argparse.Namespace, *, reachable: Callable[[Any], None] | None = None) -> Any:
    """Wire the manager from parsed flags (everything but starting it); `reachable(config)` runs once the flags
    are checked and before the first API request (`ballastd` waits there for the API server)."""
    from ballast.api.scheme import add_to_scheme  # noqa: PLC0415 - keep `--help` fast
    from ballast.internal.enrollment import LEADER_ELECTION_ID  # noqa: PLC0415
    from ballast.internal.history import open_store  # noqa: PLC0415
    from ballast.internal.killswitch import KillSwitchState  # noqa: PLC0415
    from ballast.internal.operator import DryRun, OperatorOptions  # noqa: PLC0415
    from ballast.runtime import LeaderElectionConfig, ProcessLeaderElector, Scheme  # noqa: PLC0415
    from ballast.runtime.client import APIServerClient  # noqa: PLC0415
    from ballast.runtime.rest import Transport  # noqa: PLC0415
    from ballast.runtime.selfsigned import MUTATING, VALIDATING, SelfSignedCertificates  # noqa: PLC0415

    controllers = selected_controllers(args)
    telemetry = otlp_runnables(args) if args.otel_metrics_endpoint else []  # flags checked before connecting
    refresh = refresh_policy(args)
    reprocess = balancer_reprocess_period(args)
    advisor = consolidation_settings(args)
    url = store_url(args)
    if args.history_buffer_bytes < 0:
        raise ValueError(f"--history-buffer-bytes {args.history_buffer_bytes} must be 0 or more")
    if args.history_min_replicas is not None and args.history_min_replicas < 0:
        raise ValueError(f"--history-min-replicas {args.history_min_replicas} must be 0 or more")
    if url.startswith("sqlite:"):
        Path(args.data_dir).mkdir(parents=True, exist_ok=True)
    config = rest_config(args)
    if reachable is not None:
        reachable(config)
    # The concrete client: the manager builds its cache on it.
    client = APIServerClient(Transport(config), scheme=add_to_scheme(Scheme()), field_owner="ballastd")
    namespace = args.operator_namespace
    leave_alone = leave_alone_namespaces(args)
    elector = None
    if args.leader_elect:
        # In a child interpreter: renewals must not wait behind informer decoding on our GIL.
        elector = ProcessLeaderElector(
            config,
            LeaderElectionConfig(
                name=LEADER_ELECTION_ID,
                namespace=namespace,
                lease_duration=args.leader_elect_lease_duration,
                renew_deadline=args.leader_elect_renew_deadline,
                retry_period=args.leader_elect_retry_period,
                release_on_cancel=args.leader_elect_release_on_cancel,
            ),
        )
    manager = new_manager(
        client,
        namespace=namespace,
        leader_elector=elector,
        **metrics_options(args),
        health_probe_bind_address=args.health_probe_bind_address,
        graceful_shutdown_timeout=args.graceful_shutdown_timeout,
        scheduling=args.scheduling_webhooks,
        leave_alone=leave_alone,
    )
    options = OperatorOptions(
        operator_namespace=namespace,
        leave_alone=leave_alone,
        dry_run=DryRun.cascade(measure=args.dry_run_measure, apply=args.dry_run_apply, resize=args.dry_run_resize),
        webhook_configuration_name=args.webhook_configuration_name,
        scheduling_webhooks=args.scheduling_webhooks,
        history_buffer_bytes=args.history_buffer_bytes,
    )
    kill_switch = KillSwitchState()
    store = open_store(url, min_replicas=args.history_min_replicas)
    manager.add_healthz_check("store", store.ping)

    deps = Dependencies(
        store=store, kill_switch=kill_switch, options=options, refresh=refresh, balancer_reprocess_period=reprocess,
        consolidation=advisor, scheduling=watch_scheduling_crds(manager) if args.scheduling_webhooks else None,
    )  # fmt: skip
    add_core_lanes(manager, controllers, deps)
    add_optional_lanes(manager, controllers, deps)

    for runnable in telemetry:
        manager.add(runnable)

    server = webhook_server(args)
    register_webhooks(server, manager, deps)
    manager.add_webhook_server(server)
    if args.webhook_self_signed:
        manager.add(
            SelfSignedCertificates(
                manager.api_reader,
                namespace=namespace,
                secret_name=args.webhook_secret_name,
                service_name=args.webhook_service_name,
                cert_dir=args.webhook_cert_path,
                webhook_configurations=self_signed_configurations(args, MUTATING, VALIDATING),
            )
        )
    return manager


def self_signed_configurations(args: argparse.Namespace, mutating: Any, validating: Any) -> list[tuple[Any, str]]:
    """The webhook configurations whose caBundle `--webhook-self-signed` keeps: Ballast's, and the scheduling
    ones unless `--scheduling-webhooks=false`."""
    from ballast.internal.manifests.scheduling_webhooks import configuration_name  # noqa: PLC0415

    names = [args.webhook_configuration_name]
    if args.scheduling_webhooks:
        names.append(configuration_name(args.webhook_configuration_name))
    return [(kind, name) for name in names for kind in (mutating, validating)]


def webhook_server(args: argparse.Namespace) -> Any:
    """The admission server the `--webhook-*` flags describe; ValueError naming a flag that is out of range."""
    from ballast.runtime import WebhookServer  # noqa: PLC0415

    for flag, value in (("--webhook-max-body-bytes", args.webhook_max_body_bytes),
                        ("--webhook-max-connections", args.webhook_max_connections)):  # fmt: skip
        if value < 1:
            raise ValueError(f"{flag}: {value} must be positive")
    host, port = _bind(args.webhook_bind_address)
    return WebhookServer(
        host=host,
        port=port,
        cert_dir=args.webhook_cert_path,
        cert_name=args.webhook_cert_name,
        key_name=args.webhook_cert_key,
        max_body_bytes=args.webhook_max_body_bytes,
        max_connections=args.webhook_max_connections,
        certificate_timeout=None,  # cert-manager may issue the Secret minutes after the pod starts: keep waiting
    )


def otlp_runnables(args: argparse.Namespace) -> list[Any]:
    """`--otel-metrics-*` and `--log-otel-enabled`: the metrics pusher, and the log handler's flush at shutdown
    (the handler is attached to the root logger at once). ValueError naming the flag that is wrong."""
    from ballast.internal.telemetry.otlp import OTLPMetricsPusher, OTLPSettings  # noqa: PLC0415
    from ballast.internal.telemetry.otlp_logs import install_log_export  # noqa: PLC0415

    interval = _duration_flag("--otel-metrics-interval", args.otel_metrics_interval).total_seconds()
    settings = OTLPSettings(
        args.otel_metrics_endpoint, args.otel_metrics_protocol, interval, args.otel_metrics_insecure
    )
    runnables: list[Any] = [OTLPMetricsPusher(settings, version=__version__)]
    if args.log_otel_enabled:
        runnables.append(_ClosedOnStop("otlp-logs", install_log_export(settings, version=__version__)))
    return runnables


class _ClosedOnStop:
    """A runnable on every replica that closes `resource` (flushing it) when the manager stops."""

    def __init__(self, name: str, resource: Any) -> None:
        self.name = name
        self.resource = resource

    def need_leader_election(self) -> bool:
        return False

    def start(self, stop: Any) -> None:
        stop.wait()
        self.resource.close()


def _duration_flag(flag: str, text: str) -> datetime.timedelta:
    """A Go-duration flag value; ValueError naming the flag."""
    from ballast.internal.stats.duration import parse_duration  # noqa: PLC0415

    try:
        return datetime.timedelta(microseconds=parse_duration(text) // 1000)
    except ValueError as exc:
        raise ValueError(f"{flag}: {exc}") from None


def balancer_reprocess_period(args: argparse.Namespace) -> float:
    """`--balancer-reprocess-period` in seconds; ValueError naming the flag unless it is a positive duration."""
    period = _duration_flag("--balancer-reprocess-period", args.balancer_reprocess_period)
    if period <= datetime.timedelta(0):
        raise ValueError(f"--balancer-reprocess-period: {args.balancer_reprocess_period!r} must be positive")
    return period.total_seconds()


CONSOLIDATION_CATALOGUE = "ballast-consolidation-catalogue"
"""The catalogue ConfigMap's name in the operator namespace when `--consolidation-catalogue` is not given."""


def consolidation_settings(args: argparse.Namespace) -> Any:
    """The `--consolidation-*` flags as the advisor's `AdvisorSettings`; ValueError naming the flag."""
    from ballast.controllers.consolidation import AdvisorSettings  # noqa: PLC0415
    from ballast.internal.consolidation import ConsolidationInputError, check_k  # noqa: PLC0415
    from ballast.internal.consolidation.inputs import ReadSettings  # noqa: PLC0415

    interval = _duration_flag("--consolidation-interval", args.consolidation_interval)
    if interval <= datetime.timedelta(0):
        raise ValueError(f"--consolidation-interval: {args.consolidation_interval!r} must be positive")
    try:
        check_k(args.consolidation_k)
    except ConsolidationInputError:
        raise ValueError(f"--consolidation-k: {args.consolidation_k} must be a positive integer") from None
    catalogue = args.consolidation_catalogue or f"{args.operator_namespace}/{CONSOLIDATION_CATALOGUE}"
    namespace, _, name = catalogue.partition("/")
    if not namespace or not name or "/" in name:
        raise ValueError(f"--consolidation-catalogue: {catalogue!r} is not NAMESPACE/NAME")
    if not args.consolidation_pool_label:
        raise ValueError("--consolidation-pool-label: must not be empty")
    return AdvisorSettings(
        read=ReadSettings(catalogue=(namespace, name), pool_label=args.consolidation_pool_label),
        interval=interval.total_seconds(),
        default_policy=args.consolidation_policy,
        k=float(args.consolidation_k),
    )


def refresh_policy(args: argparse.Namespace) -> Any:
    """`--stats-refresh-fraction` / `--stats-refresh-max-age` as the collector's RefreshPolicy."""
    from ballast.internal.collection import RefreshPolicy  # noqa: PLC0415

    if not 0 <= args.stats_refresh_fraction <= 1:
        raise ValueError(f"--stats-refresh-fraction: {args.stats_refresh_fraction:g} must be within [0, 1]")
    max_age = _duration_flag("--stats-refresh-max-age", args.stats_refresh_max_age)
    if max_age <= datetime.timedelta(0):
        raise ValueError(f"--stats-refresh-max-age: {args.stats_refresh_max_age!r} must be positive")
    return RefreshPolicy(min_new_fraction=args.stats_refresh_fraction, max_age=max_age)


def apply_crds(args: argparse.Namespace) -> int:
    """Server-side apply every CRD (rendered in-process from the models), forcing ownership of the fields."""
    from ballast.internal.manifests.ballast_crds import all_crds  # noqa: PLC0415
    from ballast.runtime import new_client  # noqa: PLC0415

    client = new_client(rest_config(args))
    for crd in all_crds():
        client.apply(crd, field_manager=CRD_FIELD_MANAGER, force=True)
        print(f"customresourcedefinition.apiextensions.k8s.io/{crd['metadata']['name']} serverside-applied")
    return 0


def uninstall(args: argparse.Namespace, client: Any = None) -> int:
    """`ballastd uninstall` (see `ballast.internal.cmd.uninstall`); `client` defaults to `--kubeconfig`'s."""
    from ballast.internal.cmd.uninstall import uninstall as run_uninstall  # noqa: PLC0415
    from ballast.runtime import new_client  # noqa: PLC0415

    client = client if client is not None else new_client(rest_config(args))
    return run_uninstall(
        client,
        namespace=args.operator_namespace,
        deployment=args.deployment,
        timeout=args.uninstall_timeout,
        quiet_period=args.uninstall_quiet_period,
    )


def _setup_logging(args: argparse.Namespace) -> None:
    from ballast.runtime.log import setup_logging  # noqa: PLC0415

    levels = {}
    for component, loggers in COMPONENT_LOGGERS.items():
        level = getattr(args, f"log_level_{component}")
        if level:
            levels.update(dict.fromkeys(loggers, level))
    setup_logging(args.log_format, args.log_level, levels)


def copy_history(args: argparse.Namespace, out: Any = None) -> int:
    """`ballastd copy-history --from … --to …` (see `ballast.internal.history.copy`); 1 when a store fails."""
    from ballast.internal.history import (  # noqa: PLC0415
        ClusterHistoryStore,
        RedisHistoryStore,
        StoreError,
        open_store,
    )
    from ballast.internal.history.copy import copy_history as run_copy  # noqa: PLC0415

    out = out or sys.stdout
    if not args.copy_from or not args.copy_to:
        raise ValueError("copy-history needs --from (redis://… or redis+sentinel://…) and --to (redis+cluster://…)")
    source = open_store(args.copy_from, timeout=30, min_replicas=0)
    target = open_store(args.copy_to, timeout=30)
    with source, target:
        if not isinstance(source, RedisHistoryStore):
            raise ValueError("copy-history --from: a single Redis/Valkey (redis://, rediss:// or redis+sentinel://)")
        if not isinstance(target, ClusterHistoryStore):
            raise ValueError("copy-history --to: a Cluster (redis+cluster:// or rediss+cluster://)")
        try:
            report = run_copy(source, target, progress=lambda so_far: print(f"so far: {so_far}", file=out))
        except StoreError as exc:
            print(f"ballastd copy-history: {exc}; run it again to resume", file=sys.stderr)
            return 1
    print(f"done: {report}", file=out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ballastd` with `argv`; a flag out of range prints the usage, any other failure one line naming its
    cause (the traceback with `--verbose`)."""
    from ballast.internal.cmd.failures import guarded  # noqa: PLC0415

    parser = build_parser()
    args = parser.parse_args(argv)
    return guarded(lambda: _run(parser, args), program="ballastd", verbose=args.verbose)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ballast.runtime.rest import ConfigLoadError  # noqa: PLC0415

    stop = threading.Event()
    try:
        _setup_logging(args)
        one_shot: dict[str, Callable[[argparse.Namespace], int]] = {
            "apply-crds": apply_crds,
            "uninstall": uninstall,
            "copy-history": copy_history,
        }
        if args.command in one_shot:
            return one_shot[args.command](args)
        _stop_on_signals(stop)
        manager = build(args, reachable=lambda config: _await(config, args, stop))
    except ConfigLoadError:
        raise  # not a flag out of range: one line naming the file, no usage text
    except ValueError as exc:
        parser.error(str(exc))
    except _StoppedWaitingError:
        return 0
    from ballast.runtime.manager import ManagerError  # noqa: PLC0415

    if stop.is_set():  # a signal while wiring, after the wait: nothing has started yet
        return 0
    run: Callable[..., None] = manager.start
    try:
        run(handle_signals=True)
    except ManagerError as exc:  # a runnable failed or leadership was lost: the log has its story
        if args.verbose:
            raise
        print(f"ballastd: {exc}", file=sys.stderr)
        return 1
    return 0


class _StoppedWaitingError(Exception):
    """A signal came before the API server answered: nothing was started, nothing to stop."""


def _stop_on_signals(stop: threading.Event) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())


def _await(config: Any, args: argparse.Namespace, stop: threading.Event) -> None:
    from ballast.internal.cmd.connecting import await_api_server  # noqa: PLC0415

    health = None if args.health_probe_bind_address in ("", "0") else _bind(args.health_probe_bind_address)
    if not await_api_server(config, health_address=health, stop=stop):
        raise _StoppedWaitingError


if __name__ == "__main__":
    sys.exit(main())
