"""The harness's own small REST client (JSON over urllib3), used to provision the control plane.

Tests talk to the API server through whatever client they like (the official `kubernetes` package, ours);
the harness needs only a handful of verbs and must not depend on either.
"""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import urlencode

import orjson
import urllib3

from .errors import APIError

JSON = dict[str, Any]


class RESTClient:
    """Authenticated JSON requests against one API server (client certificate or bearer token)."""

    def __init__(
        self,
        server: str,
        ca_file: str,
        *,
        cert_file: str | None = None,
        key_file: str | None = None,
        token: str | None = None,
        timeout: float = 60.0,  # as the framework's client: a loaded server compiling large CEL takes its time
    ) -> None:
        self.server = server.rstrip("/")
        self._headers = {"Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._pool = urllib3.PoolManager(
            cert_reqs=ssl.CERT_REQUIRED,
            ca_certs=ca_file,
            cert_file=cert_file,
            key_file=key_file,
            timeout=urllib3.Timeout(total=timeout),
            retries=False,
            maxsize=4,
        )

    def request(
        self,
        method: str,
        path: str,
        body: JSON | None = None,
        *,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> JSON:
        """Send one request; returns the decoded body or raises APIError with the server's message."""
        url = self.server + path + (("?" + urlencode(params)) if params else "")
        headers = dict(self._headers)
        payload = None
        if body is not None:
            payload = orjson.dumps(body)
            headers["Content-Type"] = content_type
        response = self._pool.request(method, url, body=payload, headers=headers)
        data = response.data
        if response.status >= 400:
            reason, message = str(response.status), data.decode("utf-8", "replace")
            try:
                status = orjson.loads(data)
                reason, message = status.get("reason", reason), status.get("message", message)
            except orjson.JSONDecodeError:
                pass
            raise APIError(method, path, response.status, reason, message)
        if not data:
            return {}
        decoded: JSON = orjson.loads(data)
        return decoded

    def raw(self, method: str, path: str) -> tuple[int, bytes]:
        """Send one request without decoding: (status, body). For text endpoints such as `/readyz`."""
        response = self._pool.request(method, self.server + path, headers=self._headers)
        return response.status, response.data

    def get(self, path: str, params: dict[str, str] | None = None) -> JSON:
        return self.request("GET", path, params=params)

    def create(self, path: str, body: JSON) -> JSON:
        return self.request("POST", path, body)

    def apply(self, path: str, body: JSON, field_manager: str = "ballast-envtest") -> JSON:
        """Server-side apply (create or update) of `body` at its object path, forcing ownership."""
        return self.request(
            "PATCH",
            path,
            body,
            params={"fieldManager": field_manager, "force": "true"},
            content_type="application/apply-patch+yaml",
        )

    def patch_status(self, path: str, body: JSON) -> JSON:
        return self.request("PATCH", path + "/status", body, content_type="application/merge-patch+json")

    def delete(self, path: str) -> JSON:
        return self.request("DELETE", path)

    def close(self) -> None:
        self._pool.clear()


__all__ = [
    "JSON",
    "RESTClient",
]
