"""`make test-load`: the operator at scale on a mini-cluster of 20 kwok Nodes (room for 22,000 pods), in the
private test network. Not part of `make test`: it takes about 20 minutes and its figures go to RELIABILITY.md."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.runtime.envtest import AssetsNotFoundError, BuildError, MiniCluster, in_private_network
from ballast.runtime.envtest.pytest_plugin import unavailable
from tests.e2e import reliability
from tests.e2e.figures import FIGURES_DIR
from tests.paths import CRD_DIR

NODES = 20
PODS_PER_NODE = 1100


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.load)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """RELIABILITY.md's table follows the figures this run recorded."""
    if FIGURES_DIR.is_dir() and session.testscollected and not session.config.option.collectonly:
        reliability.main([])


@pytest.fixture(scope="module")
def cluster() -> Iterator[MiniCluster]:
    """20 fake Nodes of 64 CPUs, 256 GiB and 1,100 pods each; the product's CRDs installed."""
    if not in_private_network():
        unavailable("the load suite needs the private test network: run it under `ballast-envtest netns`")
    try:
        minicluster = MiniCluster(
            nodes=NODES, node_cpu="64", node_memory="256Gi", node_pods=str(PODS_PER_NODE), crd_paths=[CRD_DIR]
        )
        minicluster.start()
    except (AssetsNotFoundError, BuildError) as exc:
        unavailable(f"the mini-cluster's binaries are missing: {exc}")
    yield minicluster
    minicluster.stop()
