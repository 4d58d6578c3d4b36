"""`Environment`: a real etcd + kube-apiserver for tests, mirroring controller-runtime's envtest.

    with Environment() as env:
        client = kubernetes.client.ApiClient(env.client_configuration())
        ...

Start sequence (as envtest): etcd → kube-apiserver (up to five attempts when an auto-picked port was taken
meanwhile) → `/readyz` → the `default` namespace exists → CRDs from `crd_paths` installed and served.
Everything lives in one temporary directory that is removed on stop; a watchdog process removes it and kills
the control plane if the test process itself is killed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import orjson
import urllib3

from . import backends, network
from .assets import Assets, find_assets
from .certs import CertPair, TinyCA, signing_key_pair
from .errors import APIError, EnvtestError, PortInUseError, ProcessStartError
from .kubeconfig import Credentials
from .manifests import Source, install_crds, install_webhooks
from .ports import ensure_free, suggest_port
from .process import ControlPlaneProcess, Reaper
from .rest import RESTClient
from .wait import poll_until

NetworkMode = Literal["loopback", "private"]
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
FRONT_PROXY_CLIENT = "front-proxy-client"
APISERVER_ATTEMPTS = 5
_AUDIT_POLICY = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"


def _start_timeout() -> float:
    return float(os.environ.get("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "60").rstrip("s"))


class Environment:
    """A throw-away control plane. Use `start()`/`stop()` or a `with` block.

    Parameters mirror envtest's knobs: `kubernetes_version` (binaries are found or built, see `assets`),
    `crd_paths` installed after start, `apiserver_port`/`etcd_port` (free ports when unset),
    `network` ("loopback", or "private" inside `ballast-envtest netns`; default from
    `BALLAST_ENVTEST_NETWORK`), `audit_log` (write an audit log at `audit_log_path`),
    `components` (also start "kube-scheduler" and/or "kube-controller-manager"), and extra
    `apiserver_args` ("--flag=value" strings that override the defaults).
    """

    def __init__(
        self,
        *,
        kubernetes_version: str | None = None,
        assets: Assets | None = None,
        crd_paths: Sequence[Source] = (),
        apiserver_port: int | None = None,
        etcd_port: int | None = None,
        network_mode: NetworkMode | None = None,
        audit_log: bool = False,
        components: Sequence[str] = (),
        apiserver_args: Sequence[str] = (),
        start_timeout: float | None = None,
        stop_timeout: float = 20.0,
        build: bool = True,
    ) -> None:
        self.kubernetes_version = kubernetes_version
        self._assets = assets
        self.crd_paths = list(crd_paths)
        self.host = "127.0.0.1"
        self._requested_apiserver_port = apiserver_port
        self._requested_etcd_port = etcd_port
        self.network_mode: NetworkMode = network_mode or network.mode_from_environment()
        self.audit_log = audit_log
        unknown = set(components) - {"kube-scheduler", "kube-controller-manager"}
        if unknown:
            raise EnvtestError(
                f"unknown components {sorted(unknown)}: expected kube-scheduler, kube-controller-manager"
            )
        self.components = list(components)
        self.apiserver_args = list(apiserver_args)
        self.start_timeout = start_timeout if start_timeout is not None else _start_timeout()
        self.stop_timeout = stop_timeout
        self._build = build
        self._processes: list[ControlPlaneProcess] = []
        self._reaper: Reaper | None = None
        self._dir: Path | None = None
        self._rest: RESTClient | None = None
        self._admin: Credentials | None = None
        self.ca = TinyCA("ballast-envtest-ca")
        self.front_proxy_ca = TinyCA("ballast-envtest-front-proxy-ca")
        self.apiserver_port = 0
        self.etcd_port = 0
        self.started_seconds = 0.0

    # ----------------------------------------------------------------------------------------- lifecycle

    def __enter__(self) -> Environment:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def assets(self) -> Assets:
        if self._assets is None:
            self._assets = find_assets(self.kubernetes_version, build=self._build)
        return self._assets

    @property
    def work_dir(self) -> Path:
        if self._dir is None:
            raise EnvtestError("the environment is not started")
        return self._dir

    def start(self) -> None:
        """Start etcd and kube-apiserver, wait until ready, install `crd_paths`. Stops everything on failure."""
        began = time.monotonic()
        if self.network_mode == "private":
            network.require_private_network()
        if self._requested_apiserver_port:
            ensure_free(self.host, self._requested_apiserver_port, "kube-apiserver --secure-port")
        if self._requested_etcd_port:
            ensure_free(self.host, self._requested_etcd_port, "etcd client URL")
        etcd_binary = self.assets.binary("etcd")
        apiserver_binary = self.assets.binary("kube-apiserver")
        self._reaper = Reaper()
        self._dir = Path(tempfile.mkdtemp(prefix="ballast-envtest-"))
        self._reaper.own_dir(self._dir)
        try:
            self._write_certificates()
            self._start_etcd(etcd_binary)
            self._start_apiserver(apiserver_binary)
            rest = self.rest
            poll_until(
                lambda: rest.get("/api/v1/namespaces/default"),
                timeout=5.0,
                interval=0.05,
                what="the default namespace",
            )
            if self.crd_paths:
                install_crds(rest, self.crd_paths)
            for component in self.components:
                self.start_component(component)
        except BaseException:
            self.stop()
            raise
        self.started_seconds = time.monotonic() - began

    def stop(self) -> None:
        """Stop every process (reverse start order) and remove the temporary directory."""
        for process in reversed(self._processes):
            process.stop(self.stop_timeout)
        self._processes.clear()
        if self._rest:
            self._rest.close()
            self._rest = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            if self._reaper:
                self._reaper.release_dir(self._dir)
            self._dir = None
        if self._reaper:
            self._reaper.close()
            self._reaper = None

    @property
    def processes(self) -> tuple[ControlPlaneProcess, ...]:
        """The running control-plane processes in start order (name, argv, log file, pid)."""
        return tuple(self._processes)

    @property
    def pids(self) -> list[int]:
        """Process ids of the running control-plane binaries (for diagnostics and tests)."""
        return [p.pid for p in self._processes if p.pid is not None]

    # ------------------------------------------------------------------------------------------ start-up

    def _write_certificates(self) -> None:
        pki = self.work_dir / "pki"
        self.ca.pair.write(pki, "ca.crt", "ca.key")
        self.front_proxy_ca.pair.write(pki, "front-proxy-ca.crt", "front-proxy-ca.key")
        hosts = ("localhost", self.host, "10.0.0.1", "kubernetes", "kubernetes.default", "kubernetes.default.svc")
        self.ca.issue("kube-apiserver", hosts=hosts, server=True).write(pki, "apiserver.crt", "apiserver.key")
        self.front_proxy_ca.issue(FRONT_PROXY_CLIENT, client=True).write(
            pki, "front-proxy-client.crt", "front-proxy-client.key"
        )
        self.ca.issue("kube-apiserver-kubelet-client", organizations=("system:masters",), client=True).write(
            pki, "kubelet-client.crt", "kubelet-client.key"
        )
        signing_key_pair().write(pki, "sa.pub", "sa.key")
        admin = self.ca.issue("admin", organizations=("system:masters",), client=True)
        admin.write(pki, "admin.crt", "admin.key")

    def _start_etcd(self, binary: Path) -> None:
        port = self._requested_etcd_port or suggest_port(self.host)
        peer_port = suggest_port(self.host)
        client_url = f"http://{self.host}:{port}"
        peer_url = f"http://{self.host}:{peer_port}"
        args = [
            str(binary),
            f"--data-dir={self.work_dir / 'etcd'}",
            f"--listen-client-urls={client_url}",
            f"--advertise-client-urls={client_url}",
            f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=default={peer_url}",
            "--unsafe-no-fsync=true",
            "--log-level=warn",
        ]
        process = self.spawn("etcd", args)
        http = urllib3.PoolManager(timeout=urllib3.Timeout(total=2.0), retries=False)

        def healthy() -> bool:
            body = http.request("GET", f"{client_url}/health").data
            return bool(orjson.loads(body).get("health") == "true")

        process.wait_ready(healthy, self.start_timeout)
        self.etcd_port = port

    def _apiserver_args(self, binary: Path, port: int) -> list[str]:
        pki = self.work_dir / "pki"
        defaults = {
            "--etcd-servers": self.etcd_url,
            "--secure-port": str(port),
            "--bind-address": self.host,
            "--advertise-address": self.host,
            # v1.37 refuses a loopback advertise address with the default endpoint reconciler.
            "--endpoint-reconciler-type": "none",
            "--cert-dir": str(self.work_dir / "apiserver"),
            "--tls-cert-file": str(pki / "apiserver.crt"),
            "--tls-private-key-file": str(pki / "apiserver.key"),
            "--client-ca-file": str(pki / "ca.crt"),
            "--service-account-key-file": str(pki / "sa.pub"),
            "--service-account-signing-key-file": str(pki / "sa.key"),
            "--service-account-issuer": f"https://{self.host}:{port}/",
            "--service-cluster-ip-range": SERVICE_CLUSTER_IP_RANGE,
            "--allow-privileged": "true",
            "--authorization-mode": "RBAC",
            "--disable-admission-plugins": "ServiceAccount",
            "--requestheader-client-ca-file": str(pki / "front-proxy-ca.crt"),
            "--requestheader-allowed-names": FRONT_PROXY_CLIENT,
            "--requestheader-username-headers": "X-Remote-User",
            "--requestheader-group-headers": "X-Remote-Group",
            "--requestheader-extra-headers-prefix": "X-Remote-Extra-",
            "--proxy-client-cert-file": str(pki / "front-proxy-client.crt"),
            "--proxy-client-key-file": str(pki / "front-proxy-client.key"),
            "--kubelet-client-certificate": str(pki / "kubelet-client.crt"),
            "--kubelet-client-key": str(pki / "kubelet-client.key"),
            # Loopback: aggregated APIs sit behind ExternalName Services; private network: real endpoints.
            "--enable-aggregator-routing": "true" if self.network_mode == "private" else "false",
        }
        if self.audit_log:
            policy = self.work_dir / "audit-policy.yaml"
            policy.write_text(_AUDIT_POLICY)
            defaults["--audit-policy-file"] = str(policy)
            defaults["--audit-log-path"] = str(self.audit_log_path)
        for extra in self.apiserver_args:
            flag, _, value = extra.partition("=")
            defaults[flag] = value
        return [str(binary), *(f"{flag}={value}" for flag, value in defaults.items())]

    def _start_apiserver(self, binary: Path) -> None:
        last_error: Exception | None = None
        for _ in range(APISERVER_ATTEMPTS):
            port = self._requested_apiserver_port or suggest_port(self.host)
            process = self.spawn("kube-apiserver", self._apiserver_args(binary, port))
            self.apiserver_port = port
            self._admin = None
            try:
                process.wait_ready(self._readyz, self.start_timeout)
                return
            except ProcessStartError as exc:
                last_error = exc
                port_taken = "address already in use" in process.output_tail(200)
                process.stop(self.stop_timeout)
                self._processes.remove(process)
                if self._requested_apiserver_port and port_taken:
                    raise PortInUseError(
                        f"kube-apiserver: port {port} on {self.host} is already in use by another process"
                    ) from exc
                if not port_taken:
                    raise
        raise ProcessStartError(f"kube-apiserver did not start in {APISERVER_ATTEMPTS} attempts: {last_error}")

    def restart_apiserver(self, *, down_seconds: float = 0.0) -> float:
        """Stop kube-apiserver (SIGTERM), wait `down_seconds`, start it again on the same port with the same
        flags; returns the seconds it took to be ready again. Clients see their connections end and their
        watches close, as in a control-plane upgrade."""
        index, process = next((i, p) for i, p in enumerate(self._processes) if p.name == "kube-apiserver")
        process.stop(self.stop_timeout)
        time.sleep(down_seconds)
        began = time.monotonic()
        restarted = ControlPlaneProcess(process.name, process.argv, process.log_path.with_suffix(".restarted.log"),
                                        self._reaper)  # fmt: skip
        restarted.start()
        self._processes[index] = restarted
        if self._rest:  # its pooled connections died with the old process
            self._rest.close()
            self._rest = None
        restarted.wait_ready(self._readyz, self.start_timeout)
        return time.monotonic() - began

    def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision (etcd's JSON gateway); returns that revision.
        Watches and paginated lists from an older resourceVersion then get 410 Gone / Expired."""
        http = urllib3.PoolManager(timeout=urllib3.Timeout(total=5.0), retries=False)
        header = http.request("POST", f"{self.etcd_url}/v3/kv/range", json={"key": "AA=="}).json()["header"]
        revision = int(header["revision"])
        answer = http.request("POST", f"{self.etcd_url}/v3/kv/compaction", json={"revision": str(revision),
                                                                                  "physical": True})  # fmt: skip
        if answer.status != 200 and b"has been compacted" not in answer.data:  # already done: nothing newer to drop
            raise EnvtestError(f"etcd compaction at revision {revision} failed: {answer.data[:300]!r}")
        return revision

    def _readyz(self) -> bool:
        status, _ = self.rest.raw("GET", "/readyz")
        return status == 200

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> ControlPlaneProcess:
        """Start a process owned by this environment: logged to `<work_dir>/<name>.log`, killed if we die,
        stopped (in reverse start order) by `stop()`."""
        process = ControlPlaneProcess(name, argv, self.work_dir / f"{name}.log", self._reaper, env)
        process.start()
        self._processes.append(process)
        return process

    # ----------------------------------------------------------------------------------- access & users

    @property
    def server(self) -> str:
        """The API server URL, `https://127.0.0.1:<port>`."""
        return f"https://{self.host}:{self.apiserver_port}"

    @property
    def etcd_url(self) -> str:
        return f"http://{self.host}:{self.etcd_port}"

    @property
    def ca_file(self) -> Path:
        """The CA that signed the API server's serving certificate (and the client certificates)."""
        return self.work_dir / "pki" / "ca.crt"

    @property
    def audit_log_path(self) -> Path:
        return self.work_dir / "audit.log"

    @property
    def admin(self) -> Credentials:
        """Credentials of `admin` (group `system:masters`)."""
        if self._admin is None:
            pki = self.work_dir / "pki"
            self._admin = Credentials(
                "admin", self.server, self.ca_file, pki / "admin.crt", pki / "admin.key", groups=("system:masters",)
            )
        return self._admin

    @property
    def kubeconfig_path(self) -> Path:
        """The admin kubeconfig file (certificates embedded)."""
        path = self.work_dir / "kubeconfig"
        if not path.exists():
            self.admin.write_kubeconfig(path)
        return path

    @property
    def rest(self) -> RESTClient:
        """The harness's admin REST client."""
        if self._rest is None or self._rest.server != self.server:
            admin = self.admin
            self._rest = RESTClient(
                self.server, str(admin.ca_file), cert_file=str(admin.cert_file), key_file=str(admin.key_file)
            )
        return self._rest

    def client_configuration(self) -> Any:
        """A `kubernetes.client.Configuration` for the admin user (the in-memory client configuration)."""
        return self.admin.client_configuration()

    def rest_config(self, **options: Any) -> Any:
        """The framework's `RESTConfig` for the admin user, for `Manager(...)` or `new_client(...)` — Go's
        `testEnv.Start()` result. `options` are RESTConfig's fields (`qps`, `burst`, `timeout`, `user_agent`)."""
        from ballast.runtime.rest import RESTConfig  # noqa: PLC0415 - envtest runs without the framework

        return RESTConfig(self.client_configuration(), **options)

    def add_user(self, name: str, groups: Sequence[str] = ()) -> Credentials:
        """A user authenticated by a client certificate (CN=name, O=groups) issued by the cluster CA."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        directory = self.work_dir / "users" / safe
        pair: CertPair = self.ca.issue(name, organizations=tuple(groups), client=True)
        cert, key = pair.write(directory, "client.crt", "client.key")
        credentials = Credentials(name, self.server, self.ca_file, cert, key, groups=tuple(groups))
        credentials.write_kubeconfig(directory / "kubeconfig")
        return credentials

    def service_account(self, namespace: str, name: str, *, expiration_seconds: int = 3600) -> Credentials:
        """Credentials of ServiceAccount `namespace/name` (created if missing), via the TokenRequest API."""
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts"
        try:
            self.rest.create(path, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
        except APIError as exc:
            if exc.status != 409:
                raise
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": expiration_seconds},
        }
        token = self.rest.create(f"{path}/{name}/token", request)["status"]["token"]
        user = f"system:serviceaccount:{namespace}:{name}"
        groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated")
        return Credentials(user, self.server, self.ca_file, token=token, groups=groups)

    # -------------------------------------------------------------------------------- CRDs and webhooks

    def install_crds(self, sources: Sequence[Source], timeout: float = 10.0) -> list[str]:
        """Create or update CRDs from files, directories or dicts; wait until served. Returns their names."""
        return install_crds(self.rest, sources, timeout)

    def install_webhooks(
        self, sources: Sequence[Source], *, host: str = "127.0.0.1", port: int, ca_bundle: bytes
    ) -> list[str]:
        """Install webhook configurations rewritten to `https://host:port/<path>` trusting `ca_bundle`."""
        return install_webhooks(self.rest, sources, host=host, port=port, ca_bundle=ca_bundle)

    def webhook_cert_dir(self, hosts: Sequence[str] = ("localhost", "127.0.0.1")) -> Path:
        """A directory laid out like a mounted cert-manager Secret (`tls.crt`, `tls.key`, `ca.crt`).

        The serving certificate is issued by `self.ca` for `hosts`; pass `self.ca.cert_pem` as the
        `ca_bundle` of `install_webhooks`.
        """
        directory = Path(tempfile.mkdtemp(prefix="webhook-certs-", dir=self.work_dir))
        self.ca.issue("ballast-envtest-webhook", hosts=tuple(hosts), server=True).write(directory)
        (directory / "ca.crt").write_bytes(self.ca.cert_pem)
        return directory

    # -------------------------------------------------------------------------------------- backends

    def serve_backend(
        self, handler: type[BaseHTTPRequestHandler], *, host: str = "127.0.0.1", names: Sequence[str] = ()
    ) -> backends.Backend:
        """An HTTPS test server on `host` with a certificate from `self.ca` (see `backends`)."""
        return backends.serve_backend(self, handler, host=host, names=names)

    def serve_api_service(
        self, group: str, version: str, handler: type[BaseHTTPRequestHandler], **options: Any
    ) -> backends.Backend:
        """Serve an aggregated API and wait until its APIService is Available (both network modes)."""
        return backends.serve_api_service(self, group, version, handler, **options)

    def serve_kubelet(
        self, node: str, handler: type[BaseHTTPRequestHandler], labels: dict[str, str] | None = None
    ) -> backends.Backend:
        """A fake kubelet for Node `node`, reachable through `nodes/<node>/proxy` (private network only)."""
        return backends.serve_kubelet(self, node, handler, labels=labels)

    # ----------------------------------------------------------------------------- optional components

    def _component_credentials(self, user: str) -> Path:
        return self.add_user(user).write_kubeconfig(self.work_dir / "users" / user / "kubeconfig")

    def start_component(self, name: str, extra_args: Sequence[str] = ()) -> None:
        """Start kube-scheduler or kube-controller-manager against this API server and wait for /healthz.

        `extra_args` come last, so they override the defaults (e.g. `--kube-api-qps`)."""
        if any(p.name == name for p in self._processes):
            return
        binary = self.assets.binary(name)
        port = suggest_port(self.host)
        kubeconfig = self._component_credentials(f"system:{name}")
        args = [
            str(binary),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false",
            f"--bind-address={self.host}",
            f"--secure-port={port}",
            f"--cert-dir={self.work_dir / name}",
        ]
        if name == "kube-controller-manager":
            args += [
                f"--service-account-private-key-file={self.work_dir / 'pki' / 'sa.key'}",
                f"--root-ca-file={self.ca_file}",
                "--use-service-account-credentials=true",
            ]
        process = self.spawn(name, [*args, *extra_args])
        http = urllib3.PoolManager(cert_reqs="CERT_NONE", timeout=urllib3.Timeout(total=2.0), retries=False)
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        process.wait_ready(
            lambda: http.request("GET", f"https://{self.host}:{port}/healthz").status == 200,
            self.start_timeout,
        )

    def kubectl(self, *args: str, check: bool = True, input_text: str | None = None) -> str:
        """Run `kubectl` with the admin kubeconfig; returns stdout (raises EnvtestError with stderr)."""
        binary = self.assets.binary("kubectl")
        result = subprocess.run(
            [str(binary), f"--kubeconfig={self.kubeconfig_path}", *args],
            input=input_text,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and result.returncode != 0:
            raise EnvtestError(f"kubectl {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout


__all__ = [
    "APISERVER_ATTEMPTS",
    "FRONT_PROXY_CLIENT",
    "SERVICE_CLUSTER_IP_RANGE",
    "Environment",
    "NetworkMode",
]
