"""The real node's binaries: the kubelet and containerd (with its runc shim and `ctr`), built from Go modules.

Neither is a plain `go install` target: the kubelet lives in `k8s.io/kubernetes`, whose staging modules need one
`replace` each (the same generated go.mod as the control plane's, see `assets`, so the build shares its compiled
packages in the Go build cache), and containerd needs build tags to leave out the snapshotters that want cgo.
Each build lands in `~/.cache/ballast/tools/<name>-v<version>/` through a staging directory, under a lock, so
two test runs never build the same thing twice nor see half a build. Runc, the CNI plugins and busybox come from
Debian packages (`hack/setup-real-node`).
"""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ballast.runtime.clock import rfc3339

from .assets import _exclusive, default_version, normalize_version
from .errors import AssetsNotFoundError, BuildError
from .tools import _environment, tools_root

CONTAINERD_VERSION = "2.4.2"
CONTAINERD_MODULE = "github.com/containerd/containerd/v2"
# cgo-free: the btrfs and devmapper snapshotters need C headers; overlayfs is the one the node uses.
CONTAINERD_TAGS = "no_btrfs no_zfs no_devmapper"
_STAGING_MARK = "=> ./staging/src/"


@dataclass(frozen=True, slots=True)
class NodeTool:
    """A binary set built from a generated module; `executables[0]` is the one `find_node_tool` returns."""

    name: str
    executables: tuple[str, ...]
    version: Callable[[], str]
    build: Callable[[str, Path, Path, TextIO], None]  # (version, work dir, output dir, progress)


def _go(args: list[str], cwd: Path, log: Path) -> str:
    with log.open("a") as out:
        out.write(f"\n$ (cd {cwd} && go {' '.join(args)})\n")
        out.flush()
        result = subprocess.run(
            ["go", *args], cwd=cwd, env=_environment(), stdout=subprocess.PIPE, stderr=out, text=True, check=False
        )
    if result.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
        raise BuildError(f"`go {' '.join(args)}` failed in {cwd} (exit {result.returncode}); log {log}:\n{tail}")
    return result.stdout


def _tools_go(packages: list[str]) -> str:
    imports = "".join(f'\t_ "{p}"\n' for p in packages)
    return f"//go:build tools\n\npackage tools\n\nimport (\n{imports})\n"


def _build_kubelet(version: str, work: Path, output: Path, progress: TextIO) -> None:
    log = work / "build.log"
    info = json.loads(_go(["mod", "download", "-json", f"k8s.io/kubernetes@v{version}"], work, log))
    if info.get("Error"):
        raise BuildError(f"k8s.io/kubernetes v{version} cannot be downloaded: {info['Error']}")
    staging = sorted(
        {line.split()[0] for line in Path(info["GoMod"]).read_text().splitlines() if _STAGING_MARK in line}
    )
    minor_patch = version.split(".", 1)[1]
    replaces = "".join(f"\t{module} => {module} v0.{minor_patch}\n" for module in staging)
    (work / "go.mod").write_text(
        f"module ballast.local/realnode/kubelet\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v{version}\n\n"
        f"replace (\n{replaces})\n"
    )
    (work / "tools.go").write_text(_tools_go(["k8s.io/kubernetes/cmd/kubelet"]))
    print(f"envtest: resolving the kubelet's dependencies ({len(staging)} staging modules) ...", file=progress)
    _go(["mod", "tidy"], work, log)
    stamp = {
        "gitVersion": f"v{version}",
        "gitMajor": version.split(".", maxsplit=1)[0],
        "gitMinor": version.split(".")[1],
        "gitTreeState": "clean",
        "buildDate": rfc3339(datetime.datetime.now(datetime.UTC)),
    }
    ldflags = ["-s", "-w"]
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        ldflags += [f"-X {package}.{key}={value}" for key, value in stamp.items()]
    print("envtest: building the kubelet (~2 min with the control plane's build cache warm, ~12 cold) ...",
          file=progress, flush=True)  # fmt: skip
    _go(["build", "-ldflags", " ".join(ldflags), "-o", f"{output}/", "k8s.io/kubernetes/cmd/kubelet"], work, log)


def _build_containerd(version: str, work: Path, output: Path, progress: TextIO) -> None:
    log = work / "build.log"
    commands = [f"{CONTAINERD_MODULE}/cmd/{c}" for c in ("containerd", "containerd-shim-runc-v2", "ctr")]
    (work / "go.mod").write_text(
        f"module ballast.local/realnode/containerd\n\ngo 1.26.0\n\nrequire {CONTAINERD_MODULE} v{version}\n"
    )
    (work / "tools.go").write_text(_tools_go(commands))
    _go(["mod", "tidy"], work, log)
    print(f"envtest: building containerd v{version}, its runc shim and ctr (~1 min warm) ...", file=progress)
    ldflags = f"-s -w -X {CONTAINERD_MODULE}/version.Version=v{version}"
    _go(["build", "-tags", CONTAINERD_TAGS, "-ldflags", ldflags, "-o", f"{output}/", *commands], work, log)


NODE_TOOLS: dict[str, NodeTool] = {
    "kubelet": NodeTool("kubelet", ("kubelet",), default_version, _build_kubelet),
    "containerd": NodeTool(
        "containerd",
        ("containerd", "containerd-shim-runc-v2", "ctr"),
        lambda: CONTAINERD_VERSION,
        _build_containerd,
    ),
}


def find_node_tool(
    name: str, *, version: str | None = None, build: bool = True, progress: TextIO | None = None
) -> Path:
    """Path of `name`'s main binary (its siblings sit beside it), built once when `build`."""
    try:
        tool = NODE_TOOLS[name]
    except KeyError:
        raise AssetsNotFoundError(f"unknown node tool {name!r}: expected one of {', '.join(NODE_TOOLS)}") from None
    version = normalize_version(version or tool.version())
    directory = tools_root() / f"{name}-v{version}"
    if all((directory / e).is_file() for e in tool.executables):
        return directory / tool.executables[0]
    if not build:
        raise AssetsNotFoundError(
            f"{name} v{version} is not in {directory}; build it with `ballast-envtest tool {name}` "
            "(or `make real-node-tools`)"
        )
    if shutil.which("go") is None:
        raise AssetsNotFoundError(f"{name} v{version} is not cached and `go` is not on PATH to build it")
    progress = progress or sys.stderr
    with _exclusive(tools_root() / f".{name}-v{version}.lock", progress):
        if all((directory / e).is_file() for e in tool.executables):  # built by the run we waited for
            return directory / tool.executables[0]
        work = tools_root() / ".src" / f"{name}-v{version}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        stage = tools_root() / f".{name}-v{version}.partial"
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        started = time.monotonic()
        tool.build(version, work, stage, progress)
        shutil.rmtree(directory, ignore_errors=True)
        stage.rename(directory)
        print(f"envtest: {name} v{version} built in {time.monotonic() - started:.0f}s: {directory}", file=progress)
    return directory / tool.executables[0]


__all__ = [
    "CONTAINERD_VERSION",
    "NODE_TOOLS",
    "NodeTool",
    "find_node_tool",
]
