"""Whether a MetricsSource can be polled: every problem of its spec, each named by its field path.

`spec.type` must name a plugin this operator has, and `spec.config.pollInterval` must be a Go duration of at least
1s (the upstream operator takes any positive one and polls no faster: docs/design.md, difference 70). This is what
the validating webhook refuses a MetricsSource with and what its `Valid=False` condition says; a stored source with
a problem is not polled, and the profiles it feeds say so in their `Ready` condition (docs/design.md, difference
26).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError

from ballast.api.ballast.v1.metricssource import MetricsSourceSpec
from ballast.api.wire import wire_path
from ballast.internal.stats.duration import duration_problem, parse_duration

from .registry import SOURCE_TYPES

MIN_POLL_INTERVAL_NS = 1_000_000_000
"""The shortest pollInterval accepted: the collector's loop polls a source at most once a second (docs/design.md,
difference 70)."""


def validate_metrics_source(
    spec: MetricsSourceSpec | Mapping[str, Any], types: Collection[str] = SOURCE_TYPES.keys()
) -> list[str]:
    """Return a message per problem of a MetricsSource spec (a model, or its JSON as in an AdmissionReview),
    `path: what is wrong`; an empty list means it can be polled.

    `types` are the plugins that exist (default: `SOURCE_TYPES`). For example
    `spec.type: unknown type "bogus": must be one of kubernetesMetrics, kubeletSummary` or
    `spec.config.pollInterval: invalid duration "-5s": must be longer than 0, such as "60s"`. JSON that does not
    fit the model gives the model's problems only. Raises TypeError for anything but a spec or a mapping.
    """
    if isinstance(spec, Mapping):
        try:
            spec = MetricsSourceSpec.model_validate(dict(spec))
        except ValidationError as error:
            return [f"{wire_path(detail['loc'], 'spec')}: {detail['msg']}" for detail in error.errors()]
    elif not isinstance(spec, MetricsSourceSpec):
        raise TypeError(f"expected a MetricsSourceSpec or a mapping, got {type(spec).__name__}")
    problems: list[str] = []
    if spec.type not in types:
        shown = json.dumps(spec.type, ensure_ascii=False)
        problems.append(f"spec.type: unknown type {shown}: must be one of {', '.join(types)}")
    problem = duration_problem(spec.config.poll_interval, positive=True) or _poll_interval_problem(
        spec.config.poll_interval
    )
    if problem is not None:
        problems.append(f"spec.config.pollInterval: {problem}")
    return problems


def _poll_interval_problem(text: str) -> str | None:
    """An interval shorter than the collector can poll: it would show a rate the source never gets."""
    if parse_duration(text) >= MIN_POLL_INTERVAL_NS:
        return None
    shown = json.dumps(text, ensure_ascii=False)
    return f"invalid duration {shown}: must be at least 1s (the collector polls a source at most once a second)"
