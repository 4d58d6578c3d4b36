"""Built-in Kubernetes types embedded in custom kinds: `PodTemplateSpec`, `JobTemplateSpec`, `ObjectReference`,
`LocalObjectReference`, `ResourceRequirements` (and `Condition`, the `meta/v1` one from `crd.meta`).

    class CronTabSpec(WireModel):
        schedule: str
        job_template: JobTemplateSpec

    class CronTabStatus(WireModel):
        active: list[ObjectReference] | None = None

Schemas. A field of one of these types gets the structural schema controller-gen would embed for the Go type, made
from the API server's own published OpenAPI v3 (`/openapi/v3/api/v1`, `/openapi/v3/apis/batch/v1`), recorded
once into `builtin_<group>_<version>.json` next to this module (only the definitions reachable from the types
here) by `hack/record-builtin-schemas` (`--check` compares). `structural_schema(name)` converts a definition:

- `$ref` and `allOf: [$ref]` are resolved inline (a definition reached again through itself raises
  `StructuralSchemaError`: a CRD schema cannot recurse);
- `intstr.IntOrString` (`format: int-or-string`) and `resource.Quantity` (`oneOf` string/number) become
  `x-kubernetes-int-or-string: true` with `anyOf: [integer, string]`, as controller-gen writes them;
- the `metadata` of a template (`meta/v1.ObjectMeta`) becomes `type: object` with `labels`, `annotations`, `name`,
  `namespace` and `finalizers` — controller-gen's `generateEmbeddedObjectMeta=true` form; its default, a bare
  `type: object`, would let the API server prune the template's labels;
- kept: descriptions (in full, as controller-gen does without `maxDescLen`), `type`, `format`, `required`,
  bounds and lengths, `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`, `x-kubernetes-map-type`,
  `x-kubernetes-preserve-unknown-fields`; dropped: what a CRD refuses or the API server's schema only informs
  about — a `default` on a required property (openapi-gen writes the Go zero value for every non-omitempty
  field: kept, `default: ""` would fill a container's missing `name` and hide its absence), and a zero-value
  default (`""`, `0`, `false`, `{}`, `[]`, e.g. `resources: {}` on every container) except on a list-map key (the
  API server wants those required or defaulted: `imagePullSecrets[*].name` keeps `default: ""`); other defaults,
  the Go `+default` markers such as a container port's `protocol: TCP`, are kept as controller-gen keeps them;
  `enum` (not in controller-gen's output, and a newer server's new value would be refused),
  the strategic-merge-patch and union markers, `x-kubernetes-group-version-kind`, and `additionalProperties` next
  to `properties`.

Models. Each type is the generated one of `ballast.runtime.crd.kinds` (`hack/gen-builtin-models`, from the same
recorded definitions), re-exported here: every field typed, a field unknown to the model refused when built in
code and kept when decoded from the server (`Model.from_wire(wire).to_wire() == wire` for anything the API server
stores, a newer one's fields included: docs/design.md, difference 72), so a read-modify-write or a Job built
from a stored template drops nothing. The models' own Python annotations never shape the CRD schema; the
recorded schema does.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .kinds.base import BuiltinModel, Quantity
from .kinds.batch_v1 import JobSpec, JobTemplateSpec
from .kinds.core_v1 import (
    Container,
    ContainerPort,
    EnvVar,
    LocalObjectReference,
    ObjectReference,
    PodSpec,
    PodTemplateSpec,
    ResourceClaim,
    ResourceRequirements,
    Volume,
    VolumeMount,
)
from .meta import Condition, Conditions
from .schema import Schema, StructuralSchemaError

KUBERNETES_VERSION = "1.37.2"
"""The kube-apiserver the recorded schemas come from (envtest's default)."""

DOCUMENTS: Mapping[str, str] = {
    "core/v1": "/openapi/v3/api/v1",
    "batch/v1": "/openapi/v3/apis/batch/v1",
    "apps/v1": "/openapi/v3/apis/apps/v1",
}
"""Each recorded group-version and the API server path of its OpenAPI v3 document."""

ROOTS: Mapping[str, tuple[str, ...]] = {
    "core/v1": (
        "io.k8s.api.core.v1.PodTemplateSpec",
        "io.k8s.api.core.v1.ObjectReference",
        "io.k8s.api.core.v1.LocalObjectReference",
        "io.k8s.api.core.v1.ResourceRequirements",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
        "io.k8s.api.core.v1.ConfigMap",
        "io.k8s.api.core.v1.PersistentVolumeClaim",
        "io.k8s.api.core.v1.Secret",
        "io.k8s.api.core.v1.Service",
        "io.k8s.api.core.v1.ServiceAccount",
    ),
    "batch/v1": ("io.k8s.api.batch.v1.JobTemplateSpec", "io.k8s.api.batch.v1.Job"),
    "apps/v1": ("io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.StatefulSet"),
}
"""The definitions recorded from each document, with all they reach (definitions an earlier document holds are
not recorded again)."""

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_NOT_RECORDED = frozenset({OBJECT_META})  # replaced by EMBEDDED_OBJECT_META, never read

_PREFIX = "#/components/schemas/"
_DIRECTORY = Path(__file__).resolve().parent

EMBEDDED_OBJECT_META: Schema = {
    "type": "object",
    "properties": {
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "name": {"type": "string"},
        "namespace": {"type": "string"},
    },
}
"""The schema of a template's `metadata` (controller-gen's embedded ObjectMeta)."""

_KEPT = {
    "type", "format", "description", "properties", "required", "items", "additionalProperties",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
    "nullable", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
}  # fmt: skip
_NONE: frozenset[str] = frozenset()
_INT_OR_STRING_SCHEMA: Schema = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}


def data_file(group_version: str) -> Path:
    """Where the definitions of `group_version` (`core/v1`, `batch/v1`) are recorded."""
    return _DIRECTORY / f"builtin_{group_version.replace('/', '_')}.json"


@functools.cache
def recorded_definitions() -> Mapping[str, Schema]:
    """Every recorded definition by its OpenAPI name (`io.k8s.api.core.v1.PodSpec`), read once."""
    definitions: dict[str, Schema] = {}
    for group_version in DOCUMENTS:
        definitions.update(json.loads(data_file(group_version).read_text())["schemas"])
    return definitions


def structural_schema(name: str, definitions: Mapping[str, Schema] | None = None) -> Schema:
    """The CRD-ready structural schema of the definition `name`, its references resolved (see the module)."""
    return _convert({"$ref": _PREFIX + name}, recorded_definitions() if definitions is None else definitions, ())


def _reference(node: Mapping[str, Any]) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).removeprefix(_PREFIX)
    branches = node.get("allOf")
    if isinstance(branches, list) and len(branches) == 1 and "$ref" in branches[0]:
        return str(branches[0]["$ref"]).removeprefix(_PREFIX)
    return None


def _convert(
    node: Mapping[str, Any], definitions: Mapping[str, Schema], stack: tuple[str, ...], keys: frozenset[str] = _NONE
) -> Schema:
    # `keys`: the list-map keys, when `node` is the item of a list-type map (their zero defaults are kept)
    own = {key: value for key, value in node.items() if key not in ("$ref", "allOf")}
    name = _reference(node)
    if name is not None:
        if name in stack:
            raise StructuralSchemaError(f"{name} refers to itself ({' -> '.join((*stack, name))})")
        if name == OBJECT_META:
            target: Schema = EMBEDDED_OBJECT_META
        elif name in definitions:
            target = _convert(definitions[name], definitions, (*stack, name), keys)
        else:
            raise StructuralSchemaError(f"{name} is not a recorded definition (hack/record-builtin-schemas)")
        # the field's own description says more about the use than the type's
        return {**target, **_convert(own, definitions, stack)} if own else dict(target)
    if own.get("format") == "int-or-string" or _scalar_union(own):
        kept = {key: value for key, value in own.items() if key in _KEPT and key not in {"format", "type"}}
        return {**kept, **_INT_OR_STRING_SCHEMA}
    out: Schema = {key: value for key, value in own.items() if key in _KEPT or key == "default"}
    if "properties" in out:
        required = set(out.get("required", ()))
        properties = {}
        for child_name, child in out["properties"].items():
            converted = _convert(child, definitions, stack)
            default = converted.get("default", None)
            if "default" in converted and (child_name in required or (_zero(default) and child_name not in keys)):
                del converted["default"]
            properties[child_name] = converted
        out["properties"] = properties
        out.pop("additionalProperties", None)
    if isinstance(out.get("items"), Mapping):
        item_keys = frozenset(
            out.get("x-kubernetes-list-map-keys", ()) if out.get("x-kubernetes-list-type") == "map" else ()
        )
        out["items"] = _convert(out["items"], definitions, stack, item_keys)
    if isinstance(out.get("additionalProperties"), Mapping):
        out["additionalProperties"] = _convert(out["additionalProperties"], definitions, stack)
    elif "additionalProperties" in out:
        del out["additionalProperties"]  # `true`/`false`: not structural
    return out


def _zero(value: Any) -> bool:
    return value in ("", {}, []) or (value is False) or (type(value) is int and value == 0)


def _scalar_union(node: Mapping[str, Any]) -> bool:
    branches = node.get("oneOf", node.get("anyOf"))
    if not isinstance(branches, list) or not branches:
        return False
    kinds = {branch.get("type") for branch in branches}
    return len(kinds) == len(branches) and kinds <= {"string", "number", "integer"} and "string" in kinds


def reachable(schemas: Mapping[str, Schema], roots: Iterable[str], skip: Iterable[str] = ()) -> dict[str, Schema]:
    """The definitions of `schemas` that `roots` reach through `$ref`, `roots` included, minus those in `skip`
    (which are not followed either)."""
    skipped = set(skip) | _NOT_RECORDED
    found: dict[str, Schema] = {}
    pending = [name for name in roots if name not in skipped]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        if name not in schemas:
            raise KeyError(f"{name} is not in the OpenAPI document")
        found[name] = schemas[name]
        pending.extend(ref for ref in _references(schemas[name]) if ref not in found and ref not in skipped)
    return dict(sorted(found.items()))


def _references(node: Any) -> Iterable[str]:
    if isinstance(node, Mapping):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"].removeprefix(_PREFIX)
        for value in node.values():
            yield from _references(value)
    elif isinstance(node, list):
        for value in node:
            yield from _references(value)


def record(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The text of each recorded file (`data_file(gv).name` → JSON) from the API server's OpenAPI v3 documents
    (by group-version, as `DOCUMENTS` lists them): compact JSON, one definition a line, keys sorted."""
    files: dict[str, str] = {}
    taken: set[str] = set()
    for group_version, path in DOCUMENTS.items():
        schemas = documents[group_version]["components"]["schemas"]
        kept = reachable(schemas, ROOTS[group_version], skip=taken)
        taken |= kept.keys()
        lines = [json.dumps(name) + ":" + _compact(schema) for name, schema in kept.items()]
        header = _compact({"kubernetesVersion": KUBERNETES_VERSION, "source": path})[:-1]
        files[data_file(group_version).name] = header + ',"schemas":{\n' + ",\n".join(lines) + "\n}}\n"
    return files


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


__all__ = [
    "DOCUMENTS",
    "EMBEDDED_OBJECT_META",
    "KUBERNETES_VERSION",
    "ROOTS",
    "BuiltinModel",
    "Condition",
    "Conditions",
    "Container",
    "ContainerPort",
    "EnvVar",
    "JobSpec",
    "JobTemplateSpec",
    "LocalObjectReference",
    "ObjectReference",
    "PodSpec",
    "PodTemplateSpec",
    "Quantity",
    "ResourceClaim",
    "ResourceRequirements",
    "Volume",
    "VolumeMount",
    "data_file",
    "reachable",
    "record",
    "recorded_definitions",
    "structural_schema",
]
