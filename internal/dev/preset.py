"""The preset objects `make dev` installs: plain YAML under `config/samples/<preset>/`, checked by the API models.

Every document is validated through the pydantic model of its kind (`ballast.api.ballast.v1`), so a typo in a
sample fails here, naming the file and the field, instead of being applied and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy, MetricsSource, ResourcePolicy
from ballast.api.customresource import CustomResource

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "config" / "samples"
"""`config/samples` of the source tree this module runs from (present in a checkout, not in a wheel)."""
LOCAL_TESTING = "local-testing"
KINDS: dict[str, type[CustomResource]] = {
    kind.KIND: kind for kind in (BallastConfig, MetricsSource, ClusterResourcePolicy, ResourcePolicy)
}
SKIPPED_FILES = ("kustomization.yaml",)


class PresetError(ValueError):
    """A preset directory that is missing, or a document that is not a valid Ballast object."""


@dataclass(frozen=True, slots=True)
class Preset:
    """The validated objects of one preset, in file order."""

    name: str
    objects: tuple[CustomResource, ...]

    def of_kind(self, kind: type[CustomResource]) -> list[Any]:
        return [o for o in self.objects if isinstance(o, kind)]

    def policy(self, name: str = "default") -> ClusterResourcePolicy:
        """The ClusterResourcePolicy called `name` (raises PresetError when the preset has none)."""
        for policy in self.of_kind(ClusterResourcePolicy):
            if policy.metadata.name == name:
                return policy  # type: ignore[no-any-return]
        raise PresetError(f"preset {self.name}: no ClusterResourcePolicy {name!r}")


def object_path(obj: CustomResource) -> str:
    """The REST path of `obj` (cluster-scoped kinds, or namespaced ones with their namespace)."""
    base = f"/apis/{obj.GROUP}/{obj.VERSION}"
    name = obj.metadata.name
    if obj.SCOPE == "Namespaced":
        return f"{base}/namespaces/{obj.metadata.namespace}/{obj.PLURAL}/{name}"
    return f"{base}/{obj.PLURAL}/{name}"


def load_preset(directory: Path) -> Preset:
    """Read and validate every YAML document under `directory` (kustomization.yaml aside), sorted by file name.

    Raises PresetError naming the file for a missing directory, a document of another kind, or a validation error.
    """
    if not directory.is_dir():
        raise PresetError(f"preset directory {directory} does not exist (run from a checkout of the repository)")
    objects: list[CustomResource] = []
    for path in sorted(directory.glob("*.yaml")):
        if path.name in SKIPPED_FILES:
            continue
        for document in yaml.safe_load_all(path.read_text()):
            if document is None:
                continue
            kind = KINDS.get(str(document.get("kind")))
            if kind is None:
                raise PresetError(f"{path}: kind {document.get('kind')!r} is not a Ballast configuration kind")
            try:
                objects.append(kind.model_validate(document))
            except ValidationError as exc:
                raise PresetError(f"{path}: {exc}") from exc
    if not objects:
        raise PresetError(f"preset directory {directory} holds no objects")
    return Preset(directory.name, tuple(objects))
