"""The CRD schema's string formats agree with the domain's checks: a Go duration matches the pattern exactly when
`parse_duration` reads it, and a label key matches the qualified-name pattern exactly when `label_key_problem`
finds nothing (the pattern leaves only the prefix's 253-character limit to the domain)."""

from __future__ import annotations

import re

import pytest

from ballast.api.formats import (
    DURATION_PATTERN,
    QUALIFIED_NAME_MAX_LENGTH,
    QUALIFIED_NAME_PATTERN,
    UNSIGNED_DURATION_PATTERN,
    positive_duration,
    unique_items,
)
from ballast.internal.naming import is_label_key
from ballast.internal.stats import parse_duration

DURATIONS = ["24h", "1m30s", "1.5h", "300ms", "2us", "2µs", "2μs", "7ns", "1.s", ".5s", "0", "-0", "+5s", "-1m30s",
             "1h0m0s", "0.0000000015s", "", "24", "1d", "h", ".s", "1h 30m", " 1h", "1hh", "1m5", "-", "1e3s",
             "banana", "5S", "0x10s"]  # fmt: skip
LABEL_KEYS = ["app", "app.kubernetes.io/name", "example.com/Tier_1", "a", "A-b_c.d", "x" * 63, "p" * 253 + "/n",
              "not a label!!", "", "/app", "a/b/c", "Example.com/app", "example.com/", "x" * 64, "-app", "app.",
              "a..b/c", "a_b/c", "é", "app name"]  # fmt: skip


def _parses(text: str) -> bool:
    try:
        parse_duration(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("text", DURATIONS)
def test_the_duration_patterns_accept_what_parse_duration_reads(text: str) -> None:
    assert (re.fullmatch(DURATION_PATTERN, text) is not None) == _parses(text)
    assert (re.fullmatch(UNSIGNED_DURATION_PATTERN, text) is not None) == (_parses(text) and not text.startswith("-"))


@pytest.mark.parametrize("key", LABEL_KEYS)
def test_the_qualified_name_pattern_accepts_what_the_domain_accepts(key: str) -> None:
    matches = re.fullmatch(QUALIFIED_NAME_PATTERN, key) is not None and len(key) <= QUALIFIED_NAME_MAX_LENGTH
    assert matches == is_label_key(key)


def test_the_cel_rules_only_run_on_well_formed_values() -> None:
    (rule,) = positive_duration().markers["x-kubernetes-validations"]
    assert rule["rule"] == (f"!self.matches(r'{UNSIGNED_DURATION_PATTERN}') || self.matches('[1-9]')")
    (unique,) = unique_items(4, "label key").markers["x-kubernetes-validations"]
    assert unique["rule"] == "self.all(k, self.exists_one(x, x == k))"
    assert unique_items(4).markers["maxItems"] == 4
