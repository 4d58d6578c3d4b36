"""Components beyond the control plane (kwok, metrics-server, Karpenter with its kwok provider), built from their
Go modules and cached.

Like the control plane, nothing reachable here ships them as binaries, but every module is a plain `go install`
target (no `replace` directives); Karpenter v1.15.0 needs a newer Go than the machine's, so its build names the
toolchain (`GOTOOLCHAIN=go1.27.3`, fetched by the go command from the module proxy once). Each build lands in
`~/.cache/ballast/tools/<name>-<version>/` through a staging directory, so an interrupted build never leaves a
broken binary. The module's source stays in the Go
module cache, where callers read the files it ships (kwok's Stage and usage YAML) instead of retyping them.

Lookup order: `TEST_ASSET_<NAME>` (a binary path, as for the control plane), then the cache, then a build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .errors import AssetsNotFoundError, BuildError


@dataclass(frozen=True, slots=True)
class GoTool:
    """A binary built with `go install <package>@<version>`; `ldflags` stamp the version it reports."""

    name: str
    module: str
    package: str
    version: str
    ldflags: str = "-s -w"
    binary: str = ""  # the installed binary's name when it is not the tool's (the last element of `package`)
    toolchain: str = "local"  # GOTOOLCHAIN for the build: a module needing a newer Go than the machine's names one

    @property
    def executable(self) -> str:
        return self.binary or self.name


TOOLS: dict[str, GoTool] = {
    "kwok": GoTool(
        "kwok",
        "sigs.k8s.io/kwok",
        "sigs.k8s.io/kwok/cmd/kwok",
        "v0.8.0",
        "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=0.8.0",
    ),
    "metrics-server": GoTool(
        "metrics-server",
        "sigs.k8s.io/metrics-server",
        "sigs.k8s.io/metrics-server/cmd/metrics-server",
        "v0.8.0",
        "-s -w -X k8s.io/client-go/pkg/version.gitVersion=v0.8.0",
    ),
    # Karpenter with its kwok cloud provider (fake NodeClaims become Nodes kwok serves); v1.15.0 needs Go >= 1.26.9,
    # so the build asks for go1.27.3, which the go command fetches from the module proxy once.
    "karpenter": GoTool(
        "karpenter",
        "sigs.k8s.io/karpenter",
        "sigs.k8s.io/karpenter/kwok",
        "v1.15.0",
        binary="kwok",
        toolchain="go1.27.3",
    ),
}


def tools_root() -> Path:
    """`$XDG_CACHE_HOME/ballast/tools` (default `~/.cache/ballast/tools`), shared with hack/setup-helm."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ballast" / "tools"


def _tool(name: str) -> GoTool:
    try:
        return TOOLS[name]
    except KeyError:
        raise AssetsNotFoundError(f"unknown tool {name!r}: expected one of {', '.join(sorted(TOOLS))}") from None


def find_tool(name: str, *, build: bool = True, progress: TextIO | None = None) -> Path:
    """Path of tool `name`'s binary; built once when `build` (else AssetsNotFoundError naming the fix)."""
    tool = _tool(name)
    variable = "TEST_ASSET_" + name.upper().replace("-", "_")
    override = os.environ.get(variable)
    if override:
        if not os.access(override, os.X_OK):
            raise AssetsNotFoundError(f"{variable}={override} is not an executable file")
        return Path(override)
    target = tools_root() / f"{name}-{tool.version}" / tool.executable
    if target.is_file():
        return target
    if not build:
        raise AssetsNotFoundError(
            f"{name} {tool.version} is not in {target.parent}; build it with `ballast-envtest tool {name}`"
        )
    return _build(tool, target, progress or sys.stderr)


def module_dir(name: str) -> Path:
    """The tool's module source in the Go module cache (downloaded if missing): the files it ships."""
    tool = _tool(name)
    info = _go_json(
        ["mod", "download", "-json", f"{tool.module}@{tool.version}"], Path(tempfile.gettempdir()), tool.toolchain
    )
    if info.get("Error") or not info.get("Dir"):
        raise BuildError(f"{tool.module}@{tool.version} cannot be downloaded: {info.get('Error', 'no Dir')}")
    return Path(info["Dir"])


def _environment(toolchain: str = "local") -> dict[str, str]:
    return {**os.environ, "GOTOOLCHAIN": toolchain, "CGO_ENABLED": "0", "GOWORK": "off", "GOFLAGS": "-mod=mod"}


def _go_json(args: list[str], cwd: Path, toolchain: str = "local") -> dict[str, str]:
    if shutil.which("go") is None:
        raise AssetsNotFoundError("`go` is not on PATH: install Go to build the test tools")
    result = subprocess.run(
        ["go", *args], cwd=cwd, env=_environment(toolchain), capture_output=True, text=True, check=False
    )
    try:
        parsed: dict[str, str] = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise BuildError(f"`go {' '.join(args)}` failed (exit {result.returncode}): {result.stderr.strip()}") from None
    return parsed


def _build(tool: GoTool, target: Path, progress: TextIO) -> Path:
    if shutil.which("go") is None:
        raise AssetsNotFoundError(f"{tool.name} {tool.version} is not cached and `go` is not on PATH to build it")
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{tool.name}-{tool.version}.", dir=target.parent.parent))
    started = time.monotonic()
    print(f"envtest: building {tool.name} {tool.version} from {tool.module} (go install, once) ...", file=progress)
    try:
        result = subprocess.run(
            ["go", "install", "-trimpath", "-ldflags", tool.ldflags, f"{tool.package}@{tool.version}"],
            env={**_environment(tool.toolchain), "GOBIN": str(stage / "bin")},
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise BuildError(f"go install {tool.package}@{tool.version} failed:\n{result.stderr.strip()[-3000:]}")
        (stage / "bin").rename(stage / "out")
        try:
            (stage / "out").rename(target.parent)
        except OSError:
            # Another build won the race and its directory is in place: keep the first one.
            if not target.is_file():
                raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    print(f"envtest: {tool.name} {tool.version} built in {time.monotonic() - started:.0f}s: {target}", file=progress)
    return target


__all__ = [
    "TOOLS",
    "GoTool",
    "find_tool",
    "module_dir",
    "tools_root",
]
