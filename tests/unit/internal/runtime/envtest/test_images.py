"""The real node's images: OCI layout tarballs that `ctr images import` names by their annotation, the same bytes
for the same inputs (so the cache key means something)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

from ballast.runtime.envtest.images import _layer, write_image


def members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_an_image_is_an_oci_layout_whose_blobs_match_their_digests(tmp_path: Path) -> None:
    layer = _layer({"loadgen": (b"\x7fELF fake", 0o755)}, {"bin/sh": "busybox"})
    write_image(tmp_path / "a.tar", "localhost/ballast/loadgen:1", ["/loadgen"], layer)
    files = members(tmp_path / "a.tar")
    assert json.loads(files["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    (entry,) = json.loads(files["index.json"])["manifests"]
    assert entry["annotations"]["io.containerd.image.name"] == "localhost/ballast/loadgen:1"
    for name, body in files.items():
        if name.startswith("blobs/sha256/"):
            assert hashlib.sha256(body).hexdigest() == name.rsplit("/", 1)[1]
    manifest = json.loads(files["blobs/sha256/" + entry["digest"].removeprefix("sha256:")])
    config = json.loads(files["blobs/sha256/" + manifest["config"]["digest"].removeprefix("sha256:")])
    assert config["config"]["Entrypoint"] == ["/loadgen"]
    assert config["rootfs"]["diff_ids"] == [manifest["layers"][0]["digest"]]


def test_a_layer_has_its_files_links_and_directories_and_is_reproducible(tmp_path: Path) -> None:
    files = {"bin/busybox": (b"busybox", 0o755)}
    layer = _layer(files, {"bin/sh": "busybox"})
    assert layer == _layer(files, {"bin/sh": "busybox"})
    with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
        entries = {m.name: m for m in tar.getmembers()}
    assert entries["bin/busybox"].mode == 0o755
    assert entries["bin/sh"].issym()
    assert entries["bin/sh"].linkname == "busybox"
    assert entries["tmp"].isdir()
    assert entries["tmp"].mode == 0o1777
    assert {"etc/passwd", "etc/group", "proc", "sys", "dev"} <= set(entries)
    write_image(tmp_path / "a.tar", "localhost/x:1", ["/bin/sh"], layer)
    write_image(tmp_path / "b.tar", "localhost/x:1", ["/bin/sh"], layer)
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()
