"""Installing CRDs and webhook configurations into the test API server, envtest style."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .errors import APIError, ManifestError
from .rest import JSON, RESTClient
from .wait import poll_until

if TYPE_CHECKING:
    from .environment import Environment

Source = str | Path | JSON
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WEBHOOK_KINDS = {
    "MutatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
}


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in MANIFEST_SUFFIXES and p.is_file())
    if path.is_file():
        return [path]
    raise ManifestError(f"manifest path {path} does not exist")


def load_documents(sources: Iterable[Source]) -> list[tuple[str, JSON]]:
    """Every object in `sources` (files, directories, or dicts) with a label saying where it came from."""
    documents: list[tuple[str, JSON]] = []
    for source in sources:
        if isinstance(source, dict):
            documents.append(("<object>", source))
            continue
        for path in _files(Path(source)):
            try:
                with path.open(encoding="utf-8") as stream:  # a stream, so YAML errors name the file
                    loaded = list(yaml.safe_load_all(stream))
            except yaml.YAMLError as exc:
                raise ManifestError(f"{path} does not parse as YAML: {exc}") from exc
            except UnicodeDecodeError as exc:
                raise ManifestError(f"{path} is not UTF-8 text: {exc}") from exc
            for index, document in enumerate(loaded):
                if document is None:
                    continue
                if not isinstance(document, dict):
                    raise ManifestError(f"{path} document {index + 1} is not an object")
                documents.append((f"{path} document {index + 1}", document))
    return documents


def _expect(label: str, document: JSON, kinds: Iterable[str], api_version: str) -> str:
    kind = document.get("kind")
    if kind not in set(kinds) or document.get("apiVersion") != api_version:
        raise ManifestError(
            f"{label}: expected {api_version} {' or '.join(sorted(kinds))}, got {document.get('apiVersion')} {kind}"
        )
    name = document.get("metadata", {}).get("name")
    if not name:
        raise ManifestError(f"{label}: {kind} has no metadata.name")
    return str(kind)


def _apply(rest: RESTClient, collection: str, label: str, document: JSON) -> JSON:
    name = document["metadata"]["name"]
    try:
        return rest.apply(f"{collection}/{name}", document)
    except APIError as exc:
        raise ManifestError(f"{label}: the API server refused {document['kind']} {name}: {exc.message}") from exc


def _served(rest: RESTClient, crd: JSON) -> bool:
    status = {c["type"]: c["status"] for c in crd.get("status", {}).get("conditions", [])}
    if status.get("Established") != "True":
        return False
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    for version in crd["spec"]["versions"]:
        if not version.get("served", False):
            continue
        resources = rest.get(f"/apis/{group}/{version['name']}").get("resources", [])
        if plural not in {r["name"] for r in resources}:
            return False
    return True


def install_crds(rest: RESTClient, sources: Sequence[Source], timeout: float = 10.0) -> list[str]:
    """Create or update every CRD in `sources`, then wait until each is Established and in discovery."""
    names = []
    for label, document in load_documents(sources):
        _expect(label, document, {"CustomResourceDefinition"}, "apiextensions.k8s.io/v1")
        _apply(rest, CRD_PATH, label, document)
        names.append(document["metadata"]["name"])
    for name in names:
        poll_until(
            lambda name=name: _served(rest, rest.get(f"{CRD_PATH}/{name}")),  # type: ignore[misc]
            timeout=timeout,
            what=f"CRD {name} to be established and served",
        )
    return names


def rewrite_webhook_config(config: JSON, *, host: str, port: int, ca_bundle: bytes) -> JSON:
    """A copy of a webhook configuration pointing at `https://host:port<path>` and trusting `ca_bundle`.

    A `service` reference becomes a URL with the service's `path` (as envtest does); an existing `url` is
    kept; every webhook gets the CA bundle.
    """
    rewritten = copy.deepcopy(config)
    rewritten.get("metadata", {}).pop("resourceVersion", None)
    bundle = base64.b64encode(ca_bundle).decode()
    for webhook in rewritten.get("webhooks") or []:
        client_config: dict[str, Any] = webhook.setdefault("clientConfig", {})
        service = client_config.pop("service", None)
        if service is not None:
            path = service.get("path") or "/"
            client_config["url"] = f"https://{host}:{port}{path}"
        client_config["caBundle"] = bundle
    return rewritten


def install_webhooks(
    rest: RESTClient,
    sources: Sequence[Source],
    *,
    host: str,
    port: int,
    ca_bundle: bytes,
    timeout: float = 10.0,
) -> list[str]:
    """Install Mutating/ValidatingWebhookConfigurations rewritten to a local server; returns their names."""
    installed = []
    for label, document in load_documents(sources):
        kind = _expect(label, document, WEBHOOK_KINDS, "admissionregistration.k8s.io/v1")
        rewritten = rewrite_webhook_config(document, host=host, port=port, ca_bundle=ca_bundle)
        _apply(rest, WEBHOOK_KINDS[kind], label, rewritten)
        name = rewritten["metadata"]["name"]
        poll_until(
            lambda kind=kind, name=name: rest.get(f"{WEBHOOK_KINDS[kind]}/{name}"),  # type: ignore[misc]
            timeout=timeout,
            what=f"{kind} {name} to be readable",
        )
        installed.append(f"{kind}/{name}")
    return installed


@dataclass
class WebhookInstallOptions:
    """envtest's `WebhookInstallOptions`: webhook configurations (files or directories in `paths`, rendered
    objects in `mutating_webhooks`/`validating_webhooks`, e.g. from `webhookbuilder.webhook_configurations`)
    installed pointing at a local server, with a serving certificate from the environment's CA.

        options = WebhookInstallOptions(mutating_webhooks=configs).install(envtest)
        server = WebhookServer(host=options.local_serving_host, port=options.local_serving_port,
                               cert_dir=options.local_serving_cert_dir)

    `install` fills `local_serving_port` (a free port when 0), `local_serving_cert_dir` (`tls.crt`, `tls.key`,
    `ca.crt`), `local_serving_ca_data` (the caBundle) and `installed` (`Kind/name` of each configuration).
    """

    paths: Sequence[Source] = ()
    mutating_webhooks: Sequence[JSON] = ()
    validating_webhooks: Sequence[JSON] = ()
    local_serving_host: str = "127.0.0.1"
    local_serving_port: int = 0
    local_serving_cert_dir: Path | None = None
    local_serving_ca_data: bytes = b""
    installed: list[str] = field(default_factory=list)

    @property
    def cert_file(self) -> Path:
        return self._cert_dir() / "tls.crt"

    @property
    def key_file(self) -> Path:
        return self._cert_dir() / "tls.key"

    def _cert_dir(self) -> Path:
        if self.local_serving_cert_dir is None:
            raise RuntimeError("WebhookInstallOptions.install() has not run yet")
        return self.local_serving_cert_dir

    def install(self, env: Environment, timeout: float = 10.0) -> WebhookInstallOptions:
        """Issue the serving certificate (for the host, `localhost` and `127.0.0.1`), pick the port, install
        every configuration (a service reference becomes `https://host:port<path>`); returns self."""
        from .ports import suggest_port  # noqa: PLC0415 (the port reservations are only needed here)

        if self.local_serving_port == 0:
            self.local_serving_port = suggest_port(self.local_serving_host)
        if self.local_serving_cert_dir is None:
            hosts = tuple(dict.fromkeys((self.local_serving_host, "localhost", "127.0.0.1")))
            self.local_serving_cert_dir = env.webhook_cert_dir(hosts)
        self.local_serving_ca_data = env.ca.cert_pem
        sources: list[Source] = [*self.paths, *self.mutating_webhooks, *self.validating_webhooks]
        self.installed = install_webhooks(
            env.rest,
            sources,
            host=self.local_serving_host,
            port=self.local_serving_port,
            ca_bundle=self.local_serving_ca_data,
            timeout=timeout,
        )
        return self

    def uninstall(self, env: Environment) -> None:
        """Delete the installed configurations (a missing one is fine)."""
        for installed in self.installed:
            kind, name = installed.split("/", 1)
            try:
                env.rest.delete(f"{WEBHOOK_KINDS[kind]}/{name}")
            except APIError as exc:
                if exc.status != 404:
                    raise
        self.installed = []


__all__ = [
    "CRD_PATH",
    "MANIFEST_SUFFIXES",
    "WEBHOOK_KINDS",
    "Source",
    "WebhookInstallOptions",
    "install_crds",
    "install_webhooks",
    "load_documents",
    "rewrite_webhook_config",
]
