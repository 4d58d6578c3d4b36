"""Control-plane binaries: where they are, and how they are built from Go modules when they are not.

No registry reachable from these machines ships kube-apiserver, so it is built from the published Go modules
(docs/framework/envtest.md): a tiny module requires `k8s.io/kubernetes` with one `replace` per staging module
(read from the release's own go.mod), and the `cmd/...` main packages build directly; etcd comes from a
module whose `main` calls `etcdmain.Main`. Output is cached per Kubernetes version under
`~/.cache/ballast/envtest/<version>/` and reused; building one version never touches another.

Lookup order for a binary: `TEST_ASSET_<NAME>` (controller-runtime's per-binary variables), then
`BALLAST_ENVTEST_ASSETS`, then `KUBEBUILDER_ASSETS`, then the cache (built on demand).
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ballast.runtime.clock import rfc3339

from .errors import AssetsNotFoundError, BuildError

DEFAULT_KUBERNETES_VERSION = "1.37.2"
DEFAULT_ETCD_VERSION = "3.6.16"
KUBERNETES_BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
ALL_BINARIES = ("etcd", *KUBERNETES_BINARIES)
MANIFEST = "ballast-envtest.json"
HEARTBEAT_SECONDS = 30.0

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")
_STAGING_REPLACE = re.compile(r"^\s*(k8s\.io/[\w.-]+)\s+=>\s+\./staging/src/", re.MULTILINE)


def normalize_version(version: str) -> str:
    """`v1.37.2` or `1.37.2` → `1.37.2`; anything else is refused with the expected form."""
    match = _VERSION.match(version.strip())
    if not match:
        raise AssetsNotFoundError(
            f"invalid Kubernetes version {version!r}: expected MAJOR.MINOR.PATCH such as {DEFAULT_KUBERNETES_VERSION}"
        )
    return ".".join(match.groups())


def cache_root() -> Path:
    """`$XDG_CACHE_HOME/ballast/envtest` (default `~/.cache/ballast/envtest`)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ballast" / "envtest"


def default_version() -> str:
    """The Kubernetes version used when none is given (`BALLAST_ENVTEST_K8S_VERSION` overrides)."""
    return normalize_version(os.environ.get("BALLAST_ENVTEST_K8S_VERSION", DEFAULT_KUBERNETES_VERSION))


@dataclass(frozen=True, slots=True)
class Assets:
    """A directory of control-plane binaries and where it came from (for error messages)."""

    directory: Path
    origin: str

    def binary(self, name: str) -> Path:
        """Path of binary `name`; raises AssetsNotFoundError naming the directory and its origin."""
        override = os.environ.get("TEST_ASSET_" + name.upper().replace("-", "_"))
        if override:
            path = Path(override)
            origin = f"TEST_ASSET_{name.upper().replace('-', '_')}"
        else:
            path = self.directory / name
            origin = self.origin
        if not path.is_file():
            raise AssetsNotFoundError(
                f"{name} not found at {path} (from {origin}); run `ballast-envtest use` to build the "
                "control-plane binaries, or point BALLAST_ENVTEST_ASSETS at a directory that has them"
            )
        return path

    def has(self, name: str) -> bool:
        try:
            self.binary(name)
        except AssetsNotFoundError:
            return False
        return True


def _override() -> Assets | None:
    for variable in ("BALLAST_ENVTEST_ASSETS", "KUBEBUILDER_ASSETS"):
        value = os.environ.get(variable)
        if value:
            return Assets(Path(value).expanduser(), variable)
    return None


def cached_versions() -> list[str]:
    """Kubernetes versions with a complete build in the cache, oldest first."""
    root = cache_root()
    if not root.is_dir():
        return []
    found = [p.name for p in root.iterdir() if (p / MANIFEST).is_file() and _VERSION.match(p.name)]
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))


def find_assets(version: str | None = None, *, build: bool = True, progress: TextIO | None = None) -> Assets:
    """The binaries to use: an override directory, the cached build, or a fresh build (when `build`)."""
    override = _override()
    if override:
        return override
    version = normalize_version(version) if version else default_version()
    directory = cache_root() / version
    if (directory / MANIFEST).is_file():
        return Assets(directory, f"the cache for Kubernetes v{version}")
    if not build:
        raise AssetsNotFoundError(
            f"no control-plane binaries for Kubernetes v{version} in {directory}; build them with "
            f"`ballast-envtest use {version}` or set BALLAST_ENVTEST_ASSETS"
        )
    return Assets(build_assets(version, progress=progress), f"a fresh build of Kubernetes v{version}")


@contextlib.contextmanager
def _exclusive(lock_path: Path, progress: TextIO) -> Iterator[None]:
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"envtest: waiting for another build holding {lock_path}", file=progress, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class _Builder:
    """One build of one Kubernetes version; each step's output goes to build.log."""

    def __init__(self, version: str, etcd_version: str, progress: TextIO) -> None:
        self.version = version
        self.etcd_version = etcd_version
        self.progress = progress
        self.source = cache_root() / ".src" / version
        self.log_path = self.source / "build.log"
        self.env = {
            **os.environ,
            "GOTOOLCHAIN": "local",
            "CGO_ENABLED": "0",
            "GOWORK": "off",
            "GOFLAGS": "-mod=mod",
        }
        self.started = time.monotonic()

    def say(self, message: str) -> None:
        elapsed = time.monotonic() - self.started
        print(f"envtest [{_clock(elapsed)}] {message}", file=self.progress, flush=True)

    def go(self, args: Sequence[str], cwd: Path, step: str) -> str:
        """Run `go args...` in `cwd`, logging output; a heartbeat line every 30 s keeps the user informed."""
        self.say(step)
        done = threading.Event()
        step_started = time.monotonic()

        def heartbeat() -> None:
            while not done.wait(HEARTBEAT_SECONDS):
                self.say(f"  ... still at it, {_clock(time.monotonic() - step_started)} into this step")

        ticker = threading.Thread(target=heartbeat, daemon=True)
        ticker.start()
        try:
            with self.log_path.open("a") as log:
                log.write(f"\n$ (cd {cwd} && go {' '.join(args)})\n")
                log.flush()
                result = subprocess.run(
                    ["go", *args], cwd=cwd, env=self.env, stdout=subprocess.PIPE, stderr=log, text=True, check=False
                )
        finally:
            done.set()
            ticker.join()
        if result.returncode != 0:
            tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-30:])
            raise BuildError(
                f"`go {' '.join(args)}` failed in {cwd} (exit {result.returncode}) while building "
                f"Kubernetes v{self.version}; full log: {self.log_path}\n{tail}"
            )
        return result.stdout

    def staging_modules(self, work: Path) -> list[str]:
        """The staging modules of this release, read from k8s.io/kubernetes's own go.mod."""
        out = self.go(
            ["mod", "download", "-json", f"k8s.io/kubernetes@v{self.version}"],
            work,
            f"Resolving k8s.io/kubernetes v{self.version}.",
        )
        info = json.loads(out)
        if info.get("Error"):
            raise BuildError(f"k8s.io/kubernetes v{self.version} cannot be downloaded: {info['Error']}")
        modules = _STAGING_REPLACE.findall(Path(info["GoMod"]).read_text())
        if not modules:
            raise BuildError(f"no staging modules found in {info['GoMod']}; is v{self.version} a release?")
        return sorted(set(modules))

    def build_kubernetes(self, output: Path) -> None:
        work = self.source / "kubernetes"
        work.mkdir(parents=True, exist_ok=True)
        minor = self.version.split(".")[1]
        (work / "go.mod").write_text("module ballast.local/envtest/kubernetes\n\ngo 1.26.0\n")
        staging = self.staging_modules(work)
        replaces = "".join(f"\t{m} => {m} v0.{self.version.split('.', 1)[1]}\n" for m in staging)
        (work / "go.mod").write_text(
            "module ballast.local/envtest/kubernetes\n\ngo 1.26.0\n\n"
            f"require k8s.io/kubernetes v{self.version}\n\nreplace (\n{replaces})\n"
        )
        imports = "".join(f'\t_ "k8s.io/kubernetes/cmd/{b}"\n' for b in KUBERNETES_BINARIES)
        (work / "tools.go").write_text(f"//go:build tools\n\npackage tools\n\nimport (\n{imports})\n")
        self.go(["mod", "tidy"], work, f"Resolving dependencies ({len(staging)} staging modules).")
        stamp = {
            "gitVersion": f"v{self.version}",
            "gitMajor": self.version.split(".")[0],
            "gitMinor": minor,
            "gitTreeState": "clean",
            "buildDate": rfc3339(datetime.datetime.now(datetime.UTC)),
        }
        ldflags = ["-s", "-w"]
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
            ldflags += [f"-X {package}.{key}={value}" for key, value in stamp.items()]
        self.go(
            [
                "build",
                "-ldflags",
                " ".join(ldflags),
                "-o",
                str(output) + "/",
                *(f"k8s.io/kubernetes/cmd/{b}" for b in KUBERNETES_BINARIES),
            ],
            work,
            f"Building {', '.join(KUBERNETES_BINARIES)} (about 6-7 minutes the first time on 2 cores).",
        )

    def build_etcd(self, output: Path) -> None:
        work = self.source / "etcd"
        work.mkdir(parents=True, exist_ok=True)
        (work / "go.mod").write_text(
            f"module ballast.local/envtest/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 "
            f"v{self.etcd_version}\n"
        )
        (work / "main.go").write_text(
            "// etcd, built from its published module: the same call etcd's own server/main.go makes.\n"
            'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\n'
            "func main() { etcdmain.Main(os.Args) }\n"
        )
        self.go(["mod", "tidy"], work, f"Resolving etcd v{self.etcd_version}.")
        self.go(
            ["build", "-ldflags", "-s -w", "-o", str(output / "etcd"), "."],
            work,
            f"Building etcd v{self.etcd_version}.",
        )

    def run(self) -> Path:
        final = cache_root() / self.version
        staging = cache_root() / f".{self.version}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        self.source.mkdir(parents=True, exist_ok=True)
        self.log_path.write_text("")
        self.say(f"Building control-plane binaries for Kubernetes v{self.version} into {final}")
        self.build_kubernetes(staging)
        self.build_etcd(staging)
        elapsed = time.monotonic() - self.started
        manifest = {
            "kubernetes": f"v{self.version}",
            "etcd": f"v{self.etcd_version}",
            "go": _go_version(),
            "binaries": list(ALL_BINARIES),
            "built": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "build_seconds": round(elapsed, 1),
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)
        self.say(f"Done in {_clock(elapsed)}: {final}")
        return final


def build_assets(version: str, *, etcd_version: str = DEFAULT_ETCD_VERSION, progress: TextIO | None = None) -> Path:
    """Build (or reuse) the binaries for `version`; returns the asset directory. Progress goes to stderr."""
    version = normalize_version(version)
    progress = progress or sys.stderr
    if shutil.which("go") is None:
        raise AssetsNotFoundError(
            f"control-plane binaries for Kubernetes v{version} are not cached and `go` is not on PATH to "
            "build them; install Go, or set BALLAST_ENVTEST_ASSETS (or KUBEBUILDER_ASSETS) to a directory "
            "with etcd and kube-apiserver"
        )
    final = cache_root() / version
    with _exclusive(cache_root() / f".{version}.lock", progress):
        if (final / MANIFEST).is_file():
            return final
        return _Builder(version, normalize_version(etcd_version), progress).run()


def _go_version() -> str:
    result = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=False)
    return result.stdout.strip()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


__all__ = [
    "ALL_BINARIES",
    "DEFAULT_ETCD_VERSION",
    "DEFAULT_KUBERNETES_VERSION",
    "HEARTBEAT_SECONDS",
    "KUBERNETES_BINARIES",
    "MANIFEST",
    "Assets",
    "build_assets",
    "cache_root",
    "cached_versions",
    "default_version",
    "find_assets",
    "normalize_version",
]
