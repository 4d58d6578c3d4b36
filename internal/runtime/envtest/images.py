"""Container images for the real node, built locally as OCI layout tarballs: no registry is ever asked.

Three single-layer images, loaded with `ctr images import` and used with `imagePullPolicy: Never`:

- `pause` — the sandbox image, compiled statically from `build/pause/linux/pause.c` in the kubelet's own module;
- `busybox` — Debian's static `/bin/busybox` (package busybox-static) with a symlink per applet;
- `loadgen` — `loadgen.c` beside this file, compiled statically: memory and CPU on a schedule (see its header).

The output directory is keyed by a digest of every input (the sources, the busybox binary, this module's
`FORMAT`), so an edited `loadgen.c` gives new images and an unchanged one reuses the cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .assets import default_version
from .errors import AssetsNotFoundError, BuildError
from .tools import _go_json, tools_root

FORMAT = "1"  # bump when the image layout written here changes
BUSYBOX = Path("/bin/busybox")
LOADGEN_SOURCE = Path(__file__).with_name("loadgen.c")
REGISTRY = "localhost/ballast"


@dataclass(frozen=True, slots=True)
class Image:
    """One image: its reference and its tarball."""

    ref: str
    tarball: Path


@dataclass(frozen=True, slots=True)
class NodeImages:
    pause: Image
    busybox: Image
    loadgen: Image

    def all(self) -> tuple[Image, ...]:
        return (self.pause, self.busybox, self.loadgen)


def _entry(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, io.BytesIO]:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 0
    return info, io.BytesIO(data)


def _layer(files: dict[str, tuple[bytes, int]], links: dict[str, str]) -> bytes:
    """A reproducible layer tar: directories, `files` (path → (bytes, mode)), symlinks (path → target)."""
    buffer = io.BytesIO()
    dirs = {"tmp", "etc", "proc", "sys", "dev"}
    for path in [*files, *links]:
        parts = path.split("/")[:-1]
        dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in sorted(dirs):
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o1777 if directory == "tmp" else 0o755, 0
            tar.addfile(info)
        passwd = b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n"
        for name, (data, mode) in sorted({**files, "etc/passwd": (passwd, 0o644),
                                          "etc/group": (b"root:x:0:\nnogroup:x:65534:\n", 0o644)}.items()):  # fmt: skip
            tar.addfile(*_entry(name, data, mode))
        for name, target in sorted(links.items()):
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mtime = tarfile.SYMTYPE, target, 0
            tar.addfile(info)
    return buffer.getvalue()


def _blob(body: bytes) -> tuple[str, bytes]:
    return "sha256:" + hashlib.sha256(body).hexdigest(), body


def write_image(out: Path, ref: str, entrypoint: list[str], layer: bytes) -> Image:
    """An OCI image layout tarball that `ctr images import` names `ref` (the containerd name annotation)."""
    layer_digest, _ = _blob(layer)
    config = json.dumps({
        "architecture": "amd64", "os": "linux", "created": "1970-01-01T00:00:00Z",
        "config": {"Entrypoint": entrypoint, "Env": ["PATH=/bin:/usr/bin:/sbin:/usr/sbin"], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }, sort_keys=True).encode()  # fmt: skip
    config_digest, _ = _blob(config)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest,
                   "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest,
                    "size": len(layer)}],
    }, sort_keys=True).encode()  # fmt: skip
    manifest_digest, _ = _blob(manifest)
    index = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest, "size": len(manifest),
        "platform": {"architecture": "amd64", "os": "linux"},
        "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref.rsplit(":", 1)[1]},
    }]}, sort_keys=True).encode()  # fmt: skip
    with tarfile.open(out, "w") as tar:
        tar.addfile(*_entry("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'))
        tar.addfile(*_entry("index.json", index))
        for digest, body in ((layer_digest, layer), (config_digest, config), (manifest_digest, manifest)):
            tar.addfile(*_entry("blobs/sha256/" + digest.removeprefix("sha256:"), body))
    return Image(ref, out)


def _pause_source() -> Path:
    version = default_version()
    info = _go_json(["mod", "download", "-json", f"k8s.io/kubernetes@v{version}"], Path(tempfile.gettempdir()))
    if info.get("Error") or not info.get("Dir"):
        raise BuildError(f"k8s.io/kubernetes v{version} cannot be downloaded: {info.get('Error', 'no Dir')}")
    return Path(info["Dir"]) / "build" / "pause" / "linux" / "pause.c"


def _compile(source: Path, output: Path, defines: tuple[str, ...] = ()) -> bytes:
    if shutil.which("gcc") is None:
        raise AssetsNotFoundError("`gcc` is not installed: it compiles the real node's pause and loadgen images")
    result = subprocess.run(
        ["gcc", "-Os", "-Wall", "-static", *defines, "-o", str(output), str(source)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise BuildError(f"gcc {source} failed (a static build needs libc6-dev):\n{result.stderr.strip()[-2000:]}")
    subprocess.run(["strip", str(output)], check=False, capture_output=True)
    return output.read_bytes()


def _busybox_links() -> dict[str, str]:
    listed = subprocess.run([str(BUSYBOX), "--list"], capture_output=True, text=True, check=True).stdout.split()
    return {f"bin/{applet}": "busybox" for applet in listed if applet != "busybox"}


def find_node_images(*, build: bool = True) -> NodeImages:
    """The three images, built into `~/.cache/ballast/tools/images-<digest>/` when missing."""
    if not BUSYBOX.is_file():
        raise AssetsNotFoundError(f"{BUSYBOX} is missing: install Debian's busybox-static (hack/setup-real-node)")
    pause_source = _pause_source()
    digest = hashlib.sha256()
    for part in (FORMAT.encode(), LOADGEN_SOURCE.read_bytes(), pause_source.read_bytes(), BUSYBOX.read_bytes()):
        digest.update(hashlib.sha256(part).digest())
    directory = tools_root() / f"images-{digest.hexdigest()[:16]}"
    images = NodeImages(
        Image(f"{REGISTRY}/pause:3.10", directory / "pause.tar"),
        Image(f"{REGISTRY}/busybox:1.35", directory / "busybox.tar"),
        Image(f"{REGISTRY}/loadgen:{FORMAT}", directory / "loadgen.tar"),
    )
    if all(image.tarball.is_file() for image in images.all()):
        return images
    if not build:
        raise AssetsNotFoundError(f"the real node's images are not in {directory}; `make real-node-tools` builds them")
    tools_root().mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".images.", dir=tools_root()))
    try:
        pause = _compile(pause_source, stage / "pause", ("-DVERSION=v3.10-ballast",))
        write_image(stage / "pause.tar", images.pause.ref, ["/pause"], _layer({"pause": (pause, 0o755)}, {}))
        busybox = _layer({"bin/busybox": (BUSYBOX.read_bytes(), 0o755)}, _busybox_links())
        write_image(stage / "busybox.tar", images.busybox.ref, ["/bin/sh"], busybox)
        loadgen = _compile(LOADGEN_SOURCE, stage / "loadgen")
        write_image(stage / "loadgen.tar", images.loadgen.ref, ["/loadgen"], _layer({"loadgen": (loadgen, 0o755)}, {}))
        try:
            stage.rename(directory)
        except OSError:
            if not all(image.tarball.is_file() for image in images.all()):  # another run's build won the race
                raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return images


__all__ = [
    "LOADGEN_SOURCE",
    "Image",
    "NodeImages",
    "find_node_images",
    "write_image",
]
