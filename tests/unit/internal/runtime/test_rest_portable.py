"""RESTConfig's portable form: what a child process gets to reach the same API server as its parent."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml
from kubernetes import client

from ballast.runtime import RESTConfig


def test_settings_round_trip_through_json() -> None:
    configuration = client.Configuration()
    configuration.host = "https://127.0.0.1:6443"
    configuration.ssl_ca_cert = "/tmp/ca.crt"
    configuration.api_key = {"authorization": "Bearer s3cret"}
    configuration.tls_server_name = "kubernetes"
    original = RESTConfig(configuration, qps=20, burst=40, timeout=7.5)
    copy = RESTConfig.from_portable(orjson.loads(orjson.dumps(original.portable())))
    assert copy.host == "https://127.0.0.1:6443"
    assert copy.configuration.ssl_ca_cert == "/tmp/ca.crt"
    assert copy.configuration.api_key == {"authorization": "Bearer s3cret"}
    assert copy.configuration.tls_server_name == "kubernetes"
    assert (copy.qps, copy.burst, copy.timeout) == (20, 40, 7.5)


def test_a_kubeconfig_is_loaded_again_rather_than_copied(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    clusters = [{"name": n, "cluster": {"server": f"https://127.0.0.1:{port}"}} for n, port in (("a", 1), ("b", 2))]
    contexts = [{"name": n, "context": {"cluster": n, "user": "u"}} for n in ("a", "b")]
    users = [{"name": "u", "user": {"token": "t"}}]
    document = {"apiVersion": "v1", "kind": "Config", "current-context": "a", "clusters": clusters,
                "contexts": contexts, "users": users}  # fmt: skip
    kubeconfig.write_text(yaml.safe_dump(document))
    original = RESTConfig.from_kubeconfig(str(kubeconfig), context="b")
    portable = original.portable()
    assert portable["loader"] == {"kubeconfig": str(kubeconfig), "context": "b"}
    assert "configuration" not in portable  # the token is re-read from the file, not carried
    assert RESTConfig.from_portable(portable).host == "https://127.0.0.1:2"


@pytest.mark.parametrize(
    ("portable", "message"),
    [
        ({}, "needs either 'loader' or 'configuration' with a 'host'"),
        ({"configuration": {"host": ""}}, "with a 'host'"),
        ({"configuration": {"host": "https://x", "colour": "blue"}}, "unknown REST configuration settings: colour"),
    ],
)
def test_bad_portable_configs_are_named(portable: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RESTConfig.from_portable(portable)
