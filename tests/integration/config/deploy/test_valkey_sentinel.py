"""The Sentinel-managed Valkey of the chart (`valkey.sentinel.enabled`) and of kustomize (the Component
config/valkey-sentinel): rendered, and the valkey.conf and sentinel.conf they render run by local redis-server
processes (no image registry here), which form a working group that fails over (docs/design.md, difference 67)."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.internal.history import Cycle, Sample, SeriesKey, StoreUnavailableError, open_store
from ballast.runtime.envtest import find_assets
from ballast.runtime.envtest.errors import AssetsNotFoundError
from ballast.runtime.envtest.pytest_plugin import unavailable
from tests.integration.config.deploy.conftest import REPO, find, one, render
from tests.integration.redis_server import redis_server_or_skip
from tests.integration.redis_topology import SentinelGroup

SETTINGS = {"valkey.sentinel.enabled": "true", "valkey.sentinel.downAfterMilliseconds": "1000"}
PRIMARY_HOST = "ballast-valkey-0.ballast-valkey.ballast-system.svc"
KEY = SeriesKey("0123456789abcdef", "app", "cpu")


@pytest.fixture(scope="module")
def documents(helm: Path) -> list[dict[str, Any]]:
    return render(helm, settings=SETTINGS)


def _kubectl() -> Path:
    try:
        return find_assets(None, build=False).binary("kubectl")
    except AssetsNotFoundError as exc:
        unavailable(f"no kubectl: {exc}")
        raise


@pytest.fixture(scope="module")
def kustomized(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """config/default with the Component config/valkey-sentinel, rendered by a real `kubectl kustomize`."""
    folder = tmp_path_factory.mktemp("overlay")
    overlay = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(REPO / "config" / "default", folder)],
        "components": [os.path.relpath(REPO / "config" / "valkey-sentinel", folder)],
    }
    (folder / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
    result = subprocess.run(
        [str(_kubectl()), "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(folder)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.mark.parametrize("renderer", ["chart", "kustomize"])
def test_sentinel_mode_renders_data_pods_sentinels_budgets_and_the_sentinel_url(
    renderer: str, request: pytest.FixtureRequest
) -> None:
    documents: list[dict[str, Any]] = request.getfixturevalue("documents" if renderer == "chart" else "kustomized")
    data = one(documents, "StatefulSet", "ballast-valkey")
    sentinels = one(documents, "StatefulSet", "ballast-valkey-sentinel")
    assert data["spec"]["replicas"] == 3
    assert data["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"  # each data pod keeps a volume
    assert sentinels["spec"]["replicas"] == 3
    assert "volumeClaimTemplates" not in sentinels["spec"]
    budgets = {d["metadata"]["name"]: d["spec"] for d in find(documents, "PodDisruptionBudget")}
    assert budgets["ballast-valkey"]["maxUnavailable"] == 1
    assert budgets["ballast-valkey-sentinel"]["maxUnavailable"] == 1
    sentinel_conf = one(documents, "ConfigMap", "ballast-valkey-sentinel")["data"]["sentinel.conf"]
    assert "sentinel announce-hostnames yes" in sentinel_conf
    assert "sentinel resolve-hostnames yes" in sentinel_conf
    args = one(documents, "Deployment", "ballast")["spec"]["template"]["spec"]["containers"][0]["args"]
    (store,) = [arg for arg in args if arg.startswith("--store=")]
    hosts = ",".join(f"ballast-valkey-sentinel-{i}.ballast-valkey-sentinel.ballast-system.svc:26379" for i in range(3))
    assert store == f"--store=redis+sentinel://{hosts}/ballast"
    assert data["spec"]["template"]["spec"]["containers"][0]["command"] == ["sh", "/etc/valkey/start.sh"]
    assert "--replicaof" in one(documents, "ConfigMap", "ballast-valkey")["data"]["start.sh"]
    for service in find(documents, "Service"):
        if service["metadata"]["name"].startswith("ballast-valkey"):
            assert service["spec"]["publishNotReadyAddresses"] is True  # names resolve before readiness


def test_the_default_keeps_one_valkey_and_a_redis_url(helm: Path) -> None:
    documents = render(helm)
    assert one(documents, "StatefulSet", "ballast-valkey")["spec"]["replicas"] == 1
    assert find(documents, "StatefulSet", "ballast-valkey-sentinel") == []
    args = one(documents, "Deployment", "ballast")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--store=redis://ballast-valkey:6379/0" in args


def _local_data_config(rendered: str) -> str:
    # the pod's port and volume are the test's (the flags RedisServer adds override them anyway)
    return rendered.replace("dir /data\n", "")


def _local_sentinel_config(rendered: str) -> Any:
    def config(port: int, primary_port: int, directory: Path) -> str:
        text = rendered.replace("port 26379", f"port {port}").replace("dir /data", f"dir {directory}")
        text = re.sub(rf"{re.escape(PRIMARY_HOST)} 6379", f"127.0.0.1 {primary_port}", text)
        assert f"127.0.0.1 {primary_port}" in text, "the rendered monitor line names the data StatefulSet's pod 0"
        # what start.sh appends (the pod's DNS name there; loopback here), and the test's own log and bind
        return text + f"sentinel announce-ip 127.0.0.1\nbind 127.0.0.1\nlogfile {directory / 'sentinel.log'}\n"

    return config


@pytest.fixture(params=["chart", "kustomize"])
def rendered_group(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SentinelGroup]:
    documents: list[dict[str, Any]] = request.getfixturevalue("documents" if request.param == "chart" else "kustomized")
    data_conf = one(documents, "ConfigMap", "ballast-valkey")["data"]["valkey.conf"]
    sentinel_conf = one(documents, "ConfigMap", "ballast-valkey-sentinel")["data"]["sentinel.conf"]
    group = SentinelGroup(
        redis_server_or_skip(),
        tmp_path,
        data_config=_local_data_config(data_conf),
        sentinel_config=_local_sentinel_config(sentinel_conf),
    )
    try:
        group.start()
        yield group
    finally:
        group.stop()


def test_the_rendered_configuration_forms_a_group_that_fails_over(rendered_group: SentinelGroup) -> None:
    old = rendered_group.primary_port()
    with open_store(rendered_group.url, timeout=1.0) as store:
        assert store.write_cycle(Cycle("metrics/1", 1_000, [Sample(KEY, 1)]))  # acknowledged by a replica
        rendered_group.server_on(old).kill()
        new = rendered_group.wait_for_new_primary(old)
        assert new != old
        # the sentinels may agree on the new primary a moment after it answers as one: retried, as the collector
        # retries a held cycle at its next poll
        deadline = time.monotonic() + 15
        while True:
            try:
                assert store.write_cycle(Cycle("metrics/2", 2_000, [Sample(KEY, 2)]))
                break
            except StoreUnavailableError:
                assert time.monotonic() < deadline, "no primary named by the sentinels 15 s after the promotion"
                time.sleep(0.2)
        assert store.read(KEY).values == (1, 2)


def test_the_chart_and_kustomize_render_the_same_sentinel_scripts_and_configuration(
    helm: Path, kustomized: list[dict[str, Any]]
) -> None:
    documents = render(helm, settings={"valkey.sentinel.enabled": "true"})  # the chart's defaults otherwise
    sentinel = "ballast-valkey-sentinel"
    assert one(kustomized, "ConfigMap", sentinel)["data"] == one(documents, "ConfigMap", sentinel)["data"]
    chart_start = one(documents, "ConfigMap", "ballast-valkey")["data"]["start.sh"]
    assert one(kustomized, "ConfigMap", "ballast-valkey")["data"]["start.sh"].strip() == chart_start.strip()
