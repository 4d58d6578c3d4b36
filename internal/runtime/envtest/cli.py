"""`ballast-envtest`: build or locate control-plane binaries, run a dev control plane, run in the test network.

ballast-envtest use [VERSION]       build if needed; the last line printed is the asset directory
ballast-envtest list                Kubernetes versions in the cache
ballast-envtest tool NAME           build kwok, metrics-server, karpenter, kubelet, containerd or node-images
                                    (the real node's) if needed; the last line is the binary (or directory)
ballast-envtest run [--crd PATH]    start etcd + kube-apiserver and wait; prints KUBECONFIG
ballast-envtest netns -- CMD ...    run CMD inside a private network namespace (TEST-NET-2 on lo)
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Sequence

from ballast import __version__

from .assets import DEFAULT_ETCD_VERSION, build_assets, cache_root, cached_versions, default_version, find_assets
from .environment import Environment
from .errors import EnvtestError
from .images import find_node_images
from .network import run_in_private_network
from .nodebuild import NODE_TOOLS, find_node_tool
from .process import ControlPlaneProcess
from .tools import TOOLS, find_tool

NODE_IMAGES = "node-images"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ballast-envtest",
        description="Real kube-apiserver + etcd for tests, built from Go modules (like controller-runtime's "
        "setup-envtest, without downloads).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    use = commands.add_parser("use", help="print the asset directory for a version, building it first if needed")
    use.add_argument("kubernetes_version", nargs="?", help=f"Kubernetes version (default {default_version()})")
    use.add_argument("--etcd-version", default=DEFAULT_ETCD_VERSION, help="etcd version to build (default %(default)s)")
    use.add_argument("-i", "--installed-only", action="store_true", help="fail instead of building")

    commands.add_parser("list", help="list the Kubernetes versions in the cache")

    tool = commands.add_parser(
        "tool",
        help="print the path of kwok, metrics-server, karpenter (its kwok provider), or the real node's kubelet, "
        "containerd or test images, building it first if needed",
    )
    tool.add_argument("name", choices=sorted([*TOOLS, *NODE_TOOLS, NODE_IMAGES]), help="the tool")
    tool.add_argument("-i", "--installed-only", action="store_true", help="fail instead of building")

    run = commands.add_parser("run", help="start a control plane and wait (Ctrl-C stops it)")
    run.add_argument("--kubernetes-version", help=f"Kubernetes version (default {default_version()})")
    run.add_argument("--crd", action="append", default=[], metavar="PATH", help="CRD file or directory to install")
    run.add_argument("--port", type=int, help="kube-apiserver secure port (default: a free port)")
    run.add_argument(
        "--with",
        dest="components",
        action="append",
        default=[],
        choices=["kube-scheduler", "kube-controller-manager"],
        help="also start this component",
    )

    netns = commands.add_parser("netns", help="run a command inside the private test network namespace")
    netns.add_argument("argv", nargs=argparse.REMAINDER, help="the command (after --)")
    return parser


def _use(args: argparse.Namespace) -> int:
    version = args.kubernetes_version or default_version()
    if args.installed_only:
        assets = find_assets(version, build=False)
        print(assets.directory)
        return 0
    directory = build_assets(version, etcd_version=args.etcd_version)
    print(directory)
    return 0


def _list() -> int:
    versions = cached_versions()
    for version in versions:
        print(f"v{version}\t{cache_root() / version}")
    if not versions:
        print(f"no versions in {cache_root()}", file=sys.stderr)
    return 0


def _run(args: argparse.Namespace) -> int:
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    env = Environment(
        kubernetes_version=args.kubernetes_version,
        crd_paths=args.crd,
        apiserver_port=args.port,
        components=args.components,
    )
    with env:
        print(f"kube-apiserver {env.server} ready in {env.started_seconds:.1f}s", file=sys.stderr)
        print("Stop with Ctrl-C. In another shell:", file=sys.stderr)
        print(f"export KUBECONFIG={env.kubeconfig_path}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            dead = first_exited(lambda: env.processes, stopped)
            if dead is not None:
                print(
                    f"ballast-envtest: {dead.name} exited with code {dead.exit_code()}; the last lines of "
                    f"{dead.log_path}:\n{dead.output_tail()}",
                    file=sys.stderr,
                )
                return 1
    return 0


def first_exited(
    processes: Callable[[], Sequence[ControlPlaneProcess]], stopped: threading.Event, interval: float = 1.0
) -> ControlPlaneProcess | None:
    """Wait until `stopped` is set (None) or one of the control plane's processes has exited (that one)."""
    while not stopped.wait(interval):
        for process in processes():
            if process.exit_code() is not None:
                return process
    return None


def _tool(name: str, *, build: bool) -> object:
    if name == NODE_IMAGES:
        return find_node_images(build=build).pause.tarball.parent
    if name in NODE_TOOLS:
        return find_node_tool(name, build=build)
    return find_tool(name, build=build)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "use":
            return _use(args)
        if args.command == "list":
            return _list()
        if args.command == "run":
            return _run(args)
        if args.command == "tool":
            print(_tool(args.name, build=not args.installed_only))
            return 0
        command = list(args.argv)
        if command[:1] == ["--"]:
            command = command[1:]
        return run_in_private_network(command)
    except EnvtestError as exc:
        print(f"ballast-envtest: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

__all__ = [
    "main",
]
