"""String formats of the Kubernetes API as schema markers: Go durations (`metav1.Duration`) and qualified names
(label keys), as OpenAPI `pattern`s and CEL rules (`x-kubernetes-validations`), and lists of unique strings.

They change the generated schema only (`CRDSchema`), never the models' own validation: an object stored before
a rule existed must still be read, so that the controller can say what is wrong with it.
"""

from __future__ import annotations

from typing import Any

from .wire import CRDSchema

DURATION_UNITS = ("ns", "us", "µs", "μs", "ms", "s", "m", "h")
"""The units of Go's `time.ParseDuration` (µ is U+00B5, μ U+03BC)."""

_COMPONENT = r"([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)"
DURATION_PATTERN = rf"^[-+]?(0|({_COMPONENT})+)$"
"""A Go duration, signed: `168h`, `1h30m`, `1.5h`, `-1m`, `0`."""
UNSIGNED_DURATION_PATTERN = rf"^\+?(0|({_COMPONENT})+)$"
"""A Go duration without a minus sign (the CEL rule of `positive_duration` then refuses zero)."""
DURATION_MAX_LENGTH = 64
"""Longest duration string accepted (bounds the cost of the CEL rule; `2562047h47m16.854775807s` is 24)."""

LABEL_NAME_MAX_LENGTH = 63
LABEL_PREFIX_MAX_LENGTH = 253
QUALIFIED_NAME_MAX_LENGTH = LABEL_PREFIX_MAX_LENGTH + 1 + LABEL_NAME_MAX_LENGTH
QUALIFIED_NAME_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
"""A Kubernetes qualified name (a label key): an optional DNS-subdomain prefix and `/`, then a name of at most 63
characters. The prefix's 253-character limit is not checked (the pattern bounds only the whole)."""


def duration() -> CRDSchema:
    """A Go duration, any sign (`orphanTTL`, `retentionWindow`)."""
    return CRDSchema({"pattern": DURATION_PATTERN, "maxLength": DURATION_MAX_LENGTH})


def positive_duration() -> CRDSchema:
    """A Go duration longer than 0 (`pollInterval`): the pattern checks the syntax, the CEL rule the value (only
    once the syntax is right, so a bad string gets one message, the pattern's). Without a sign, a duration is
    longer than 0 exactly when one of its digits is not 0 — read from the text, because CEL's `duration()` fails
    on one beyond its range (`999999999h`), and the API server would show that failure as `Invalid value:
    "string"`."""
    rule = f"!self.matches(r'{UNSIGNED_DURATION_PATTERN}') || self.matches('[1-9]')"
    validation = {"rule": rule, "message": 'must be a Go duration longer than 0, such as "60s"'}
    return CRDSchema(
        {
            "pattern": UNSIGNED_DURATION_PATTERN,
            "maxLength": DURATION_MAX_LENGTH,
            "x-kubernetes-validations": [validation],
        }
    )


def qualified_name() -> CRDSchema:
    """A label key (`identityLabels[i]`)."""
    return CRDSchema({"pattern": QUALIFIED_NAME_PATTERN, "maxLength": QUALIFIED_NAME_MAX_LENGTH})


def unique_items(max_items: int, what: str = "item") -> CRDSchema:
    """A list of strings without duplicates, at most `max_items` long (the bound keeps the CEL rule cheap); the
    message names the first repeated entry."""
    repeated = "self.filter(k, !self.exists_one(x, x == k))[0]"
    validation: dict[str, Any] = {
        "rule": "self.all(k, self.exists_one(x, x == k))",
        "messageExpression": f"'{what} \"' + {repeated} + '\" appears more than once'",
    }
    return CRDSchema({"maxItems": max_items, "x-kubernetes-validations": [validation]})


__all__ = [
    "DURATION_MAX_LENGTH",
    "DURATION_PATTERN",
    "DURATION_UNITS",
    "LABEL_NAME_MAX_LENGTH",
    "LABEL_PREFIX_MAX_LENGTH",
    "QUALIFIED_NAME_MAX_LENGTH",
    "QUALIFIED_NAME_PATTERN",
    "UNSIGNED_DURATION_PATTERN",
    "duration",
    "positive_duration",
    "qualified_name",
    "unique_items",
]
