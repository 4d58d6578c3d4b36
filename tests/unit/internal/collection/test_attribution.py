"""Attribution through the pod, failing closed (docs/compatibility.md; docs/design.md, difference 6)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from ballast.internal.collection import MeasuredProfile, attribute, measured_pod
from ballast.internal.enrollment import MODE_LABEL, PodProjection, pod_projection
from ballast.internal.metricsources import UsageSample
from ballast.internal.naming import LABEL_MISSING

HASH = "0123456789abcdef"
PROFILE = MeasuredProfile("api--default", HASH, frozenset({"cpu", "memory"}))


def pod(labels: dict[str, str], **spec: Any) -> PodProjection:
    raw = {"metadata": {"name": "p", "namespace": "shop", "labels": labels}, "spec": spec}
    return msgspec.json.decode(msgspec.json.encode(raw), type=PodProjection)


SPEC = {
    "containers": [{"name": "app"}],
    "initContainers": [{"name": "proxy", "restartPolicy": "Always"}, {"name": "migrate"}],
    "ephemeralContainers": [{"name": "debug"}],
}


def test_managed_containers_are_regular_ones_and_restartable_init_sidecars() -> None:
    measured = measured_pod(pod({MODE_LABEL: "resize", "app": "api"}, **SPEC), PROFILE, {"app": "api"})

    assert measured is not None
    assert measured.containers == frozenset({"app", "proxy"})


@pytest.mark.parametrize(
    ("labels", "selector"),
    [
        ({"app": "api"}, {"app": "api"}),  # no mode label
        ({MODE_LABEL: "later", "app": "api"}, {"app": "api"}),  # an invalid mode
        ({MODE_LABEL: "measure", "app": "web"}, {"app": "api"}),  # labels changed since enrollment
        ({MODE_LABEL: "measure", "app": "api"}, {"app": LABEL_MISSING}),  # --missing-- wants it absent
    ],
)
def test_pods_that_must_not_be_measured(labels: dict[str, str], selector: dict[str, str]) -> None:
    assert measured_pod(pod(labels, **SPEC), PROFILE, selector) is None


@pytest.mark.parametrize("value", [None, ""])
def test_missing_matches_an_absent_or_empty_label(value: str | None) -> None:
    labels = {MODE_LABEL: "measure"} | ({"component": value} if value is not None else {})
    assert measured_pod(pod(labels, **SPEC), PROFILE, {"component": LABEL_MISSING}) is not None


def test_a_pods_json_is_converted_once_where_it_enters() -> None:
    raw = {"metadata": {"labels": {MODE_LABEL: "measure"}}, "spec": SPEC}
    measured = measured_pod(pod_projection(raw), PROFILE, {})
    assert measured is not None
    assert measured.containers == frozenset({"app", "proxy"})


def test_samples_become_series_of_the_pods_profile_and_the_rest_is_skipped() -> None:
    measured = measured_pod(pod({MODE_LABEL: "measure"}, **SPEC), PROFILE, {})
    assert measured is not None
    samples = [
        UsageSample("shop", "p", "app", "cpu", 200, 0),
        UsageSample("shop", "p", "proxy", "memory", 64, 0),
        UsageSample("shop", "p", "app", "cpu", 210, 0),
        UsageSample("shop", "p", "migrate", "cpu", 1, 0),  # run-to-completion init
        UsageSample("shop", "p", "debug", "cpu", 1, 0),  # ephemeral
        UsageSample("shop", "p", "app", "ephemeral-storage", 1, 0),  # not a resource this source feeds
        UsageSample("blog", "p", "app", "cpu", 1, 0),  # another pod
    ]

    result = attribute(samples, {("shop", "p"): measured})

    assert [(s.key.container, s.key.resource, s.value) for s in result.samples] == [
        ("app", "cpu", 200), ("proxy", "memory", 64), ("app", "cpu", 210),
    ]  # fmt: skip
    assert result.samples[0].key is result.samples[2].key  # one key object per series
    assert result.observed == {"api--default": {("app", "cpu"): 2, ("proxy", "memory"): 1}}
    assert result.skipped == 4


def test_a_mistyped_pod_is_refused_naming_the_field() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"Expected `str`, got `int` - at `\$\.metadata\.labels"):
        pod_projection({"metadata": {"labels": {"app": 1}}})
