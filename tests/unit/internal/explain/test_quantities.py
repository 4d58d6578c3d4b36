"""`ballast explain` prints memory with binary suffixes, the exact value beside it only where it rounded."""

from __future__ import annotations

from ballast.api.ballast.v1 import MetricConfig, Recommendation, UsageStats
from ballast.internal.enrollment import applied_annotation
from ballast.internal.explain import formula, limit_lines
from ballast.internal.explain.figures import applied_lines, running_line

MEMORY = UsageStats.model_validate({"resource": "memory", "samples": 10, "timeSpan": "1m0s", "p95": "176.00Mi"})


def test_a_rounded_byte_count_shows_its_exact_value_and_whole_units_stay_canonical() -> None:
    from ballast.internal.explain.figures import shown  # noqa: PLC0415

    assert shown("258534604", "memory") == "246.56Mi (exactly 258534604)"
    assert shown("252476Ki", "memory") == "246.56Mi (exactly 252476Ki)"
    assert shown("1536Mi", "memory") == "1.5Gi"  # the same bytes, no rounding
    assert (shown("192Mi", "memory"), shown("243m", "cpu"), shown("bogus", "memory")) == ("192Mi", "243m", "bogus")


def test_every_line_with_a_memory_value_reads_it_with_a_suffix() -> None:
    metric = MetricConfig.model_validate({"resource": "memory", "field": "request", "source": "m", "aggregation": "p95",
                                          "headroom": "1.4"})  # fmt: skip
    assert formula(metric, MEMORY, "258369126") == (  # 176Mi × 1.4, truncated to a byte
        "memory request = p95 (176.00Mi) × 1.4 = 246.4Mi (exactly 258369126)"
    )
    template = {"name": "api", "resources": {"requests": {"memory": "128Mi"}, "limits": {"memory": "192Mi"}}}
    assert limit_lines("memory", Recommendation(request="258534604"), template, False) == [
        "memory limit = 192Mi × 246.56Mi (exactly 258534604) / 128Mi = 369.84Mi (exactly 387801906) "
        "(the template's limit:request ratio, kept so the request stays within the limit)"
    ]
    pod = {"metadata": {"annotations": {applied_annotation("memory", "request"): "258534604"}}}
    assert applied_lines(pod, "memory", Recommendation(request="258534604")) == [
        "admission wrote request 246.56Mi (exactly 258534604) (annotations applied-memory-request)"
    ]
    container = {"resources": {"requests": {"memory": "258534604"}, "limits": {"memory": "1Gi"}}}
    assert running_line(container, "memory") == "pod spec now: request 246.56Mi (exactly 258534604), limit 1Gi"
