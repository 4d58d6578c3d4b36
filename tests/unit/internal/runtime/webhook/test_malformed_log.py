"""A refused malformed review leaves a warning in the log — one per path and interval, since any client can send
them — whether the server refused it (not JSON, not a review, wrong content type) or the handler did (a 400)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import urllib3

from ballast.runtime import AdmissionRequest, AdmissionResponse, allowed, errored
from ballast.runtime import webhook as webhook_module
from tests.unit.internal.runtime.webhook.support import serving

INTERVAL = 0.3
REVIEW: dict[str, Any] = {
    "apiVersion": "admission.k8s.io/v1",
    "kind": "AdmissionReview",
    "request": {"uid": "uid-7", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "operation": "CREATE",
                "object": {"metadata": {"name": "unreadable"}}},
}  # fmt: skip


def picky(request: AdmissionRequest) -> AdmissionResponse:
    if (request.object or {}).get("metadata", {}).get("name") == "unreadable":
        return errored(400, "cannot decode the object as a pod: Expected `array`, got `object` - at `$.spec`")
    return allowed()


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, urllib3.PoolManager]]:
    monkeypatch.setattr(webhook_module, "MALFORMED_LOG_INTERVAL", INTERVAL, raising=False)
    with serving(tmp_path, "malformed", {"/validate": picky}) as served:
        yield served.base, served.pool()


def _post(served: tuple[str, urllib3.PoolManager], body: bytes, content_type: str = "application/json") -> int:
    base, pool = served
    response = pool.request("POST", f"{base}/validate", body=body, headers={"Content-Type": content_type})
    code: int = orjson.loads(response.data)["response"]["status"]["code"]
    return code


def _warnings(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [
        {"msg": r.getMessage(), **getattr(r, "kv", {})}
        for r in caplog.records
        if r.name == "ballast.runtime.webhook" and r.levelno == logging.WARNING
    ]


def test_malformed_reviews_are_logged_at_a_rate_limited_warning(
    served: tuple[str, urllib3.PoolManager], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ballast.runtime.webhook"):
        codes = [_post(served, b"{not json") for _ in range(3)]
        codes.append(_post(served, orjson.dumps(REVIEW), content_type="text/plain"))
        first = _warnings(caplog)
        time.sleep(INTERVAL + 0.1)
        codes.append(_post(served, orjson.dumps(REVIEW)))  # the handler's own 400
        codes.append(_post(served, orjson.dumps({**REVIEW, "request": {**REVIEW["request"], "object": {}}})))
    assert codes == [400, 400, 400, 400, 400, 200]
    assert len(first) == 1
    assert first[0]["msg"] == "refused a malformed admission review"
    assert (first[0]["path"], first[0]["code"]) == ("/validate", 400)
    assert "not JSON" in first[0]["reason"]
    later = _warnings(caplog)[1:]
    assert len(later) == 1
    assert (later[0]["code"], later[0]["uid"], later[0]["suppressed"]) == (400, "uid-7", 3)
    assert later[0]["reason"].startswith("cannot decode the object as a pod")
