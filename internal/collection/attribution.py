"""Which history series a usage sample belongs to — through the pod, failing closed.

A sample `(namespace, pod, container, resource)` counts only when the pod is in the enrolled-pod cache with a
valid mode label, carries the `profile-ref` of a profile this source feeds, still matches that profile's selector
labels, the container is one Ballast manages (regular containers and restartable-init sidecars; never
run-to-completion init or ephemeral containers — docs/compatibility.md, docs/design.md, difference 6) and the policy
takes that resource from this source. Anything else is skipped: an unknown container is never measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ballast.internal.enrollment import PodProjection, is_enrolled, managed_containers
from ballast.internal.history import Sample, SeriesKey
from ballast.internal.metricsources import UsageSample
from ballast.internal.naming import matches_selector_labels

PodKey = tuple[str, str]
"""(namespace, name) of a pod."""


@dataclass(frozen=True, slots=True)
class MeasuredProfile:
    """A profile a cycle writes for: its name, history hash and the resources this source feeds it."""

    name: str
    measurement_hash: str
    resources: frozenset[str]


@dataclass(frozen=True, slots=True)
class MeasuredPod:
    """An enrolled pod as attribution sees it: its profile, the names of its managed containers, and the node it
    runs on ("" before it is scheduled; the ceilings of the profile's recommendations come from it)."""

    profile: MeasuredProfile
    containers: frozenset[str]
    node: str = ""


def measured_pod(
    pod: PodProjection, profile: MeasuredProfile, profile_selector: Mapping[str, str]
) -> MeasuredPod | None:
    """The pod as measured for `profile`, or None when it must not be measured (not enrolled, or its labels no
    longer match the profile's selector labels — `--missing--` standing for an absent or empty label)."""
    labels = pod.metadata.labels
    if not is_enrolled(labels) or not matches_selector_labels(labels, profile_selector):
        return None
    return MeasuredPod(profile, frozenset(c.name for c in managed_containers(pod) if c.name), pod.spec.node_name)


@dataclass(slots=True)
class Attribution:
    """One cycle's samples, attributed.

    - `samples`: store samples, in source order;
    - `observed`: per profile, the sample count per (container, resource) — what this cycle saw;
    - `skipped`: samples that matched no measured pod, container or resource (fail closed).
    """

    samples: list[Sample] = field(default_factory=list)
    observed: dict[str, dict[tuple[str, str], int]] = field(default_factory=dict)
    skipped: int = 0


def attribute(usage: Iterable[UsageSample], pods: Mapping[PodKey, MeasuredPod]) -> Attribution:
    """Turn source samples into store samples of the measured pods' profiles; everything else is skipped."""
    result = Attribution()
    keys: dict[tuple[str, str, str], SeriesKey] = {}
    for sample in usage:
        pod = pods.get((sample.namespace, sample.pod))
        if pod is None or sample.container not in pod.containers or sample.resource not in pod.profile.resources:
            result.skipped += 1
            continue
        profile = pod.profile
        series = (profile.measurement_hash, sample.container, sample.resource)
        key = keys.get(series)
        if key is None:
            try:
                key = keys[series] = SeriesKey(*series)
            except ValueError:  # a name that cannot be part of a key: never measured
                result.skipped += 1
                continue
        try:
            result.samples.append(Sample(key, sample.value))
        except ValueError:
            result.skipped += 1
            continue
        counts = result.observed.setdefault(profile.name, {})
        pair = (sample.container, sample.resource)
        counts[pair] = counts.get(pair, 0) + 1
    return result
