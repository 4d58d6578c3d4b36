"""Installing CRDs and webhook configurations into the test API server, envtest style."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from .errors import APIError, ManifestError
from .rest import JSON, RESTClient
from .wait import poll_until

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
