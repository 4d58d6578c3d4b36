"""A recorded fleet as the simulator's input (`ballast simulate --usage FILE`): a platform team's own metrics,
replayed through both recommenders instead of the synthetic shapes.

Two files describe a recording. The usage CSV (`timestamp,namespace,pod,container,resource,value`, rows in any
order) holds what was measured; the side file (YAML) holds what the CSV cannot: each pod's owner, labels, node and
container requests/limits, and the nodes' allocatable. `side_file_from_cluster` writes the side file from a live
cluster's Pods and Nodes.

How a recording becomes a `model.Fleet` and a `model.Usage`:

- a workload is a pod owner in its namespace; its `replicas` is the most pods alive at once. Pods are given replica
  slots in the order of their first sample, each the lowest slot free by then, so a pod that replaces an earlier
  one (a rollout, an eviction) takes over that slot's stream, as `model.Slot` says;
- samples are placed on the 15 s grid from the first timestamp: a sample counts for its step (the latest one when
  a step has several), a step without a sample holds the previous value, and a slot is alive only from its pod's
  first sample to its last (`RecordedUsage.alive`, `started`) — the run learns from this when a pod exists;
- the values are kept sparse, in proportion to the samples and not to slots × steps: one sorted array of
  `(stream, step)` keys and their float64 values, where a stream is one slot's resource. `at(step)` finds every
  stream's value with one vectorised `searchsorted`, so asking for steps in any order gives the same matrix.

Every bad input fails with `ReplayError`, naming the file, the line (CSV) or the field path (side file), and what
was wrong: a recording is never replayed in part.
"""

from __future__ import annotations

import csv
import json
import math
import re
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
import yaml
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from pydantic.functional_validators import BeforeValidator
from pydantic_core import PydanticCustomError

from ballast.internal.quantity import QuantityError, parse_quantity

from .model import RECORDED_SHAPE, RESOURCES, STEP_SECONDS, App, ContainerSpec, Fleet, NodeSpec, Slot, Workload

if TYPE_CHECKING:
    from _csv import Reader as CsvReader

HEADER: tuple[str, ...] = ("timestamp", "namespace", "pod", "container", "resource", "value")
CONTROLLER_LABELS: tuple[str, ...] = (
    "pod-template-hash",
    "controller-revision-hash",
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
)
"""Labels a controller sets per pod or per revision: not part of an app's template."""
SIDE_FILE_COMMENT = "# Pods and nodes of a recorded fleet, for `ballast simulate --usage` (see docs/simulate.md).\n"

_RESOURCE_INDEX = {resource: index for index, resource in enumerate(RESOURCES)}
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_UNIX_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})"
)
_RESOURCE_CHOICES = ", ".join(RESOURCES[:-1]) + " or " + RESOURCES[-1]
_BEFORE_ANY = -math.inf
"""The time of the zero a pod's streams start from: any real sample in the same step sorts after it and wins."""


def _quote(text: str) -> str:
    """`"text"`, as the messages quote what a file holds (JSON's escapes for what would not print)."""
    return json.dumps(text, ensure_ascii=False)


class ReplayError(ValueError):
    """A usage CSV or a side file that cannot be replayed; the message names the file, the line or field, and why."""


# ------------------------------------------------------------------------------------------------ side file


def _quantity(value: object) -> float:
    """A Kubernetes quantity (`250m`, `512Mi`, or a plain YAML number) in base units; never negative."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise PydanticCustomError("quantity", "expected a Kubernetes quantity such as '250m' or '512Mi'")
    try:
        parsed = parse_quantity(value if isinstance(value, str) else repr(value))
    except QuantityError as exc:
        raise PydanticCustomError("quantity", "{reason}", {"reason": str(exc)}) from None
    if parsed < 0:
        raise PydanticCustomError("quantity", "{value} is negative", {"value": _quote(str(value))})
    return float(parsed)


Quantity = Annotated[float, BeforeValidator(_quantity)]
ResourceName = Literal["cpu", "memory", "ephemeral-storage"]
Name = Annotated[str, StringConstraints(min_length=1)]


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OwnerDoc(_Document):
    """The workload a pod belongs to: a Deployment, a StatefulSet, … (`kind` and `name` in the pod's namespace)."""

    kind: Name
    name: Name


class ContainerDoc(_Document):
    name: Name
    requests: dict[ResourceName, Quantity] = Field(default_factory=dict)
    limits: dict[ResourceName, Quantity] = Field(default_factory=dict)


class PodDoc(_Document):
    namespace: Name
    name: Name
    labels: dict[str, str] = Field(default_factory=dict)
    owner: OwnerDoc
    node: Name | None = None
    containers: list[ContainerDoc] = Field(min_length=1)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class NodeDoc(_Document):
    name: Name
    allocatable: dict[ResourceName, Quantity]


class SideFile(_Document):
    """The side file: every recorded pod and every node (and, optionally, the fleet's identity labels)."""

    identity_labels: tuple[str, ...] | None = Field(default=None, alias="identityLabels")
    nodes: list[NodeDoc] = Field(min_length=1)
    pods: list[PodDoc] = Field(min_length=1)


def load_side_file(path: Path) -> SideFile:
    """Read and validate a side file; raises ReplayError naming the file and the field path of the first fault."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise ReplayError(f"{path}: not valid YAML: {exc}") from exc
    try:
        side = SideFile.model_validate(document)
    except ValidationError as exc:
        raise ReplayError("\n".join(_describe_errors(path, exc))) from exc
    _check_references(path, side)
    return side


def _describe_errors(path: Path, exc: ValidationError) -> Iterator[str]:
    for error in exc.errors():
        where = _field_path(error["loc"])
        yield f"{path}: {where}: {error['msg']}" if where else f"{path}: {error['msg']}"


def _field_path(loc: tuple[int | str, ...]) -> str:
    """`('pods', 3, 'containers', 0, 'requests', 'cpu')` → `pods[3].containers[0].requests.cpu`."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "[key]":
            text += " (key)"  # pydantic's marker for a mapping key that failed, not its value
        else:
            text += f".{part}" if text else part
    return text


def _check_references(path: Path, side: SideFile) -> None:
    """What one document's schema cannot say: names unique, and every pod's node among the nodes."""
    nodes: dict[str, int] = {}
    for index, node in enumerate(side.nodes):
        if node.name in nodes:
            raise ReplayError(
                f"{path}: nodes[{index}].name: node {_quote(node.name)} is listed twice (nodes[{nodes[node.name]}])"
            )
        nodes[node.name] = index
    pods: dict[str, int] = {}
    for index, pod in enumerate(side.pods):
        if pod.key in pods:
            raise ReplayError(f"{path}: pods[{index}]: pod {pod.key} is listed twice (pods[{pods[pod.key]}])")
        pods[pod.key] = index
        if pod.node is not None and pod.node not in nodes:
            raise ReplayError(f"{path}: pods[{index}].node: node {_quote(pod.node)} is not among the nodes")
        names: set[str] = set()
        for position, container in enumerate(pod.containers):
            if container.name in names:
                where = f"pods[{index}].containers[{position}].name"
                raise ReplayError(f"{path}: {where}: container {_quote(container.name)} is listed twice")
            names.add(container.name)


# ------------------------------------------------------------------------------------------------ usage CSV


class _CellError(Exception):
    """One cell of a row is wrong; the reader adds the file and line."""

    def __init__(self, column: str, reason: str) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason


@dataclass(slots=True)
class _Samples:
    """The CSV's samples as columns (compact while streaming): `stream` is `pod_container * 3 + resource`."""

    times: array[float]
    streams: array[int]
    values: array[float]
    lines: array[int]


@dataclass(frozen=True, slots=True)
class _PodContainer:
    pod: int
    container: str


class _Catalogue:
    """The side file's pods and containers by the names the CSV uses, as the dense ids samples carry."""

    def __init__(self, side: SideFile) -> None:
        self.side = side
        self.pod_index = {(pod.namespace, pod.name): index for index, pod in enumerate(side.pods)}
        self.pod_containers = [
            _PodContainer(index, container.name) for index, pod in enumerate(side.pods) for container in pod.containers
        ]
        self.pod_container_index = {(pc.pod, pc.container): index for index, pc in enumerate(self.pod_containers)}

    def stream(self, namespace: str, pod: str, container: str, resource: str, side_path: Path) -> int:
        pod_index = self.pod_index.get((namespace, pod))
        if pod_index is None:
            raise _CellError("pod", f"pod {namespace}/{pod} is not in {side_path}")
        pod_container = self.pod_container_index.get((pod_index, container))
        if pod_container is None:
            raise _CellError("container", f"pod {namespace}/{pod} has no container {_quote(container)} in {side_path}")
        return pod_container * len(RESOURCES) + _resource(resource)

    def describe(self, stream: int) -> str:
        pod_container = self.pod_containers[stream // len(RESOURCES)]
        pod = self.side.pods[pod_container.pod]
        return f"{pod.key} container {_quote(pod_container.container)} {RESOURCES[stream % len(RESOURCES)]}"


def _resource(text: str) -> int:
    index = _RESOURCE_INDEX.get(text)
    if index is None:
        raise _CellError("resource", f"unknown resource {_quote(text)} (expected {_RESOURCE_CHOICES})")
    return index


def _timestamp(text: str) -> float:
    """Unix seconds of an RFC 3339 time (`2026-03-01T12:00:15Z`) or of plain unix seconds (`1772366415`)."""
    if _UNIX_SECONDS.fullmatch(text):
        return float(text)
    if _RFC3339.fullmatch(text):
        try:
            return datetime.fromisoformat(text.upper().replace(" ", "T")).timestamp()
        except ValueError:
            pass  # well-formed but not a date (month 13): reported below
    raise _CellError("timestamp", f"not an RFC 3339 time or unix seconds: {_quote(text)}")


def _value(text: str) -> float:
    """A plain decimal: cores for cpu, bytes otherwise; finite and not negative."""
    if _NON_FINITE.fullmatch(text):
        raise _CellError("value", f"not finite: {_quote(text)}")
    if not _DECIMAL.fullmatch(text):
        raise _CellError("value", f"not a number: {_quote(text)}")
    value = float(text)
    if not math.isfinite(value):
        raise _CellError("value", f"not finite: {_quote(text)}")  # 1e999
    if value < 0:
        raise _CellError("value", f"negative: {_quote(text)}")
    return value


def _check_header(path: Path, header: list[str]) -> None:
    if tuple(header) == HEADER:
        return
    expected = ",".join(HEADER)
    missing = [column for column in HEADER if column not in header]
    extra = [column for column in header if column not in HEADER]
    if missing:
        reason = "missing column " + ", ".join(f'"{column}"' for column in missing)
    elif extra:
        reason = "extra column " + ", ".join(f'"{column}"' for column in extra)
    else:
        reason = "columns out of order"
    raise ReplayError(f"{path}:1: header: {reason} (expected {expected})")


def _read_usage(path: Path, catalogue: _Catalogue, side_path: Path) -> _Samples:
    """Stream the CSV into columns; raises ReplayError at the first bad row."""
    samples = _Samples(array("d"), array("q"), array("d"), array("q"))
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            try:
                _read_rows(path, reader, catalogue, side_path, samples)
            except (csv.Error, UnicodeDecodeError) as exc:
                raise ReplayError(f"{path}:{reader.line_num + 1}: not a CSV row: {exc}") from exc
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror}") from exc
    if not samples.times:
        raise ReplayError(f"{path}: no samples after the header")
    return samples


def _read_rows(path: Path, reader: CsvReader, catalogue: _Catalogue, side_path: Path, samples: _Samples) -> None:
    header = next(reader, None)
    if header is None:
        raise ReplayError(f"{path}: empty file (expected the header {','.join(HEADER)})")
    _check_header(path, header)
    last_text, last_time = "", 0.0  # exports list many rows per scrape: parse each timestamp once
    for row in reader:
        if not row:
            continue  # a blank line
        line = reader.line_num
        if len(row) != len(HEADER):
            raise ReplayError(f"{path}:{line}: {len(row)} columns, expected {len(HEADER)} ({','.join(HEADER)})")
        timestamp, namespace, pod, container, resource, value = row
        try:
            if timestamp != last_text:
                last_text, last_time = timestamp, _timestamp(timestamp)
            _require_names(namespace=namespace, pod=pod, container=container)
            stream = catalogue.stream(namespace, pod, container, resource, side_path)
            measured = _value(value)
        except _CellError as exc:
            raise ReplayError(f'{path}:{line}: column "{exc.column}": {exc.reason}') from None
        samples.times.append(last_time)
        samples.streams.append(stream)
        samples.values.append(measured)
        samples.lines.append(line)


def _require_names(**names: str) -> None:
    for column, text in names.items():
        if not text:
            raise _CellError(column, "empty")


def _check_duplicates(path: Path, catalogue: _Catalogue, times: NDArray[np.float64], samples: _Samples) -> None:
    """Two rows for one (timestamp, pod, container, resource): name the first such pair a reader would meet."""
    streams = np.frombuffer(samples.streams, dtype=np.int64)
    lines = np.frombuffer(samples.lines, dtype=np.int64)
    order = np.lexsort((lines, times, streams))
    same = (streams[order[1:]] == streams[order[:-1]]) & (times[order[1:]] == times[order[:-1]])
    if not same.any():
        return
    firsts, seconds = order[:-1][same], order[1:][same]
    pair = int(np.argmin(lines[seconds]))
    first, second = int(firsts[pair]), int(seconds[pair])
    when = datetime.fromtimestamp(float(times[second]), UTC).isoformat().replace("+00:00", "Z")
    raise ReplayError(
        f"{path}:{lines[second]}: duplicate sample of {catalogue.describe(int(streams[second]))} at {when} "
        f"(also on line {lines[first]})"
    )


# ---------------------------------------------------------------------------------------------- the replay


@dataclass(frozen=True, slots=True)
class PodSpan:
    """One recorded pod in a slot: alive from the step of its first sample to the step of its last (inclusive)."""

    pod: str
    first_step: int
    last_step: int


class RecordedUsage:
    """`model.Usage` from a recording: the sampled values held between samples, zero where no pod runs.

    Built by `load_replay`. `keys` are sorted `stream * steps + step` (a stream is `slot * 3 + resource`), one per
    stream and step that has a value; `values` are those values (float64).
    """

    def __init__(
        self,
        slots: Sequence[Slot],
        spans: Sequence[Sequence[PodSpan]],
        steps: int,
        keys: NDArray[np.int64],
        values: NDArray[np.float64],
    ) -> None:
        self._slots = tuple(slots)
        self._spans = tuple(tuple(slot_spans) for slot_spans in spans)
        self.steps = steps
        self._keys = keys
        self._values = values
        stream_count = len(self._slots) * len(RESOURCES)
        self._stream_base = np.arange(stream_count, dtype=np.int64) * steps
        self._span_slot = np.array([i for i, ss in enumerate(self._spans) for _ in ss], dtype=np.int64)
        self._span_first = np.array([s.first_step for ss in self._spans for s in ss], dtype=np.int64)
        self._span_last = np.array([s.last_step for ss in self._spans for s in ss], dtype=np.int64)
        self.first_step = np.array([ss[0].first_step if ss else -1 for ss in self._spans], dtype=np.int64)
        """Per slot: the step its first pod starts (-1: no recorded pod fills the slot)."""
        self.last_step = np.array([ss[-1].last_step if ss else -1 for ss in self._spans], dtype=np.int64)
        """Per slot: the last step of its last pod (-1: no recorded pod fills the slot)."""

    @property
    def slots(self) -> Sequence[Slot]:
        return self._slots

    @property
    def samples(self) -> int:
        """How many values are stored (one per stream and sampled step, plus each pod's starting zero)."""
        return int(self._keys.size)

    def spans(self, slot: int) -> tuple[PodSpan, ...]:
        """The pods that filled `slot`, in time order."""
        return self._spans[slot]

    def pod_at(self, slot: int, step: int) -> str | None:
        """The recorded pod (`namespace/name`) alive in `slot` at `step`, None when none is."""
        return next((s.pod for s in self._spans[slot] if s.first_step <= step <= s.last_step), None)

    def alive(self, step: int) -> NDArray[np.bool_]:
        """Which slots have a recorded pod at `step`."""
        alive = np.zeros(len(self._slots), dtype=np.bool_)
        current = (self._span_first <= step) & (step <= self._span_last)
        alive[self._span_slot[current]] = True
        return alive

    def started(self, step: int) -> NDArray[np.bool_]:
        """Which slots get a new pod at `step` (its first sample): the run creates, and admits, a pod there."""
        started = np.zeros(len(self._slots), dtype=np.bool_)
        started[self._span_slot[self._span_first == step]] = True
        return started

    def at(self, step: int, age_steps: NDArray[np.int64]) -> NDArray[np.float64]:
        """The recorded usage at `step` (`(len(slots), 3)`); `age_steps` is ignored: restarts are in the data."""
        if not 0 <= step < self.steps or self._keys.size == 0:
            return np.zeros((len(self._slots), len(RESOURCES)))
        found = np.searchsorted(self._keys, self._stream_base + step, side="right") - 1
        clipped = np.maximum(found, 0)
        own = (found >= 0) & (
            self._keys[clipped] >= self._stream_base
        )  # the key found is this stream's, not a previous one's
        matrix = np.where(own, self._values[clipped], 0.0).reshape(len(self._slots), len(RESOURCES))
        matrix[~self.alive(step)] = 0.0
        return matrix


@dataclass(frozen=True, slots=True)
class Replay:
    """A recorded fleet ready to run: the fleet, its usage, and when step 0 was (unix seconds of the first sample).

    `unsampled_pods` are side-file pods without a sample (not part of the replay; the CLI may warn about them).
    """

    fleet: Fleet
    usage: RecordedUsage
    start_s: float
    unsampled_pods: tuple[str, ...] = ()


@dataclass(slots=True)
class _RecordedPod:
    index: int
    doc: PodDoc
    first_step: int
    last_step: int
    replica: int = -1


@dataclass(slots=True)
class _RecordedWorkload:
    namespace: str
    owner: OwnerDoc
    pods: list[_RecordedPod]
    replicas: int = 0

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.owner.name}"


def load_replay(usage_csv: Path, side_file: Path) -> Replay:
    """Read a recording (usage CSV and side file) into a fleet and its usage; raises ReplayError on bad input."""
    side = load_side_file(side_file)
    catalogue = _Catalogue(side)
    samples = _read_usage(usage_csv, catalogue, side_file)
    times = np.frombuffer(samples.times, dtype=np.float64)
    _check_duplicates(usage_csv, catalogue, times, samples)
    start = float(times.min())
    steps_of_samples = np.floor((times - start) / STEP_SECONDS).astype(np.int64)
    steps = int(steps_of_samples.max()) + 1
    streams = np.frombuffer(samples.streams, dtype=np.int64)
    pod_of_sample = np.array([pc.pod for pc in catalogue.pod_containers], dtype=np.int64)[streams // len(RESOURCES)]
    recorded = _recorded_pods(side, pod_of_sample, steps_of_samples)
    workloads = _workloads(side_file, recorded)
    slots, spans, slot_index = _slots(workloads)
    pod_container_slot = _pod_container_slots(catalogue, recorded, slot_index)
    recorded_values = np.frombuffer(samples.values, dtype=np.float64)
    keys, values = _sparse_values(streams, steps_of_samples, times, recorded_values, pod_container_slot, spans, steps)
    sampled = {pod.index for pod in recorded}
    unsampled = tuple(pod.key for index, pod in enumerate(side.pods) if index not in sampled)
    return Replay(_fleet(side, workloads, steps), RecordedUsage(slots, spans, steps, keys, values), start, unsampled)


def _fleet(side: SideFile, workloads: list[_RecordedWorkload], steps: int) -> Fleet:
    fleet = Fleet(
        workloads=tuple(_workload(w, steps) for w in workloads),
        nodes=tuple(NodeSpec(node.name, _amounts(node.allocatable)) for node in side.nodes),
        duration_s=steps * STEP_SECONDS,
    )
    if side.identity_labels is None:
        return fleet  # the simulator's default identity labels
    return replace(fleet, identity_labels=side.identity_labels)


def _recorded_pods(side: SideFile, pod_of_sample: NDArray[np.int64], steps: NDArray[np.int64]) -> list[_RecordedPod]:
    """Every side-file pod with samples, with the steps of its first and last sample."""
    count = len(side.pods)
    first = np.full(count, np.iinfo(np.int64).max, dtype=np.int64)
    last = np.full(count, -1, dtype=np.int64)
    np.minimum.at(first, pod_of_sample, steps)
    np.maximum.at(last, pod_of_sample, steps)
    return [_RecordedPod(int(i), side.pods[i], int(first[i]), int(last[i])) for i in np.flatnonzero(last >= 0)]


def _workloads(side_path: Path, pods: list[_RecordedPod]) -> list[_RecordedWorkload]:
    """Group pods by owner (in their namespace), in a fixed order; give each pod its replica slot."""
    groups: dict[tuple[str, str], _RecordedWorkload] = {}
    for pod in pods:
        key = (pod.doc.namespace, pod.doc.owner.name)
        workload = groups.setdefault(key, _RecordedWorkload(pod.doc.namespace, pod.doc.owner, []))
        if workload.owner.kind != pod.doc.owner.kind:
            raise ReplayError(
                f"{side_path}: pods[{pod.index}].owner: {pod.doc.owner.kind} {pod.doc.owner.name} has the name of "
                f"{workload.owner.kind} {workload.owner.name} in namespace {pod.doc.namespace} "
                f"(pods[{workload.pods[0].index}]); a replay names workloads by namespace and name"
            )
        workload.pods.append(pod)
    workloads = [groups[key] for key in sorted(groups)]
    for workload in workloads:
        _assign_replicas(workload)
    return workloads


def _assign_replicas(workload: _RecordedWorkload) -> None:
    """By first sample, each pod takes the lowest replica slot whose previous pod has ended: as few slots as the
    most pods alive at once, and a replacement pod continues the stream of the pod it replaced."""
    workload.pods.sort(key=lambda pod: (pod.first_step, pod.doc.name))
    slot_ends: list[int] = []
    for pod in workload.pods:
        free = next((replica for replica, end in enumerate(slot_ends) if end < pod.first_step), None)
        if free is None:
            free = len(slot_ends)
            slot_ends.append(pod.last_step)
        slot_ends[free] = pod.last_step
        pod.replica = free
    workload.replicas = len(slot_ends)


def _container_names(workload: _RecordedWorkload) -> list[str]:
    """The first pod's containers, then any a later pod adds (a changed template keeps its data)."""
    names: list[str] = []
    for pod in workload.pods:
        names.extend(c.name for c in pod.doc.containers if c.name not in names)
    return names


def _slots(
    workloads: list[_RecordedWorkload],
) -> tuple[list[Slot], list[list[PodSpan]], dict[tuple[str, int, str], int]]:
    """Every (workload, replica, container) slot, with the pods that fill it in time order."""
    slots: list[Slot] = []
    spans: list[list[PodSpan]] = []
    index: dict[tuple[str, int, str], int] = {}
    for workload in workloads:
        for replica in range(workload.replicas):
            for container in _container_names(workload):
                index[(workload.key, replica, container)] = len(slots)
                slots.append(Slot(workload.key, replica, container))
                spans.append([])
        for pod in workload.pods:  # sorted by first step
            for spec in pod.doc.containers:
                span = PodSpan(pod.doc.key, pod.first_step, pod.last_step)
                spans[index[(workload.key, pod.replica, spec.name)]].append(span)
    return slots, spans, index


def _pod_container_slots(
    catalogue: _Catalogue, pods: list[_RecordedPod], slot_index: dict[tuple[str, int, str], int]
) -> NDArray[np.int64]:
    """The slot of each side-file pod container (-1 for pods without samples)."""
    replica_of = {pod.index: (f"{pod.doc.namespace}/{pod.doc.owner.name}", pod.replica) for pod in pods}
    result = np.full(len(catalogue.pod_containers), -1, dtype=np.int64)
    for position, pc in enumerate(catalogue.pod_containers):
        if pc.pod in replica_of:
            workload, replica = replica_of[pc.pod]
            result[position] = slot_index[(workload, replica, pc.container)]
    return result


def _sparse_values(
    streams: NDArray[np.int64],
    steps_of_samples: NDArray[np.int64],
    times: NDArray[np.float64],
    values: NDArray[np.float64],
    pod_container_slot: NDArray[np.int64],
    spans: list[list[PodSpan]],
    steps: int,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The samples as sorted `(slot stream, step)` keys, one value per key: the latest sample of the step.

    Each pod also starts every stream of its slot from zero at its first step, so that it never holds the value of
    the pod it replaced; a real sample in that step wins, as its time sorts after `_BEFORE_ANY`.
    """
    resources = len(RESOURCES)
    slot_streams = pod_container_slot[streams // resources] * resources + streams % resources
    starts = np.array(
        [
            (slot * resources + resource) * steps + span.first_step
            for slot, slot_spans in enumerate(spans)
            for span in slot_spans
            for resource in range(resources)
        ],
        dtype=np.int64,
    )
    keys = np.concatenate([slot_streams * steps + steps_of_samples, starts])
    order = np.lexsort((np.concatenate([times, np.full(starts.size, _BEFORE_ANY)]), keys))
    keys, ordered = keys[order], np.concatenate([values, np.zeros(starts.size)])[order]
    latest = np.append(keys[1:] != keys[:-1], True)
    return keys[latest], ordered[latest]


def _workload(workload: _RecordedWorkload, steps: int) -> Workload:
    first = min(pod.first_step for pod in workload.pods)
    last = max(pod.last_step for pod in workload.pods)
    template = workload.pods[0].doc
    app = App(
        name=workload.owner.name,
        labels=_common_labels([pod.doc for pod in workload.pods]),
        containers=tuple(ContainerSpec(c.name, _amounts(c.requests), _amounts(c.limits)) for c in template.containers),
        shapes=dict.fromkeys(_container_names(workload), RECORDED_SHAPE),
    )
    deleted = (last + 1) * STEP_SECONDS if last + 1 < steps else None
    return Workload(workload.namespace, app, workload.replicas, created_s=first * STEP_SECONDS, deleted_s=deleted)


def _amounts(amounts: Mapping[ResourceName, float]) -> dict[str, float]:
    return {str(resource): amount for resource, amount in amounts.items()}


def _common_labels(pods: Sequence[PodDoc]) -> dict[str, str]:
    """The labels every pod carries with the same value, less those a controller sets per pod or revision."""
    common = {k: v for k, v in pods[0].labels.items() if k not in CONTROLLER_LABELS}
    for pod in pods[1:]:
        common = {k: v for k, v in common.items() if pod.labels.get(k) == v}
    return common


# ------------------------------------------------------------------------------------ side file from a cluster


def side_file_from_cluster(
    pods: Sequence[Mapping[str, Any]], nodes: Sequence[Mapping[str, Any]], identity_labels: Sequence[str]
) -> dict[str, Any]:
    """The side file of live Pods and Nodes (plain dicts as the API returns them), in their order.

    Only the resources the simulator knows (`model.RESOURCES`) are kept; quantities stay the API's strings.
    """
    return {
        "identityLabels": list(identity_labels),
        "nodes": [_node_document(node) for node in nodes],
        "pods": [_pod_document(pod) for pod in pods],
    }


def write_side_file(document: Mapping[str, Any], path: Path) -> None:
    """Write a side file (`side_file_from_cluster`'s document) as YAML, keys in the document's order."""
    path.write_text(SIDE_FILE_COMMENT + yaml.safe_dump(dict(document), sort_keys=False), encoding="utf-8")


def _pod_document(pod: Mapping[str, Any]) -> dict[str, Any]:
    metadata = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    labels = dict(metadata.get("labels") or {})
    document: dict[str, Any] = {
        "namespace": metadata.get("namespace", "default"),
        "name": metadata.get("name", ""),
        "labels": labels,
        "owner": _owner(metadata, labels),
    }
    if spec.get("nodeName"):
        document["node"] = spec["nodeName"]
    document["containers"] = [_container_document(c) for c in _running_containers(spec)]
    return document


def _running_containers(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The app containers, then the native sidecars (init containers that keep running): what metrics report."""
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    return [*(spec.get("containers") or []), *sidecars]


def _owner(metadata: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, str]:
    """The pod's controller; a ReplicaSet `name-<pod-template-hash>` stands for its Deployment `name`."""
    references = metadata.get("ownerReferences") or []
    reference = next((r for r in references if r.get("controller")), references[0] if references else None)
    if reference is None:
        return {"kind": "Pod", "name": metadata.get("name", "")}  # a bare pod is its own workload
    kind, name = str(reference.get("kind", "")), str(reference.get("name", ""))
    template_hash = labels.get("pod-template-hash")
    if kind == "ReplicaSet" and template_hash and name.endswith(f"-{template_hash}"):
        return {"kind": "Deployment", "name": name.removesuffix(f"-{template_hash}")}
    return {"kind": kind, "name": name}


def _container_document(container: Mapping[str, Any]) -> dict[str, Any]:
    resources = container.get("resources") or {}
    return {
        "name": container.get("name", ""),
        "requests": _quantities(resources.get("requests")),
        "limits": _quantities(resources.get("limits")),
    }


def _node_document(node: Mapping[str, Any]) -> dict[str, Any]:
    metadata = node.get("metadata") or {}
    status = node.get("status") or {}
    return {"name": metadata.get("name", ""), "allocatable": _quantities(status.get("allocatable"))}


def _quantities(values: Mapping[str, Any] | None) -> dict[str, str]:
    return {resource: str(value) for resource, value in (values or {}).items() if resource in _RESOURCE_INDEX}
