"""REST transport: the official `kubernetes` package's configuration, our request loop.

Configuration (kubeconfig, in-cluster, exec/OIDC token refresh, proxies, TLS) comes from the official client,
so anything `kubectl` can reach we can reach. Requests go straight through urllib3 with bodies left as bytes
for our own decoders; transient failures are retried with `tenacity` (connection errors; 429 honouring
Retry-After; 5xx on idempotent verbs), within the request's budget (`RESTConfig.timeout`, retries included) and
the caller's cooperative deadline (`deadline()`), and an optional client-side token bucket (off by default, as
in controller-runtime ≥ 0.21).

The API server's `Warning:` headers (an unknown field, a deprecated API) are logged at warning level, as
client-go's default warning handler logs them — each distinct text at most once a minute (`WARNING_INTERVAL`),
so a controller repeating a deprecated call does not flood the log. `Transport(config, on_warning=...)` gets
each one as well (a test collecting them).

A server that accepts connections and never answers costs at most `connect_timeout` per connection (TCP connect
and TLS handshake) and `timeout` per request; what is left then is an `UnreachableError` naming the server and
the deadline that passed. A kubeconfig that cannot be loaded is a `ConfigLoadError` naming the file.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import platform
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

import tenacity
import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

from . import metrics
from .apierrors import APIStatusError, CanceledError, DeadlineExceededError, error_from_response
from .log import RateLimitedLog, get_logger

WARNING_INTERVAL = 60.0
_WARNING = re.compile(r'(\d{3}) (\S+) "((?:[^"\\]|\\.)*)"')
_log = get_logger("ballast.runtime.rest")

IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRYABLE_5XX = frozenset({500, 502, 503, 504})
USER_AGENT = f"ballast-runtime (python/{platform.python_version()})"

# The `kubernetes.client.Configuration` attributes our transport reads (see `RESTConfig.portable`).
_PORTABLE_SETTINGS = ("host", "verify_ssl", "ssl_ca_cert", "cert_file", "key_file", "assert_hostname",
                      "tls_server_name", "proxy", "no_proxy", "proxy_headers", "api_key", "api_key_prefix",
                      "username", "password")  # fmt: skip

DEFAULT_CONNECT_TIMEOUT = 10.0
"""Seconds for the TCP connect and the TLS handshake together (kubectl's dialer gives each about 10 s)."""
DEFAULT_TIMEOUT = 60.0
"""Seconds one ordinary request may take, its retries included (watches: see `Transport.stream`)."""


class UnreachableError(ConnectionError):
    """The API server could not be reached or did not answer in time: refused, reset, or silent past a deadline.

    Attributes: `server` (its URL), `deadline` (the seconds that passed, None when it failed sooner), `detail`
    (what the last attempt saw), `method`, `path`.
    """

    def __init__(
        self, server: str, detail: str, *, deadline: float | None = None, method: str = "", path: str = ""
    ) -> None:
        what = f" ({method} {path})" if method else ""
        if deadline is not None:
            text = f"the API server {server} did not answer within {deadline:g}s{what}: {detail}"
        else:
            text = f"cannot reach the API server {server}{what}: {detail}"
        super().__init__(text)
        self.server = server
        self.deadline = deadline
        self.detail = detail
        self.method = method
        self.path = path


class ConfigLoadError(ValueError):
    """The kubeconfig (or the in-cluster configuration) could not be loaded; the message names the file."""


_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("ballast_runtime_deadline", default=None)


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Within the block, every API call must finish by `seconds` from now (None: no deadline).

    A Python thread cannot be interrupted, so this is cooperative: each request uses the time left as its
    timeout and raises `DeadlineExceededError` once none is left. Nested deadlines keep the earlier one.
    """
    if seconds is None:
        yield
        return
    until = time.monotonic() + seconds
    current = _deadline.get()
    token = _deadline.set(until if current is None else min(current, until))
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining_time() -> float | None:
    """Seconds left before the current cooperative deadline, or None when there is none."""
    until = _deadline.get()
    return None if until is None else until - time.monotonic()


_cancellations: contextvars.ContextVar[tuple[threading.Event, ...]] = contextvars.ContextVar(
    "ballast_runtime_cancellations", default=()
)


@contextlib.contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Within the block, every API call raises `CanceledError` once `event` is set (Go's cancelled context).

    Checked before each request and each retry is sent; a request already on the wire completes. The manager
    runs leader-only runnables inside one that it sets when leadership is lost; threads they start inherit it
    only through `contextvars.copy_context()` (as `Controller` does for its workers).
    """
    token = _cancellations.set((*_cancellations.get(), event))
    try:
        yield
    finally:
        _cancellations.reset(token)


def cancelled() -> bool:
    """Whether the work running on this thread was cancelled (see `cancellable`)."""
    return any(event.is_set() for event in _cancellations.get())


def check_call() -> None:
    """Raise before a request is sent: `CanceledError` when cancelled, `DeadlineExceededError` when out of time."""
    if cancelled():
        raise CanceledError("the caller's work was cancelled (leadership lost?) before the request was sent")
    remaining = remaining_time()
    if remaining is not None and remaining <= 0:
        raise DeadlineExceededError("the caller's deadline passed before the request was sent")


@dataclass
class RESTConfig:
    """Where the API server is and how to authenticate: a thin wrapper over `kubernetes.client.Configuration`.

    `qps`/`burst`: client-side token bucket; `qps <= 0` disables it (the default — rely on API Priority and
    Fairness). `timeout`: the budget in seconds of one ordinary (non-watch) request, its retries included (kubectl's
    `--request-timeout`). `connect_timeout`: seconds for each connection's TCP connect and TLS handshake.
    `retry_timeouts`: whether an attempt that timed out is tried again (False: a command-line tool reports a
    silent server after one deadline rather than five).
    """

    configuration: Any
    qps: float = -1.0
    burst: int = 0
    timeout: float = DEFAULT_TIMEOUT
    user_agent: str = USER_AGENT
    max_retries: int = 5
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    retry_timeouts: bool = True
    # How the configuration was loaded, so another process can load it the same way (and refresh tokens).
    loader: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def host(self) -> str:
        return str(self.configuration.host).rstrip("/")

    def portable(self) -> dict[str, Any]:
        """A JSON-able form for a child process (`from_portable`): the loader when known, else the settings.

        It carries credentials: hand it over a pipe, never argv or the environment.
        """
        options = {"qps": self.qps, "burst": self.burst, "timeout": self.timeout, "user_agent": self.user_agent,
                   "max_retries": self.max_retries, "connect_timeout": self.connect_timeout,
                   "retry_timeouts": self.retry_timeouts}  # fmt: skip
        if self.loader is not None:
            return {"loader": self.loader, "options": options}
        settings = {name: getattr(self.configuration, name, None) for name in _PORTABLE_SETTINGS}
        return {"configuration": settings, "options": options}

    @classmethod
    def from_portable(cls, portable: Mapping[str, Any]) -> RESTConfig:
        """The inverse of `portable()`; raises ValueError naming what is missing or unknown."""
        options = dict(portable.get("options") or {})
        loader = portable.get("loader")
        if loader is not None:
            if loader.get("in_cluster"):
                return cls.in_cluster(**options)
            return cls.from_kubeconfig(loader.get("kubeconfig"), loader.get("context"), **options)
        settings = portable.get("configuration")
        if not isinstance(settings, Mapping) or not settings.get("host"):
            raise ValueError("a portable REST config needs either 'loader' or 'configuration' with a 'host'")
        unknown = sorted(set(settings) - set(_PORTABLE_SETTINGS))
        if unknown:
            raise ValueError(f"unknown REST configuration settings: {', '.join(unknown)}")
        from kubernetes import client  # noqa: PLC0415

        configuration = client.Configuration()
        for name, value in settings.items():
            setattr(configuration, name, value)
        return cls(configuration, **options)

    @classmethod
    def from_kubeconfig(cls, path: str | None = None, context: str | None = None, **options: Any) -> RESTConfig:
        """Load a kubeconfig file (default: `$KUBECONFIG`, then `~/.kube/config`); `ConfigLoadError` naming the
        file when it is missing, unreadable, not a kubeconfig, or lacks the context."""
        from kubernetes import client, config  # noqa: PLC0415 - the official client is slow to import

        configuration = client.Configuration()
        named = path or os.environ.get("KUBECONFIG") or "~/.kube/config"
        if (path or os.environ.get("KUBECONFIG")) and not any(os.path.exists(p) for p in named.split(os.pathsep)):
            raise ConfigLoadError(f'error loading config file "{named}": no such file')
        try:
            config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=path, context=context, client_configuration=configuration
            )
        except Exception as exc:  # the loader raises many unrelated types (ConfigException, OSError, YAMLError, …)
            raise ConfigLoadError(f'error loading config file "{named}": {_loader_message(exc)}') from exc
        return cls(configuration, loader={"kubeconfig": path, "context": context}, **options)

    @classmethod
    def in_cluster(cls, **options: Any) -> RESTConfig:
        """The pod's ServiceAccount credentials (token re-read as it rotates); `ConfigLoadError` when absent."""
        from kubernetes import client, config  # noqa: PLC0415

        configuration = client.Configuration()
        try:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except Exception as exc:  # ConfigException or OSError from the mounted files, whichever failed
            raise ConfigLoadError(f"error loading the in-cluster configuration: {_loader_message(exc)}") from exc
        return cls(configuration, loader={"in_cluster": True}, **options)

    @classmethod
    def load(cls, kubeconfig: str | None = None, context: str | None = None, **options: Any) -> RESTConfig:
        """controller-runtime's `GetConfig` order: the given kubeconfig, `$KUBECONFIG`, in-cluster, `~/.kube/config`."""
        if kubeconfig or os.environ.get("KUBECONFIG"):
            return cls.from_kubeconfig(kubeconfig, context, **options)
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return cls.in_cluster(**options)
        return cls.from_kubeconfig(None, context, **options)


def _loader_message(exc: BaseException) -> str:
    """The loader's failure in one line: which of its many exception types, and what it said."""
    if isinstance(exc, UnicodeDecodeError):
        return f"not a text file (byte 0x{exc.object[exc.start]:02x} at offset {exc.start} is not UTF-8)"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else f"{text[:297]}..."


@dataclass
class Response:
    """A finished (non-streaming) response."""

    status: int
    headers: Mapping[str, str]
    data: bytes = field(repr=False)


class _TokenBucket:
    """Blocking token bucket (client-go's flowcontrol): waits for a token instead of failing."""

    def __init__(self, qps: float, burst: int) -> None:
        self._rate = qps
        self._capacity = max(1, burst)
        self._tokens = float(self._capacity)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self._capacity, self._tokens + (now - self._last) * self._rate)
            self._last = now
            self._tokens -= 1
            wait = -self._tokens / self._rate if self._tokens < 0 else 0.0
        if wait > 0:
            remaining = remaining_time()
            if remaining is not None and wait > remaining:
                raise DeadlineExceededError(f"client-side rate limit: next token in {wait:.2f}s, deadline first")
            time.sleep(wait)


@dataclass(frozen=True, slots=True)
class _Call:
    method: str
    url: str
    path: str
    body: bytes | None
    headers: dict[str, str]
    stream: bool


class _RetryableError(Exception):
    """Internal: an attempt failed in a retryable way; carries the failure and a minimum wait."""

    def __init__(self, cause: BaseException, wait: float = 0.0) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.wait = wait


class Transport:
    """Sends requests to one API server; thread-safe, pooled, with retries and metrics."""

    def __init__(self, config: RESTConfig, *, on_warning: Callable[[str], None] | None = None) -> None:
        from kubernetes.client import rest  # noqa: PLC0415

        self.config = config
        self._on_warning = on_warning
        self._warnings = RateLimitedLog(_log, interval=WARNING_INTERVAL)
        configuration = config.configuration
        if configuration.connection_pool_maxsize is None or configuration.connection_pool_maxsize < 16:
            configuration.connection_pool_maxsize = 16
        self._pool: urllib3.PoolManager = rest.RESTClientObject(configuration).pool_manager
        self._host = config.host
        self._metric_host = urlsplit(self._host).netloc
        self._bucket = _TokenBucket(config.qps, config.burst) if config.qps > 0 else None
        self._requests: dict[tuple[str, str], Any] = {}
        self._durations: dict[str, Any] = {}
        self._retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(config.max_retries),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(_RetryableError),
            reraise=True,
            sleep=self._sleep,
        )

    # ----------------------------------------------------------------------------------------- helpers

    def _headers(self, accept: str, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": self.config.user_agent}
        if content_type:
            headers["Content-Type"] = content_type
        configuration = self.config.configuration
        token = configuration.get_api_key_with_prefix("BearerToken", alias="authorization")
        if token:
            headers["Authorization"] = token if token.lower().startswith("bearer ") else f"Bearer {token}"
        elif configuration.username and configuration.password:
            headers["Authorization"] = configuration.get_basic_auth_token()
        return headers

    @staticmethod
    def _wait(state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        floor = exc.wait if isinstance(exc, _RetryableError) else 0.0
        backoff = min(5.0, 0.2 * 2 ** (state.attempt_number - 1)) * (0.5 + random.random() / 2)  # noqa: S311
        wait: float = max(floor, backoff)
        remaining = remaining_time()
        if remaining is not None and wait >= remaining:
            # Sleeping past the deadline would only turn a retryable failure into a late one.
            raise (
                exc.cause
                if isinstance(exc, _RetryableError)
                else DeadlineExceededError("deadline passed while retrying")
            )
        return wait

    @staticmethod
    def _sleep(seconds: float) -> None:
        time.sleep(seconds)

    def _timeout(self, read_timeout: float | None) -> urllib3.Timeout:
        """One attempt's timeouts: the connection within `connect_timeout`, all of it within the time left."""
        check_call()
        connect = self.config.connect_timeout
        remaining = remaining_time()
        if remaining is not None:
            connect = min(connect, remaining)
        if read_timeout is not None:  # a watch: each read is bounded, never the stream as a whole
            return urllib3.Timeout(connect=connect, read=read_timeout)
        return urllib3.Timeout(total=remaining, connect=connect)

    def _observe(self, method: str, code: str, began: float) -> None:
        key = (code, method)
        counter = self._requests.get(key)
        if counter is None:
            counter = self._requests[key] = metrics.REST_CLIENT_REQUESTS.labels(code, method, self._metric_host)
        counter.inc()
        histogram = self._durations.get(method)
        if histogram is None:
            histogram = self._durations[method] = metrics.REST_CLIENT_REQUEST_DURATION.labels(method, self._metric_host)
        histogram.observe(time.monotonic() - began)

    # ---------------------------------------------------------------------------------------- requests

    def url(self, path: str, params: Mapping[str, str] | None = None) -> str:
        query = urlencode({k: v for k, v in params.items() if v is not None}) if params else ""
        return f"{self._host}{path}{'?' + query if query else ''}"

    def _attempt(self, call: _Call, timeout: urllib3.Timeout) -> urllib3.BaseHTTPResponse:
        method, path, stream = call.method, call.path, call.stream
        if self._bucket:
            self._bucket.acquire()
            check_call()  # the wait may have outlasted the caller's leadership or deadline
        began = time.monotonic()
        try:
            response = self._pool.request(
                method, call.url, body=call.body, headers=call.headers, timeout=timeout, retries=False,
                preload_content=not stream, redirect=False,
            )  # fmt: skip
        except (NewConnectionError, ConnectTimeoutError) as exc:
            self._observe(method, "<error>", began)
            if _timed_out(exc) and not self.config.retry_timeouts:
                raise
            raise _RetryableError(exc) from exc  # nothing was sent: safe for every verb
        except (ProtocolError, ReadTimeoutError) as exc:
            self._observe(method, "<error>", began)
            if isinstance(exc, ReadTimeoutError) and not self.config.retry_timeouts:
                raise
            if method in IDEMPOTENT:
                raise _RetryableError(exc) from exc
            raise
        self._observe(method, str(response.status), began)
        if "Warning" in response.headers:
            self._warned(call, response.headers.getlist("Warning"))
        status = response.status
        if status < 400:
            return response
        data = response.read() if stream else response.data
        if stream:
            response.release_conn()
        retry_after = _retry_after(response.headers.get("Retry-After"))
        error = error_from_response(status, data, method=method, path=path, retry_after=retry_after)
        if status == 429 or (status in RETRYABLE_5XX and method in IDEMPOTENT):
            raise _RetryableError(error, wait=retry_after if retry_after is not None else 1.0 if status == 429 else 0.0)
        raise error

    def _warned(self, call: _Call, headers: list[str]) -> None:
        for text in warning_texts(headers):
            if self._on_warning is not None:
                self._on_warning(text)
            self._warnings.warning("Warning: %s", text, key=text, extra={"method": call.method, "path": call.path})

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = "application/json",
        timeout: float | None = None,
    ) -> Response:
        """Send a request and read the whole answer; raises a typed `APIStatusError` on 4xx/5xx, `UnreachableError`
        when the server cannot be reached or does not answer within `timeout` (default: `RESTConfig.timeout`, a
        budget for the request and its retries; `<= 0`: none but the caller's `deadline()`)."""
        call = _Call(method, self.url(path, params), path, body, self._headers(accept, content_type), stream=False)
        budget = timeout if timeout is not None else self.config.timeout
        with deadline(budget if budget > 0 else None):
            response = self._send(call, lambda: self._timeout(None), budget if budget > 0 else None)
        return Response(response.status, response.headers, response.data)

    def _send(
        self, call: _Call, timeout: Callable[[], urllib3.Timeout], budget: float | None
    ) -> urllib3.BaseHTTPResponse:
        """Attempt `call` under the retry policy; surface the last failure itself, not a retry wrapper — an
        `UnreachableError` when it was the connection's."""
        failures: list[HTTPError] = []

        def attempt() -> urllib3.BaseHTTPResponse:
            try:
                return self._attempt(call, timeout())
            except _RetryableError as failure:
                if isinstance(failure.cause, HTTPError):
                    failures.append(failure.cause)
                raise
            except HTTPError as exc:
                failures.append(exc)
                raise

        try:
            return self._retrying(attempt)
        except _RetryableError as failure:
            cause = failure.cause
        except HTTPError as exc:
            cause = exc
        except DeadlineExceededError:
            if not failures:  # out of time before the server was ever asked: the caller's deadline, as it was
                raise
            cause = failures[-1]
        if isinstance(cause, HTTPError):
            raise self._unreachable(call, cause, budget) from cause
        raise cause

    def _unreachable(self, call: _Call, cause: HTTPError, budget: float | None) -> UnreachableError:
        """The failure of a connection as an `UnreachableError`: for a timeout, the deadline that passed — the
        request's budget once too little of it was left for another connection, else the connection's."""
        detail = _connection_detail(cause)
        if not _timed_out(cause):
            return UnreachableError(self._host, detail, method=call.method, path=call.path)
        remaining = remaining_time()
        exhausted = budget is not None and (remaining is None or remaining < self.config.connect_timeout)
        limit = budget if exhausted and budget is not None else self.config.connect_timeout
        return UnreachableError(self._host, detail, deadline=limit, method=call.method, path=call.path)

    def stream(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
        accept: str = "application/json",
    ) -> urllib3.BaseHTTPResponse:
        """Open a streaming response (watches); the caller reads it and must `release_conn()`/`close()` it.

        `read_timeout` bounds each socket read — a silent stream past it raises `ReadTimeoutError`.
        """
        call = _Call(method, self.url(path, params), path, None, self._headers(accept, None), stream=True)
        return self._send(call, lambda: self._timeout(read_timeout), None)

    def close(self) -> None:
        self._pool.clear()


def warning_texts(headers: list[str]) -> list[str]:
    """The texts of the `299` warnings in `Warning` header values (RFC 7234: `299 - "text"`, several per value
    separated by commas); client-go handles only code 299, which the API server sends."""
    texts: list[str] = []
    for value in headers:
        for code, _agent, text in _WARNING.findall(value):
            if code == "299":
                texts.append(re.sub(r"\\(.)", r"\1", text))
    return texts


def _timed_out(error: HTTPError) -> bool:
    """Whether a deadline passed (urllib3's NewConnectionError, a refusal, is a ConnectTimeoutError by descent)."""
    return isinstance(error, (ConnectTimeoutError, ReadTimeoutError)) and not isinstance(error, NewConnectionError)


def _connection_detail(cause: HTTPError) -> str:
    """What urllib3 saw, without its pool's repr: "connection refused", "read timed out (read timeout=1)", …"""
    reason = getattr(cause, "reason", None)
    text = str(reason if isinstance(reason, BaseException) else cause)
    if "Connection refused" in text:
        return "connection refused"
    if _timed_out(cause):
        return "no answer (TCP connect, TLS handshake or response)"
    return text.split(": ", 1)[-1] if "Pool(" in text else text


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "WARNING_INTERVAL",
    "APIStatusError",
    "ConfigLoadError",
    "RESTConfig",
    "Response",
    "Transport",
    "UnreachableError",
    "cancellable",
    "cancelled",
    "check_call",
    "deadline",
    "remaining_time",
    "warning_texts",
]
