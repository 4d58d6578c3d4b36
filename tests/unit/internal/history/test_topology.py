"""Sentinel and Cluster store URLs: what they mean, and refusals that name the wrong part (difference 66)."""

from __future__ import annotations

import pytest

from ballast.internal.history import ClusterHistoryStore, RedisHistoryStore, StoreURLError, open_store
from ballast.internal.history.topology import client_tls, parse_cluster_url, parse_sentinel_url


def test_sentinel_url_names_sentinels_service_db_and_both_credentials() -> None:
    target = parse_sentinel_url(
        "redis+sentinel://app:s%40cret@s1:26380,s2,[::1]:26381/mymaster?db=2&sentinel_password=sp&sentinel_username=su"
    )
    assert target.endpoints.hosts == (("s1", 26380), ("s2", 26379), ("::1", 26381))
    assert target.service == "mymaster"
    assert target.db == 2
    assert (target.endpoints.username, target.endpoints.password) == ("app", "s@cret")
    assert (target.sentinel_username, target.sentinel_password) == ("su", "sp")
    assert client_tls(target.endpoints) == {}


def test_tls_schemes_carry_ssl_options() -> None:
    target = parse_sentinel_url("rediss+sentinel://s1/m?ssl_ca_certs=/ca.crt&ssl_cert_reqs=required")
    assert client_tls(target.endpoints) == {"ssl": True, "ssl_ca_certs": "/ca.crt", "ssl_cert_reqs": "required"}
    cluster = parse_cluster_url("REDISS+CLUSTER://n1:7000,n2")
    assert cluster.hosts == (("n1", 7000), ("n2", 6379))
    assert client_tls(cluster) == {"ssl": True}


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("redis+sentinel://s1:26379", "must name the Sentinel service"),
        ("redis+sentinel://s1:26379/", "must name the Sentinel service"),
        ("redis+sentinel://s1:26379/a/b", "must name the Sentinel service"),
        ("redis+sentinel://s1:notaport/m", "port 'notaport' of host 's1'"),
        ("redis+sentinel://s1:70000/m", "port '70000'"),
        ("redis+sentinel://s1,,s2/m", "an empty host"),
        ("redis+sentinel://s1/m?db=x", "db 'x' is not a number"),
        ("redis+sentinel://s1/m?sentinel_pasword=x", "unknown option 'sentinel_pasword'"),
        ("redis+sentinel://s1/m?db=1&db=2", "option 'db' given twice"),
        ("redis+sentinel://s1/m?ssl_ca_certs=/ca", "TLS options need the rediss+sentinel scheme"),
        ("rediss+sentinel://s1/m?ssl_cert_reqs=maybe", "ssl_cert_reqs 'maybe'"),
        ("redis+cluster://n1:6379/3", "database '3' — a Redis Cluster has only database 0"),
        ("redis+cluster://n1/0?db=1", "unknown option 'db'"),
        ("redis+cluster://:7000", "has no name or address"),
        ("redis+cluster://[::1/", "a host is name:port or [address]:port"),
    ],
)
def test_malformed_urls_are_refused_naming_the_part(url: str, named: str) -> None:
    with pytest.raises(StoreURLError, match=named.replace("[", r"\[").replace("+", r"\+")):
        open_store(url)


def test_refusals_never_echo_a_password() -> None:
    with pytest.raises(StoreURLError) as caught:
        open_store("redis+sentinel://user:hunter2@s1:bad/m")
    assert "hunter2" not in str(caught.value)
    with pytest.raises(StoreURLError) as caught:
        open_store("redis+cluster://user:hunter2@n1/5")
    assert "hunter2" not in str(caught.value)


def test_schemes_open_the_right_backend_without_connecting() -> None:
    sentinel = open_store("redis+sentinel://127.0.0.1:1/m", timeout=0.2)
    assert isinstance(sentinel, RedisHistoryStore)
    assert sentinel.min_replicas == 1  # behind Sentinel a cycle waits for one replica by default
    assert open_store("redis+sentinel://127.0.0.1:1/m", min_replicas=0).min_replicas == 0  # type: ignore[attr-defined]
    cluster = open_store("redis+cluster://127.0.0.1:1", timeout=0.2)
    assert isinstance(cluster, ClusterHistoryStore)
    assert cluster.primary() is None  # nothing sent yet
    plain = open_store("redis://127.0.0.1:1/0")
    assert isinstance(plain, RedisHistoryStore)
    assert plain.min_replicas == 0


def test_min_replicas_is_refused_where_it_cannot_mean_anything(tmp_path: object) -> None:
    with pytest.raises(StoreURLError, match="an SQLite store has no replicas"):
        open_store("sqlite:///h.db", min_replicas=1)
    with pytest.raises(StoreURLError, match="must be 0 or more"):
        open_store("redis://127.0.0.1:1/0", min_replicas=-1)
