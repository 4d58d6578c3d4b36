"""Sentinel and Cluster store URLs: parsed here, refused naming the part that is wrong, opened with redis-py's own
Sentinel and RedisCluster clients (no hand-written topology discovery; docs/design.md, difference 66).

- `redis+sentinel://[user:password@]host1:26379,host2:26379/<service>[?db=0&sentinel_password=…]`, and
  `rediss+sentinel://…` for TLS to the sentinels and the data nodes alike. `user:password` are the data nodes'
  credentials; `sentinel_username`/`sentinel_password` the sentinels' own (none when left out).
- `redis+cluster://[user:password@]host1:6379,host2:6379[/0]` and `rediss+cluster://…`: any reachable nodes seed
  the slot map. A database other than 0 is refused (Cluster has none).

TLS options for both, in the query: `ssl_ca_certs`, `ssl_certfile`, `ssl_keyfile`, `ssl_cert_reqs` (`required`,
`optional` or `none`). Any other option is refused, so a typo never silently means "default".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import SplitResult, parse_qsl, unquote, urlsplit

from .errors import StoreURLError

SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
DEFAULT_SENTINEL_PORT = 26379
DEFAULT_CLUSTER_PORT = 6379
_TLS_OPTIONS = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile", "ssl_cert_reqs")
_CERT_REQS = ("required", "optional", "none")


@dataclass(frozen=True, slots=True)
class Endpoints:
    """What a Sentinel or Cluster URL says: where, who, and how (TLS)."""

    scheme: str
    hosts: tuple[tuple[str, int], ...]
    username: str | None = None
    password: str | None = None
    tls: dict[str, str] = field(default_factory=dict)
    """Empty without TLS; else redis-py's `ssl=True` plus the `ssl_*` options given."""

    def redacted(self) -> str:
        """The URL's hosts without credentials, for messages and logs."""
        return ",".join(f"{host}:{port}" for host, port in self.hosts)


@dataclass(frozen=True, slots=True)
class SentinelTarget:
    """A parsed `redis+sentinel://` URL."""

    endpoints: Endpoints
    service: str
    db: int = 0
    sentinel_username: str | None = None
    sentinel_password: str | None = None


def _split(url: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError as exc:  # e.g. an unbalanced [IPv6] bracket
        raise StoreURLError(f"store URL {_shown(url)!r}: {exc}; a host is name:port or [address]:port") from None


def _shown(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.rsplit('@', 1)[-1]}"  # never echo credentials


def _hosts(url: str, netloc: str, default_port: int) -> tuple[tuple[str, int], ...]:
    hosts: list[tuple[str, int]] = []
    for item in netloc.rsplit("@", 1)[-1].split(","):
        if not item:
            raise StoreURLError(f"store URL {_shown(url)!r}: an empty host in the host list (host1:port,host2:port)")
        if item.startswith("["):  # [IPv6]:port
            host, _, rest = item[1:].partition("]")
            port_text = rest.removeprefix(":")
            if rest and not rest.startswith(":"):
                raise StoreURLError(f"store URL {_shown(url)!r}: host {item!r} is not [address]:port")
        else:
            host, _, port_text = item.partition(":")
        if not host:
            raise StoreURLError(f"store URL {_shown(url)!r}: host {item!r} has no name or address")
        port = default_port
        if port_text:
            if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                raise StoreURLError(f"store URL {_shown(url)!r}: port {port_text!r} of host {host!r} is not 1-65535")
            port = int(port_text)
        hosts.append((host, port))
    return tuple(hosts)


def _credentials(netloc: str) -> tuple[str | None, str | None]:
    if "@" not in netloc:
        return None, None
    userinfo = netloc.rsplit("@", 1)[0]
    user, colon, password = userinfo.partition(":")
    return (unquote(user) or None), (unquote(password) if colon else None)


def _options(url: str, query: str, allowed: tuple[str, ...]) -> dict[str, str]:
    options: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True, strict_parsing=False):
        if name not in allowed:
            raise StoreURLError(f"store URL {_shown(url)!r}: unknown option {name!r}; known: {', '.join(allowed)}")
        if name in options:
            raise StoreURLError(f"store URL {_shown(url)!r}: option {name!r} given twice")
        options[name] = value
    if options.get("ssl_cert_reqs", "required") not in _CERT_REQS:
        wanted = ", ".join(_CERT_REQS)
        raise StoreURLError(
            f"store URL {_shown(url)!r}: ssl_cert_reqs {options['ssl_cert_reqs']!r} is not one of {wanted}"
        )
    return options


def _endpoints(url: str, default_port: int, options: dict[str, str]) -> Endpoints:
    parts = _split(url)
    if parts.fragment:
        raise StoreURLError(f"store URL {_shown(url)!r}: a fragment (#…) means nothing here")
    scheme = parts.scheme.lower()
    tls = {name: options[name] for name in _TLS_OPTIONS if name in options}
    if tls and not scheme.startswith("rediss+"):
        raise StoreURLError(
            f"store URL {_shown(url)!r}: TLS options need the {scheme.replace('redis', 'rediss', 1)} scheme"
        )
    if scheme.startswith("rediss+"):
        tls = {"ssl": "true", **tls}
    username, password = _credentials(parts.netloc)
    return Endpoints(scheme, _hosts(url, parts.netloc, default_port), username, password, tls)


def parse_sentinel_url(url: str) -> SentinelTarget:
    """Parse `redis+sentinel://…/<service>`; raises `StoreURLError` naming the part that is wrong."""
    scheme = url.split("://", 1)[0].lower()
    if scheme not in SENTINEL_SCHEMES or "://" not in url:
        raise StoreURLError(f"store URL {_shown(url)!r} is not a {' or '.join(SENTINEL_SCHEMES)} URL")
    parts = _split(url)
    options = _options(url, parts.query, ("db", "sentinel_username", "sentinel_password", *_TLS_OPTIONS))
    endpoints = _endpoints(url, DEFAULT_SENTINEL_PORT, options)
    service = unquote(parts.path.strip("/"))
    if not service or "/" in service:
        raise StoreURLError(
            f"store URL {_shown(url)!r}: the path must name the Sentinel service (the master name), e.g. /mymaster"
        )
    db_text = options.get("db", "0")
    if not db_text.isdigit():
        raise StoreURLError(f"store URL {_shown(url)!r}: db {db_text!r} is not a number")
    return SentinelTarget(
        endpoints,
        service,
        int(db_text),
        options.get("sentinel_username") or None,
        options.get("sentinel_password") or None,
    )


def parse_cluster_url(url: str) -> Endpoints:
    """Parse `redis+cluster://host1:6379,…[/0]`; raises `StoreURLError` naming the part that is wrong."""
    scheme = url.split("://", 1)[0].lower()
    if scheme not in CLUSTER_SCHEMES or "://" not in url:
        raise StoreURLError(f"store URL {_shown(url)!r} is not a {' or '.join(CLUSTER_SCHEMES)} URL")
    parts = _split(url)
    database = parts.path.strip("/")
    if database not in ("", "0"):
        raise StoreURLError(f"store URL {_shown(url)!r}: database {database!r} — a Redis Cluster has only database 0")
    return _endpoints(url, DEFAULT_CLUSTER_PORT, _options(url, parts.query, _TLS_OPTIONS))


def client_tls(endpoints: Endpoints) -> dict[str, object]:
    """redis-py connection keyword arguments for the URL's TLS options (empty without TLS)."""
    if not endpoints.tls:
        return {}
    return {name: (True if name == "ssl" else value) for name, value in endpoints.tls.items()}
