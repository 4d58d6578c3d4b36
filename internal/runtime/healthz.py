"""Health and readiness endpoints (`/healthz`, `/readyz`) with controller-runtime's `healthz` behaviour.

A check is a function that returns normally (healthy) or raises (unhealthy, the message says why). The
aggregated endpoint answers `ok`; `?verbose` lists every check; `?exclude=<name>` skips one; `/readyz/<name>`
runs a single check. Unhealthy answers use status 500.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

Check = Callable[[], object]


def ping() -> None:
    """controller-runtime's `healthz.Ping`: always healthy."""


class Checks:
    """A named, ordered set of checks; thread-safe."""

    def __init__(self) -> None:
        self._checks: dict[str, Check] = {}
        self._lock = threading.Lock()

    def add(self, name: str, check: Check) -> None:
        with self._lock:
            if name in self._checks:
                raise ValueError(f"a check named {name!r} already exists")
            self._checks[name] = check

    def snapshot(self) -> dict[str, Check]:
        with self._lock:
            return dict(self._checks)


def evaluate(checks: Mapping[str, Check], excluded: set[str]) -> tuple[bool, list[str]]:
    """Run the checks; returns (all passed, report lines in the `[+]name ok` / `[-]name failed: why` form)."""
    healthy, lines = True, []
    for name, check in checks.items():
        if name in excluded:
            lines.append(f"[+]{name} excluded: ok")
            continue
        try:
            outcome = check()
        except Exception as exc:  # a check that raises reports unhealthy with the reason
            healthy = False
            lines.append(f"[-]{name} failed: {exc}")
            continue
        if outcome is False:
            healthy = False
            lines.append(f"[-]{name} failed: check returned false")
        else:
            lines.append(f"[+]{name} ok")
    return healthy, lines


def handler_for(endpoints: Mapping[str, Checks]) -> type[BaseHTTPRequestHandler]:
    """An HTTP handler serving each endpoint path (e.g. `/healthz`, `/readyz`) with its checks."""

    class HealthHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            base, _, single = url.path.strip("/").partition("/")
            checks = endpoints.get(f"/{base}")
            if checks is None:
                self._answer(404, "not found\n")
                return
            selected = checks.snapshot()
            if single:
                if single not in selected:
                    self._answer(404, f"no check named {single!r}\n")
                    return
                selected = {single: selected[single]}
            query = parse_qs(url.query, keep_blank_values=True)
            healthy, lines = evaluate(selected, set(query.get("exclude", [])))
            if "verbose" in query or not healthy:
                status = "passed" if healthy else "failed"
                body = "\n".join([*lines, f"{base} check {status}"]) + "\n"
            else:
                body = "ok"
            self._answer(200 if healthy else 500, body)

        def _answer(self, code: int, body: str) -> None:
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    return HealthHandler


__all__ = [
    "Check",
    "Checks",
    "evaluate",
    "handler_for",
    "ping",
]
