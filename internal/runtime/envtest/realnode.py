"""One real Node beside kwok's fake ones: a kubelet and containerd running real containers in real cgroups.

    with MiniCluster(nodes=0, real_node=True, crd_paths=[...]) as cluster:
        node = cluster.real_node            # Ready; pods with nodeName=node.name run for real
        node.container_cgroup_file(pod, "app", "memory.limit_in_bytes")

The kubelet (built from `k8s.io/kubernetes` at the control plane's version) and containerd v2.4.2 with Debian's
runc and CNI plugins run inside the private test network beside the control plane. Pods get addresses from
`POD_CIDR`, which `network.allocate_address` never hands out, on a bridge of their own; the images are built
locally (`images`) and imported, never pulled. What a node changes on the machine itself — cgroups under
`hostguard.CGROUP_ROOT` in every hierarchy, mounts, `/run/containerd`, six kernel sysctls — is recorded and put
back by `hostguard.HostGuard`, which also makes the node one per machine.

Node-level figures (the Summary API's `node` section) are the whole machine's: assert on pods and containers.
On cgroup v1 the kernel OOM-kills the largest process of the container's memory cgroup, not every process.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import urllib3
import yaml

from . import network
from .errors import APIError, AssetsNotFoundError, EnvtestError
from .hostguard import CGROUP_MOUNT, CGROUP_ROOT, HostGuard, cgroup_hierarchies
from .images import NodeImages, find_node_images
from .nodebuild import find_node_tool
from .ports import suggest_port
from .process import ControlPlaneProcess
from .wait import poll_until

if TYPE_CHECKING:
    from .environment import Environment

POD_CIDR = ipaddress.ip_network("198.51.100.192/26")  # above network.LAST_BACKEND_HOST
BRIDGE = network.REAL_NODE_BRIDGE
RUNC = Path("/usr/sbin/runc")
CNI_BIN = Path("/usr/lib/cni")
LAB = Path(tempfile.gettempdir()) / "ballast-real-node"
DEFAULT_NAME = "real-node-0"
NODE_LABEL = "ballast.test/real-node"
READY_TIMEOUT = 90.0
DRAIN_TIMEOUT = 90.0


def require_host_tools() -> None:
    """Root, runc, the CNI plugins and busybox (Debian packages `hack/setup-real-node` installs)."""
    if os.geteuid() != 0:
        raise AssetsNotFoundError("a real node needs root (cgroups, mounts, network namespaces)")
    missing = [
        str(p) for p in (RUNC, CNI_BIN / "bridge", CNI_BIN / "host-local", CNI_BIN / "loopback") if not p.exists()
    ]
    if missing:
        raise AssetsNotFoundError(
            f"a real node needs {', '.join(missing)}: install Debian's runc and containernetworking-plugins "
            "(`make real-node-tools`)"
        )


def containerd_config(lab: Path, images: NodeImages) -> str:
    """containerd 2.x configuration (version 3): everything under `lab`, no registry, cgroupfs, no AppArmor."""
    return f"""version = 3
root = '{lab}/containerd/root'
state = '{lab}/containerd/state'
disabled_plugins = ['io.containerd.snapshotter.v1.btrfs', 'io.containerd.snapshotter.v1.zfs', \
'io.containerd.snapshotter.v1.devmapper', 'io.containerd.snapshotter.v1.erofs', 'io.containerd.differ.v1.erofs']
oom_score = 0

[grpc]
  address = '{lab}/containerd/containerd.sock'

[ttrpc]
  address = '{lab}/containerd/containerd.sock.ttrpc'

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '{images.pause.ref}'
  [plugins.'io.containerd.cri.v1.runtime']
    disable_apparmor = true
    # Without CAP_SYS_RESOURCE (as on these machines' root) a negative oom_score_adj fails every sandbox.
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = '{RUNC}'
          Root = '{lab}/runc'
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['{CNI_BIN}']
      conf_dir = '{lab}/cni/net.d'
      max_conf_num = 1
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
  [plugins.'io.containerd.internal.v1.opt']
    path = '{lab}/containerd/opt'
"""


def cni_config(lab: Path) -> dict[str, Any]:
    """A bridge with host-local addresses from POD_CIDR (the first one is the bridge's, the pods' gateway)."""
    gateway = str(POD_CIDR[1])
    return {
        "cniVersion": "1.0.0",
        "name": "ballast-real-node",
        "plugins": [
            {
                "type": "bridge",
                "bridge": BRIDGE,
                "isGateway": True,
                "ipMasq": False,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "dataDir": str(lab / "cni" / "ipam"),
                    "ranges": [[{"subnet": str(POD_CIDR), "gateway": gateway}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                },
            }
        ],
    }


def kubelet_config(lab: Path, node_ip: str, port: int, healthz_port: int, ca_file: Path) -> dict[str, Any]:
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": node_ip,
        "port": port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": healthz_port,
        "tlsCertFile": str(lab / "pki" / "kubelet.crt"),
        "tlsPrivateKeyFile": str(lab / "pki" / "kubelet.key"),
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca_file)},
        },
        "authorization": {"mode": "Webhook"},
        "containerRuntimeEndpoint": f"unix://{lab}/containerd/containerd.sock",
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": CGROUP_ROOT,
        "cgroupsPerQOS": True,
        "failCgroupV1": False,  # 1.37 refuses cgroup v1 hosts by default; these machines have no other
        "failSwapOn": False,
        "podLogsDir": str(lab / "pod-logs"),
        "resolvConf": "",
        "volumePluginDir": str(lab / "kubelet" / "volume-plugins"),
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "imagefs.available": "1%",
            "nodefs.inodesFree": "1%",
        },
        # The images were imported by hand and cannot be pulled again: never garbage-collect them.
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "maxPods": 30,
        "serializeImagePulls": False,
        "nodeStatusUpdateFrequency": "4s",
    }


class RealNode:
    """A kubelet + containerd Node named `name` on the control plane of `env` (started in private mode)."""

    def __init__(self, env: Environment, *, name: str = DEFAULT_NAME) -> None:
        self.env = env
        self.name = name
        self.lab = LAB
        self.guard = HostGuard()
        self.node_ip = ""
        self.images: NodeImages | None = None
        self.containerd: ControlPlaneProcess | None = None
        self.kubelet: ControlPlaneProcess | None = None
        self._routes_split = False
        self._held = False
        self.timings: dict[str, float] = {}

    # ----------------------------------------------------------------------------------------- lifecycle

    def start(self) -> None:
        began = time.monotonic()
        network.require_private_network()
        require_host_tools()
        kubelet = find_node_tool("kubelet", version=self.env.kubernetes_version)
        containerd = find_node_tool("containerd")
        self.images = find_node_images()
        self.guard.acquire(self.lab)
        self._held = True
        try:
            self._prepare_host()
            self._start_containerd(containerd)
            self.timings["containerd"] = time.monotonic() - began
            self._start_kubelet(kubelet)
            poll_until(self.ready, timeout=READY_TIMEOUT, interval=0.2,
                       what=f"real Node {self.name} to be Ready", last_error=self._kubelet_tail)  # fmt: skip
            # The kubelet set its kernel tunables at start; put the machine's values back right away.
            self.guard.restore_sysctls()
        except BaseException:
            self.stop()
            raise
        self.timings["ready"] = time.monotonic() - began

    def stop(self) -> None:
        """Drain the node, stop the kubelet and containerd, and put the host back (verified)."""
        if not self._held:
            return
        began = time.monotonic()
        try:
            if self.kubelet is not None and self.kubelet.exit_code() is None:
                self._drain()
            for process in (self.kubelet, self.containerd):
                if process is not None:
                    process.stop(10.0)
            self._restore_network()
        finally:
            self._held = False
            self.guard.release()
        self.timings["teardown"] = time.monotonic() - began

    def _prepare_host(self) -> None:
        shutil.rmtree(self.lab, ignore_errors=True)
        for sub in ("containerd", "cni/net.d", "pki", "kubelet", "pod-logs", "runc"):
            (self.lab / sub).mkdir(parents=True, exist_ok=True)
        for hierarchy in cgroup_hierarchies():
            tree = hierarchy / CGROUP_ROOT.strip("/")
            tree.mkdir(exist_ok=True)
            if (hierarchy / "cpuset.cpus").exists():  # a new v1 cpuset starts empty: no task could join it
                for name in ("cpuset.cpus", "cpuset.mems"):
                    (tree / name).write_text((hierarchy / name).read_text())
        # The test network routes all of TEST-NET-2 to lo; the pods' range must reach the bridge instead.
        # (Idempotent: a killed run in this same namespace may have split them already.)
        subprocess.run(["ip", "route", "del", "local", str(network.TEST_NETWORK), "dev", "lo", "table", "local"],
                       capture_output=True, check=False)  # fmt: skip
        self._routes_split = True
        for net in network.TEST_NETWORK.address_exclude(POD_CIDR):  # type: ignore[arg-type]
            _ip("route", "replace", "local", str(net), "dev", "lo", "table", "local")
        self.node_ip = network.allocate_address()
        # The kubelet reports a --node-ip only if an interface carries it; the local route alone is not enough.
        _ip("addr", "add", f"{self.node_ip}/32", "dev", "lo")

    def _restore_network(self) -> None:
        subprocess.run(["ip", "link", "del", BRIDGE], capture_output=True, check=False)
        if self.node_ip:
            subprocess.run(["ip", "addr", "del", f"{self.node_ip}/32", "dev", "lo"], capture_output=True, check=False)
        if self._routes_split:
            for net in network.TEST_NETWORK.address_exclude(POD_CIDR):  # type: ignore[arg-type]
                subprocess.run(["ip", "route", "del", "local", str(net), "dev", "lo", "table", "local"],
                               capture_output=True, check=False)  # fmt: skip
            _ip("route", "add", "local", str(network.TEST_NETWORK), "dev", "lo", "table", "local")
            self._routes_split = False

    def _start_containerd(self, binary: Path) -> None:
        assert self.images is not None
        config = self.lab / "containerd" / "config.toml"
        config.write_text(containerd_config(self.lab, self.images))
        (self.lab / "cni" / "net.d" / "10-ballast.conflist").write_bytes(orjson.dumps(cni_config(self.lab)))
        path = f"{binary.parent}:{os.environ.get('PATH', '/usr/sbin:/usr/bin:/sbin:/bin')}"  # finds its shim first
        self.containerd = self.env.spawn(
            "containerd", [str(binary), f"--config={config}"], env={**os.environ, "PATH": path}
        )
        self.guard.record_pid(self.containerd.pid or 0)
        self.containerd.wait_ready(lambda: self.ctr("version").returncode == 0, 30.0)
        for image in self.images.all():
            result = self.ctr("images", "import", str(image.tarball))
            if result.returncode != 0:
                raise EnvtestError(f"ctr images import {image.tarball} failed: {result.stderr.strip()}")

    def ctr(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`ctr` against this node's containerd, in the CRI namespace."""
        ctr = find_node_tool("containerd").with_name("ctr")
        address = self.lab / "containerd" / "containerd.sock"
        return subprocess.run([str(ctr), f"--address={address}", "--namespace=k8s.io", *args],
                              capture_output=True, text=True, check=False, timeout=60)  # fmt: skip

    def _start_kubelet(self, binary: Path) -> None:
        pki = self.lab / "pki"
        self.env.ca.issue(f"system:node:{self.name}", hosts=(self.node_ip,), server=True).write(
            pki, "kubelet.crt", "kubelet.key"
        )
        credentials = self.env.add_user(f"system:node:{self.name}", groups=("system:nodes",))
        kubeconfig = credentials.write_kubeconfig(self.lab / "kubelet.kubeconfig")
        config = self.lab / "kubelet-config.yaml"
        port, healthz = suggest_port(self.node_ip), suggest_port("127.0.0.1")
        config.write_text(yaml.safe_dump(kubelet_config(self.lab, self.node_ip, port, healthz, self.env.ca_file)))
        self.guard.save_sysctls()
        self.kubelet = self.env.spawn(
            "kubelet",
            [
                str(binary),
                f"--config={config}",
                f"--kubeconfig={kubeconfig}",
                f"--root-dir={self.lab / 'kubelet'}",
                f"--cert-dir={pki}",
                f"--hostname-override={self.name}",
                f"--node-ip={self.node_ip}",
                f"--node-labels={NODE_LABEL}=true",
                "--v=2",
            ],
        )
        self.guard.record_pid(self.kubelet.pid or 0)

    def restart_kubelet(self) -> None:
        """Stop and start the kubelet with the same flags (its sysctls put back again), wait until Ready."""
        assert self.kubelet is not None
        self.kubelet.stop(10.0)
        self.kubelet.start()
        self.guard.record_pid(self.kubelet.pid or 0)
        poll_until(self._kubelet_healthy, timeout=READY_TIMEOUT, what="the restarted kubelet")
        self.guard.restore_sysctls()

    def _kubelet_healthy(self) -> bool:
        healthz = yaml.safe_load((self.lab / "kubelet-config.yaml").read_text())["healthzPort"]
        http = urllib3.PoolManager(timeout=urllib3.Timeout(total=2.0), retries=False)
        return http.request("GET", f"http://127.0.0.1:{healthz}/healthz").status == 200 and self.ready()

    def _drain(self) -> None:
        """Nothing may recreate pods while the node empties: stop the controllers, then delete its pods."""
        for process in self.env.processes:
            if process.name in ("kube-controller-manager", "kube-scheduler"):
                process.stop(10.0)
        pods = self.env.rest.get("/api/v1/pods", {"fieldSelector": f"spec.nodeName={self.name}"})["items"]
        for pod in pods:
            meta = pod["metadata"]
            try:
                self.env.rest.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                                      params={"gracePeriodSeconds": "1"})  # fmt: skip
            except APIError as exc:
                if exc.status != 404:
                    raise
        # The kubelet stops each sandbox (CNI DEL included) before the Pod object goes; then no task is left.
        poll_until(lambda: not self._node_pods() and not self._tasks(), timeout=DRAIN_TIMEOUT, interval=0.5,
                   what=f"the pods of {self.name} to be gone", last_error=self._kubelet_tail)  # fmt: skip

    def _node_pods(self) -> list[str]:
        items = self.env.rest.get("/api/v1/pods", {"fieldSelector": f"spec.nodeName={self.name}"})["items"]
        return [i["metadata"]["name"] for i in items]

    def _tasks(self) -> list[str]:
        lines = self.ctr("tasks", "ls", "-q").stdout.split()
        return [line for line in lines if line]

    def _kubelet_tail(self) -> str:
        return self.kubelet.output_tail(30) if self.kubelet else "(kubelet not started)"

    # ------------------------------------------------------------------------------------------ queries

    def ready(self) -> bool:
        try:
            node = self.env.rest.get(f"/api/v1/nodes/{self.name}")
        except APIError:
            return False
        conditions = node.get("status", {}).get("conditions", [])
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    def container_cgroup(self, pod: dict[str, Any], container: str, controller: str) -> Path:
        """The cgroup directory of `container` of `pod` in hierarchy `controller` (`memory`, `cpu`, ...), found
        by its container ID in the kubelet's tree under CGROUP_ROOT."""
        statuses = pod.get("status", {}).get("containerStatuses") or []
        (status,) = [s for s in statuses if s["name"] == container]
        container_id = status["containerID"].split("://", 1)[1]
        base = CGROUP_MOUNT / controller / CGROUP_ROOT.strip("/")
        if not base.is_dir():  # a unified (v2) host: one hierarchy
            base = CGROUP_MOUNT / CGROUP_ROOT.strip("/")
        matches = [p for p in base.rglob(f"*{container_id}*") if p.is_dir()]
        if not matches:
            raise EnvtestError(f"no cgroup for container {container} ({container_id}) under {base}")
        return matches[0]

    def container_cgroup_file(self, pod: dict[str, Any], container: str, controller: str, name: str) -> str:
        """A cgroup file's content for a container, e.g. ("memory", "memory.limit_in_bytes")."""
        return (self.container_cgroup(pod, container, controller) / name).read_text().strip()


def _ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise EnvtestError(f"`ip {' '.join(args)}` failed: {result.stderr.strip()}")


__all__ = [
    "BRIDGE",
    "DEFAULT_NAME",
    "LAB",
    "NODE_LABEL",
    "POD_CIDR",
    "RealNode",
    "cni_config",
    "containerd_config",
    "kubelet_config",
]
