"""The real node's configuration, as pure functions of its directory: containerd keeps everything under it and
asks for no capability root lacks here; the pods' range is one the address allocator never hands out."""

from __future__ import annotations

import ipaddress
import tomllib
from pathlib import Path

import pytest

from ballast.runtime.envtest import network
from ballast.runtime.envtest.hostguard import CGROUP_ROOT
from ballast.runtime.envtest.images import Image, NodeImages
from ballast.runtime.envtest.realnode import BRIDGE, POD_CIDR, cni_config, containerd_config, kubelet_config

LAB = Path("/tmp/lab")
IMAGES = NodeImages(*(Image(f"localhost/ballast/{n}:1", LAB / f"{n}.tar") for n in ("pause", "busybox", "loadgen")))


def test_containerd_keeps_its_state_under_the_lab_and_pins_the_local_pause_image() -> None:
    config = tomllib.loads(containerd_config(LAB, IMAGES))
    assert config["root"].startswith(str(LAB))
    assert config["state"].startswith(str(LAB))
    runtime = config["plugins"]["io.containerd.cri.v1.runtime"]
    assert runtime["restrict_oom_score_adj"] is True  # root has no CAP_SYS_RESOURCE here
    assert runtime["netns_mounts_under_state_dir"] is True  # never /run/netns
    assert runtime["containerd"]["runtimes"]["runc"]["options"]["Root"] == f"{LAB}/runc"
    images = config["plugins"]["io.containerd.cri.v1.images"]
    assert images["pinned_images"]["sandbox"] == "localhost/ballast/pause:1"


def test_pods_get_addresses_the_allocator_never_hands_out() -> None:
    ipam = cni_config(LAB)["plugins"][0]["ipam"]
    assert ipam["ranges"] == [[{"subnet": "198.51.100.192/26", "gateway": "198.51.100.193"}]]
    assert POD_CIDR.subnet_of(network.TEST_NETWORK)  # type: ignore[arg-type]
    last = ipaddress.IPv4Address(str(network.TEST_NETWORK[network.LAST_BACKEND_HOST]))
    assert all(ipaddress.IPv4Address(str(address)) > last for address in POD_CIDR)


def test_the_kubelet_runs_on_cgroup_v1_under_its_own_root_and_never_collects_the_imported_images() -> None:
    config = kubelet_config(LAB, "198.51.100.20", 10250, 10248, LAB / "ca.crt")
    assert config["failCgroupV1"] is False
    assert config["cgroupRoot"] == CGROUP_ROOT
    assert config["imageGCHighThresholdPercent"] == 100
    assert config["authentication"]["anonymous"]["enabled"] is False
    assert config["authorization"]["mode"] == "Webhook"
    assert config["containerRuntimeEndpoint"] == f"unix://{LAB}/containerd/containerd.sock"


def test_the_private_network_check_ignores_the_real_nodes_bridge_and_veths(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "interfaces", lambda: ["lo"])
    only_lo = network.in_private_network()  # whether TEST-NET-2 binds here decides the rest
    monkeypatch.setattr(network, "interfaces", lambda: ["lo", BRIDGE, "veth1234abcd"])
    assert network.in_private_network() == only_lo
    monkeypatch.setattr(network, "interfaces", lambda: ["lo", "eth0"])
    assert network.in_private_network() is False
