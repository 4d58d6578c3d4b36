"""Test backends the API server talks to: aggregated APIs (e.g. metrics.k8s.io) and fake kubelets.

A backend is a small threaded HTTPS server with a certificate from the environment's CA. It is bound
*before* it is registered with the API server, so a run outside the private network fails at bind time
instead of sending traffic anywhere else.
"""

from __future__ import annotations

import base64
import ssl
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import orjson

from . import network
from .errors import APIError, EnvtestError
from .wait import poll_until

if TYPE_CHECKING:
    from .environment import Environment

Route = Callable[[], Any] | Mapping[str, Any] | list[Any]


class Backend:
    """A running HTTPS test server; stop it with `stop()` or a `with` block."""

    def __init__(self, host: str, handler: type[BaseHTTPRequestHandler], cert_dir: Path) -> None:
        self.host = host
        self._server = ThreadingHTTPServer((host, 0), handler)  # binds now: fails outside the namespace
        self._server.daemon_threads = True
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port: int = self._server.server_address[1]
        self.ca_pem = (cert_dir / "ca.crt").read_bytes()
        self._thread = threading.Thread(target=self._server.serve_forever, name=f"backend-{host}:{self.port}")
        self._thread.daemon = True
        self._thread.start()

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Backend:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class RecordingHandler(BaseHTTPRequestHandler):
    """Base of generated handlers: keeps every request seen as (method, path-with-query) in `requests`."""

    protocol_version = "HTTP/1.1"
    requests: ClassVar[list[tuple[str, str]]]

    def log_message(self, format: str, *args: Any) -> None:
        return


def json_handler(routes: Mapping[str, Route]) -> type[RecordingHandler]:
    """A GET-only handler answering each path in `routes` with its JSON (a value, or a callable's result).

    Paths are matched without the query string; anything else gets 404. Requests seen are appended to the
    class attribute `requests` for assertions (each call returns a new class with its own list).
    """

    class Handler(RecordingHandler):
        requests: ClassVar[list[tuple[str, str]]] = []

        def do_GET(self) -> None:
            Handler.requests.append(("GET", self.path))
            route = routes.get(urlsplit(self.path).path)
            if route is None:
                self._send(404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404})
                return
            self._send(200, route() if callable(route) else route)

        def _send(self, code: int, payload: Any) -> None:
            body = orjson.dumps(payload)
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def _cert_dir(env: Environment, hosts: Sequence[str]) -> Path:
    directory = Path(tempfile.mkdtemp(prefix="backend-certs-", dir=env.work_dir))
    env.ca.issue("ballast-envtest-backend", hosts=tuple(hosts), server=True).write(directory)
    (directory / "ca.crt").write_bytes(env.ca.cert_pem)
    return directory


def serve_backend(
    env: Environment, handler: type[BaseHTTPRequestHandler], *, host: str, names: Sequence[str] = ()
) -> Backend:
    """Start a backend on `host` (port chosen by the kernel) with a certificate for `host` and `names`."""
    try:
        return Backend(host, handler, _cert_dir(env, (host, *names)))
    except OSError as exc:
        hint = " (TEST-NET-2 addresses exist only inside `ballast-envtest netns`)" if host != "127.0.0.1" else ""
        raise EnvtestError(f"cannot serve a test backend on {host}: {exc.strerror}{hint}") from exc


def _apply(env: Environment, path: str, body: dict[str, Any]) -> dict[str, Any]:
    return env.rest.apply(path, body)


def serve_api_service(
    env: Environment,
    group: str,
    version: str,
    handler: type[BaseHTTPRequestHandler],
    *,
    namespace: str = "kube-system",
    service: str | None = None,
    timeout: float = 30.0,
) -> Backend:
    """Serve an aggregated API `group/version` from `handler` and wait until its APIService is Available.

    Loopback mode: the backend listens on 127.0.0.1 behind an ExternalName Service (`localhost`), with
    aggregator routing off. Private network: it listens on a TEST-NET-2 address behind a Service and an
    EndpointSlice, with aggregator routing on. The handler must answer discovery at `/apis/<group>/<version>`.
    """
    service = service or default_service_name(group, version)
    private = env.network_mode == "private"
    host = network.allocate_address() if private else "127.0.0.1"
    backend = serve_backend(env, handler, host=host, names=(f"{service}.{namespace}.svc", "localhost"))
    try:
        register_api_service(
            env,
            group,
            version,
            host=host,
            port=backend.port,
            ca_pem=backend.ca_pem,
            namespace=namespace,
            service=service,
            timeout=timeout,
        )
    except BaseException:
        backend.stop()
        raise
    return backend


def default_service_name(group: str, version: str) -> str:
    """`metrics.k8s.io`, `v1beta1` → `metrics-v1beta1`."""
    return group.split(".", maxsplit=1)[0] + "-" + version


def register_api_service(
    env: Environment,
    group: str,
    version: str,
    *,
    host: str,
    port: int,
    ca_pem: bytes,
    namespace: str = "kube-system",
    service: str | None = None,
    timeout: float = 30.0,
) -> None:
    """Register the aggregated API `group/version` served at `https://host:port` and wait until Available.

    Loopback mode: behind an ExternalName Service (`localhost`). Private network: behind a Service and an
    EndpointSlice for `host`, which the API server dials (aggregator routing is on there; `host` must not be
    loopback).
    """
    service = service or default_service_name(group, version)
    private = env.network_mode == "private"
    if private and host.startswith("127."):
        raise EnvtestError(f"the aggregator will not dial loopback {host} in the private network; serve elsewhere")
    service_spec: dict[str, Any] = {"ports": [{"name": "https", "port": port, "protocol": "TCP"}]}
    if not private:
        service_spec |= {"type": "ExternalName", "externalName": "localhost"}
    _apply(
        env,
        f"/api/v1/namespaces/{namespace}/services/{service}",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": service, "namespace": namespace},
            "spec": service_spec,
        },
    )
    if private:
        _apply(
            env,
            f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices/{service}",
            {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": service,
                    "namespace": namespace,
                    "labels": {"kubernetes.io/service-name": service},
                },
                "addressType": "IPv4",
                "endpoints": [{"addresses": [host], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            },
        )
    name = f"{version}.{group}"
    _apply(
        env,
        f"/apis/apiregistration.k8s.io/v1/apiservices/{name}",
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": name},
            "spec": {
                "group": group,
                "version": version,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
                "service": {"namespace": namespace, "name": service, "port": port},
                "caBundle": base64.b64encode(ca_pem).decode(),
            },
        },
    )
    poll_until(
        lambda: _available(env, name),
        timeout=timeout,
        what=f"APIService {name} to be Available",
        last_error=lambda: _availability_message(env, name),
    )


def _conditions(env: Environment, name: str) -> dict[str, dict[str, Any]]:
    status = env.rest.get(f"/apis/apiregistration.k8s.io/v1/apiservices/{name}").get("status", {})
    return {c["type"]: c for c in status.get("conditions", [])}


def _available(env: Environment, name: str) -> bool:
    return _conditions(env, name).get("Available", {}).get("status") == "True"


def _availability_message(env: Environment, name: str) -> str:
    try:
        return str(_conditions(env, name).get("Available", {}).get("message", "no Available condition yet"))
    except APIError as exc:
        return str(exc)


def serve_kubelet(
    env: Environment, node: str, handler: type[BaseHTTPRequestHandler], *, labels: Mapping[str, str] | None = None
) -> Backend:
    """Serve a fake kubelet for Node `node` (created or updated) so `nodes/<node>/proxy/...` reaches it.

    Needs the private network: the API server never proxies to loopback addresses.
    """
    network.require_private_network()
    host = network.allocate_address()
    backend = serve_backend(env, handler, host=host, names=(node,))
    try:
        _apply(
            env,
            f"/api/v1/nodes/{node}",
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node, "labels": dict(labels or {})},
            },
        )
        env.rest.patch_status(
            f"/api/v1/nodes/{node}",
            {
                "status": {
                    # InternalIP only: a Hostname address would come first in the API server's preference and
                    # would have to resolve through DNS.
                    "addresses": [{"type": "InternalIP", "address": host}],
                    "daemonEndpoints": {"kubeletEndpoint": {"Port": backend.port}},
                }
            },
        )
    except BaseException:
        backend.stop()
        raise
    return backend


__all__ = [
    "Backend",
    "RecordingHandler",
    "Route",
    "default_service_name",
    "json_handler",
    "register_api_service",
    "serve_api_service",
    "serve_backend",
    "serve_kubelet",
]
