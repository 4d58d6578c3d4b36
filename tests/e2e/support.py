"""Objects the e2e tests create on the mini-cluster."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import urllib3
import yaml

from ballast.internal.enrollment import LEADER_ELECTION_ID
from ballast.internal.manifests.webhooks import webhook_configurations
from ballast.runtime.envtest import Environment, MiniCluster, network
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.integration.internal.cmd.ballastd.conftest import Ballastd

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
# The API server's 403 for a pods/resize the node could never fit (`node didn't have enough allocatable resources:
# cpu, requested: …, allocatable: …`).
ALLOCATABLE_REFUSAL = "have enough allocatable resources"
SERVICE = "ballast-webhook"
OPERATOR_NAMESPACE = "ballast-system"
# Short election timings, so a failover is measured in seconds: lease 4 s, renew deadline 3 s, retry 1 s.
ELECTION = ["--leader-elect-lease-duration=4", "--leader-elect-renew-deadline=3", "--leader-elect-retry-period=1"]


def admin_pool(
    env: Environment, *, timeout: float = 30.0, retries: urllib3.Retry | bool = False
) -> urllib3.PoolManager:
    """A one-connection pool authenticated as the cluster admin: each load thread keeps its own."""
    admin = env.admin
    return urllib3.PoolManager(
        ca_certs=str(admin.ca_file), cert_file=str(admin.cert_file), key_file=str(admin.key_file),
        timeout=urllib3.Timeout(total=timeout), retries=retries, maxsize=1,
    )  # fmt: skip


def create_namespace(cluster: MiniCluster, name: str, labels: Mapping[str, str] | None = None) -> str:
    """Create Namespace `name` (already there is fine) and return its name."""
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}}
    try:
        cluster.env.rest.create("/api/v1/namespaces", body)
    except APIError as exc:
        if exc.status != 409:
            raise
    return name


def deployment(
    name: str,
    *,
    replicas: int,
    cpu: str,
    memory: str = "64Mi",
    containers: Sequence[str] = ("app",),
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A Deployment of `replicas` pause pods selected by `app=<name>`; `labels`/`annotations` go on the pods."""
    pod_labels = {"app": name, **dict(labels or {})}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": pod_labels, "annotations": dict(annotations or {})},
                "spec": {
                    "containers": [
                        {
                            "name": container,
                            "image": PAUSE_IMAGE,
                            "resources": {"requests": {"cpu": cpu, "memory": memory}},
                        }
                        for container in containers
                    ],
                    # kwok Nodes carry no taints; the toleration keeps pods placeable if a Node turns NotReady
                    # for a moment under load.
                    "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}],
                },
            },
        },
    }


def running_pods(cluster: MiniCluster, namespace: str, selector: str) -> list[dict[str, Any]]:
    """Pods matching `selector` that are Running and not being deleted."""
    pods = cluster.env.rest.get(f"/api/v1/namespaces/{namespace}/pods", {"labelSelector": selector})["items"]
    return [
        p for p in pods if p.get("status", {}).get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")
    ]


class Operator:
    """The suite's `ballastd`, which a test may stop and start again (same flags, same webhook port); each
    run logs to its own file, and `refusals()` reads them all."""

    def __init__(
        self, env: Environment, work: Path, args: Sequence[str], webhook_port: int, secret: MountedSecret
    ) -> None:
        self.env = env
        self.work = work
        self.args = list(args)
        self.webhook_port = webhook_port
        self.secret = secret
        self.runs: list[Ballastd] = []
        self.replica_runs: list[Ballastd] = []  # the `Replicas` that stood in for it, checked for refusals too

    def register_webhooks(self) -> None:
        """Ballast's webhook configurations, calling this process on loopback (the API server allows that)."""
        configs = webhook_configurations(service_name=SERVICE, service_namespace=OPERATOR_NAMESPACE)
        self.env.install_webhooks(configs, port=self.webhook_port, ca_bundle=self.env.ca.cert_pem)

    @property
    def process(self) -> Ballastd:
        return self.runs[-1]

    def start(self) -> None:
        self.runs.append(Ballastd(self.env, self.work, self.args, name=f"ballastd-{len(self.runs)}"))
        self.process.wait_ready()

    def stop(self) -> None:
        if self.runs:
            self.process.stop()

    def output(self) -> str:
        return self.process.output()

    def refusals(self) -> list[str]:
        """Log lines of any run where the API server refused the operator (403 Forbidden) — but for the refusal
        of a resize above the node's allocatable, an admission check whose 403 is the resize lane's to handle."""
        lines: list[str] = []
        for run in self.runs:
            lines += [
                line
                for line in run.log_path.read_text(errors="replace").splitlines()
                if "forbidden" in line.lower() and ALLOCATABLE_REFUSAL not in line
            ]
        return lines


PROBE_FAILURE_THRESHOLD = 3  # kubelet's default failureThreshold for a readiness probe


class Replicas:
    """`count` ballastd replicas with leader election behind Service ballast-webhook, in place of the suite's
    operator (stopped meanwhile, and started again with its webhooks on leaving).

    Each replica listens on its own namespace address; there is no endpoint controller for them, so a thread
    plays it with kubelet's readiness probe: every 0.2 s each replica's `/readyz` is asked (1 s timeout), and a
    replica leaves the EndpointSlice only after `PROBE_FAILURE_THRESHOLD` failures in a row, so one slow answer
    on a loaded machine does not empty the Service. A terminating or exited replica leaves at once. Replicas
    share a Redis store. `module` runs another entry point (a test wrapper around ballastd's `main`).
    """

    def __init__(
        self,
        cluster: MiniCluster,
        operator: Operator,
        store_url: str,
        *,
        count: int = 2,
        args: Sequence[str] = (),
        module: str = "ballast.internal.cmd.ballastd",
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.env = cluster.env
        self.operator = operator
        self.store_url = store_url
        self.addresses = [network.allocate_address() for _ in range(count)]
        self.args = list(args)
        self.module = module
        self.environ = dict(environ or {})
        self.work = operator.work
        self.cert_dir = self.env.webhook_cert_dir(hosts=(f"{SERVICE}.{OPERATOR_NAMESPACE}.svc",))
        self.replicas: list[Ballastd | None] = [None] * count
        self.generation = 0
        self._stopped = threading.Event()
        self._endpoints = threading.Thread(target=self._play_endpoint_controller, name="endpoints", daemon=True)
        self._terminating: set[int] = set()
        self.ready_history: list[tuple[float, tuple[bool, ...]]] = []

    def __enter__(self) -> Replicas:
        self.operator.stop()
        self._service()
        configs = webhook_configurations(
            service_name=SERVICE, service_namespace=OPERATOR_NAMESPACE, ca_bundle=self.env.ca.cert_pem
        )
        for config in configs:
            plural = config["kind"].lower() + "s"
            self.env.rest.apply(f"/apis/admissionregistration.k8s.io/v1/{plural}/{config['metadata']['name']}", config)
        for index in range(len(self.replicas)):
            self.start(index)
        self._endpoints.start()
        for index in range(len(self.replicas)):
            self.wait_ready(index)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._endpoints.join(timeout=5)
        for replica in self.replicas:
            if replica is not None:
                replica.stop()
        self.operator.register_webhooks()
        self.operator.start()

    def start(self, index: int, extra_args: Sequence[str] = ()) -> Ballastd:
        """(Re)start replica `index` on its address; returns it (ready or not: see `wait_ready`)."""
        self.generation += 1
        argv = [
            "--leader-elect",
            *ELECTION,
            f"--store={self.store_url}",
            f"--webhook-bind-address={self.addresses[index]}:9443",
            f"--webhook-cert-path={self.cert_dir}",
            *self.args,
            *extra_args,
        ]
        name = f"replica-{index}-{self.generation}"
        with _environment(self.environ):
            replica = Ballastd(self.env, self.work, argv, name=name, module=self.module)
        self.replicas[index] = replica
        self.operator.replica_runs.append(replica)
        return replica

    def stop_gracefully(self, index: int, *, drain_seconds: float = 2.0) -> None:
        """Stop replica `index` as Kubernetes stops a pod with a preStop pause: out of the EndpointSlice first
        (terminating endpoints are not ready), `drain_seconds` for the API server to stop sending to it, then
        SIGTERM, under which it finishes what it is serving and exits."""
        self._terminating.add(index)
        time.sleep(drain_seconds)
        replica = self.replicas[index]
        if replica is not None:
            replica.stop()
        self.replicas[index] = None
        self._terminating.discard(index)

    def wait_ready(self, index: int) -> None:
        """Until replica `index` answers `/readyz` and the EndpointSlice lists it as ready."""
        replica = self.replicas[index]
        assert replica is not None
        replica.wait_ready()
        poll_until(
            lambda: bool(self.ready_history) and self.ready_history[-1][1][index],
            timeout=15,
            what=f"replica {index} ready in EndpointSlice {SERVICE}",
        )

    def output(self, lines: int = 30) -> str:
        """The last `lines` log lines of each replica running now, for a timeout's message."""
        tails = []
        for index, replica in enumerate(self.replicas):
            if replica is not None:
                tail = replica.log_path.read_text(errors="replace").splitlines()[-lines:]
                tails.append(f"--- replica {index} ({replica.log_path.name})\n" + "\n".join(tail))
        return "\n".join(tails)

    def leaders(self) -> list[int]:
        return [i for i, r in enumerate(self.replicas) if r is not None and is_leader(r)]

    def _service(self) -> None:
        self.env.rest.apply(
            f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/services/{SERVICE}",
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": SERVICE, "namespace": OPERATOR_NAMESPACE},
                "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443, "protocol": "TCP"}]},
            },
        )
        self._publish((False,) * len(self.replicas))

    def _publish(self, ready: tuple[bool, ...]) -> None:
        self.env.rest.apply(
            f"/apis/discovery.k8s.io/v1/namespaces/{OPERATOR_NAMESPACE}/endpointslices/{SERVICE}",
            {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": SERVICE,
                    "namespace": OPERATOR_NAMESPACE,
                    "labels": {"kubernetes.io/service-name": SERVICE},
                },
                "addressType": "IPv4",
                "endpoints": [
                    {"addresses": [address], "conditions": {"ready": up}}
                    for address, up in zip(self.addresses, ready, strict=True)
                ],
                "ports": [{"name": "https", "port": 9443, "protocol": "TCP"}],
            },
        )

    def _play_endpoint_controller(self) -> None:
        http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(total=1.0))
        published: tuple[bool, ...] | None = None
        failures = [PROBE_FAILURE_THRESHOLD] * len(self.replicas)  # not ready until a probe succeeds
        while not self._stopped.wait(0.2):
            for index, replica in enumerate(self.replicas):
                if index in self._terminating or replica is None or replica.process.poll() is not None:
                    failures[index] = PROBE_FAILURE_THRESHOLD
                elif _ready(http, replica):
                    failures[index] = 0
                else:
                    failures[index] += 1
            ready = tuple(count < PROBE_FAILURE_THRESHOLD for count in failures)
            if ready != published:
                with contextlib.suppress(APIError, urllib3.exceptions.HTTPError):  # retried on the next round
                    self._publish(ready)
                    published = ready
                    self.ready_history.append((time.monotonic(), ready))


def _ready(http: urllib3.PoolManager, replica: Ballastd) -> bool:
    try:
        return http.request("GET", f"http://127.0.0.1:{replica.health_port}/readyz").status == 200
    except urllib3.exceptions.HTTPError:
        return False


def is_leader(replica: Ballastd) -> bool:
    if replica.process.poll() is not None:
        return False
    try:
        return replica.metric("leader_election_master_status", name=LEADER_ELECTION_ID) == 1.0
    except urllib3.exceptions.HTTPError:
        return False


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    """`values` set in os.environ while a child process is spawned (it inherits them), restored after."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class MountedSecret:
    """A directory laid out as kubelet mounts a Secret (`tls.crt` → `..data/tls.crt` → `..<stamp>/tls.crt`),
    holding a serving certificate from the cluster CA; `rotate()` swaps in a new pair the way kubelet does when
    cert-manager renews it: the new files in a fresh directory, then one atomic rename of `..data`."""

    def __init__(self, env: Environment, directory: Path, hosts: Sequence[str]) -> None:
        self.env = env
        self.directory = directory
        self.hosts = tuple(hosts)
        self.rotations = 0
        directory.mkdir(parents=True, exist_ok=True)
        self.rotate()
        for name in ("tls.crt", "tls.key", "ca.crt"):
            (directory / name).symlink_to(Path("..data") / name)

    def rotate(self) -> bytes:
        """Issue and publish a new pair; returns the new certificate's PEM."""
        stamp = self.directory / f"..{time.time_ns()}"
        pair = self.env.ca.issue(f"ballast-webhook-{self.rotations}", hosts=self.hosts, server=True)
        pair.write(stamp)
        (stamp / "ca.crt").write_bytes(self.env.ca.cert_pem)
        link = self.directory / "..data_tmp"
        link.symlink_to(stamp.name)
        link.rename(self.directory / "..data")  # atomic: readers see the old pair or the new, never half
        self.rotations += 1
        return (stamp / "tls.crt").read_bytes()


def kubeconfig_tokens(path: Path) -> list[str]:
    """The bearer tokens a kubeconfig file holds."""
    document = yaml.safe_load(path.read_text()) or {}
    return [user["user"]["token"] for user in document.get("users", []) if user.get("user", {}).get("token")]


def private_key_lines(directory: Path) -> list[str]:
    """The base64 lines of every PEM private key under `directory` (a log that printed a key shows them)."""
    lines: list[str] = []
    for path in directory.rglob("*.key"):
        if path.is_file():
            lines += [line for line in path.read_text().splitlines() if line and not line.startswith("-----")]
    return lines


def leaked(logs: Mapping[str, str], secrets: Mapping[str, Sequence[str]]) -> list[str]:
    """`<log>: <kind of secret>` for each log that contains any secret of that kind."""
    return [
        f"{log}: {kind}"
        for log, text in logs.items()
        for kind, values in secrets.items()
        if any(value and value in text for value in values)
    ]


def store_passwords(runs: Sequence[Ballastd]) -> list[str]:
    """The passwords in the `--store=` URLs `runs` were started with: every Redis they used, whoever made it."""
    argvs = [run.process.args for run in runs if isinstance(run.process.args, list)]  # Ballastd passes a list
    urls = [str(arg).removeprefix("--store=") for argv in argvs for arg in argv if str(arg).startswith("--store=")]
    return [password for url in urls for password in url_passwords(url)]


def url_passwords(url: str) -> list[str]:
    """The passwords a store URL carries: the data nodes' (`user:password@`, also in a Sentinel or Cluster URL)
    and Sentinel's own (`sentinel_password=`)."""
    parts = urlsplit(url)
    found = [unquote(parts.password)] if parts.password else []
    return found + [value for name, value in parse_qsl(parts.query) if name == "sentinel_password" and value]
