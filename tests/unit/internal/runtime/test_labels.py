"""Label selectors: the string syntax, metav1.LabelSelector, matching, and the canonical string."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.runtime import labels
from ballast.runtime.labels import Requirement, Selector, SelectorError


@pytest.mark.parametrize(
    ("text", "requirements", "canonical"),
    [
        ("a=b", [Requirement("a", "=", ("b",))], "a=b"),
        ("a==b", [Requirement("a", "=", ("b",))], "a=b"),
        ("a!=b", [Requirement("a", "!=", ("b",))], "a!=b"),
        ("a=", [Requirement("a", "=", ("",))], "a="),
        ("a in (y, x, y)", [Requirement("a", "in", ("x", "y"))], "a in (x,y)"),
        ("a notin (x)", [Requirement("a", "notin", ("x",))], "a notin (x)"),
        ("a in ()", [Requirement("a", "in", ("",))], "a in ()"),
        ("a in (,x)", [Requirement("a", "in", ("", "x"))], "a in (,x)"),
        ("a", [Requirement("a", "exists")], "a"),
        ("!a", [Requirement("a", "doesnotexist")], "!a"),
        (" a = b , !c ", [Requirement("a", "=", ("b",)), Requirement("c", "doesnotexist")], "a=b,!c"),
        ("example.com/tier=web", [Requirement("example.com/tier", "=", ("web",))], "example.com/tier=web"),
        (
            "env in (prod,dev),tier",
            [Requirement("env", "in", ("dev", "prod")), Requirement("tier", "exists")],
            "env in (dev,prod),tier",
        ),
    ],
)
def test_parse_gives_requirements_and_a_canonical_string(
    text: str, requirements: list[Requirement], canonical: str
) -> None:
    selector = labels.parse(text)
    assert selector.requirements == tuple(requirements)
    assert str(selector) == canonical


@pytest.mark.parametrize("text", [None, "", "   "])
def test_an_empty_string_selects_everything(text: str | None) -> None:
    selector = labels.parse(text)
    assert selector.empty()
    assert selector is labels.EVERYTHING
    assert selector.matches({})
    assert selector.matches(None)
    assert selector.matches({"a": "b"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a in (", "unbalanced '\\('"),
        ("a)", "unbalanced '\\)'"),
        ("a,,b", "empty requirement"),
        ("a,", "empty requirement"),
        ("=b", "invalid label key ''"),
        ("a=b=c", "invalid label value 'b=c'"),
        ("!a=b", "invalid label key '!a'"),
        ("a b", "invalid label key 'a b'"),
        ("a in x", "invalid label key 'a in x'"),
        ("Bad_/x=y", "invalid label key"),
        ("a=" + "v" * 64, "invalid label value"),
        ("a=-x", "invalid label value '-x'"),
        ("a in (x,-y)", "invalid label value '-y'"),
        ("x" * 64, "invalid label key"),
    ],
)
def test_bad_selectors_are_refused_naming_the_part(text: str, message: str) -> None:
    with pytest.raises(SelectorError, match=message) as error:
        labels.parse(text)
    assert isinstance(error.value, ValueError)  # callers may catch ValueError


@pytest.mark.parametrize(
    ("text", "labels_", "matches"),
    [
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a=b", {}, False),
        ("a!=b", {}, True),  # absent keys satisfy != and notin, as in apimachinery
        ("a!=b", {"a": "b"}, False),
        ("a in (x,y)", {"a": "y"}, True),
        ("a in (x,y)", {}, False),
        ("a notin (x,y)", {"a": "z"}, True),
        ("a notin (x,y)", {}, True),
        ("a notin (x,y)", {"a": "x"}, False),
        ("a", {"a": ""}, True),
        ("a", {"b": "a"}, False),
        ("!a", {}, True),
        ("!a", {"a": "x"}, False),
        ("a in ()", {"a": ""}, True),
        ("a=b,c", {"a": "b"}, False),
        ("a=b,c", {"a": "b", "c": "1"}, True),
    ],
)
def test_matching(text: str, labels_: dict[str, str], matches: bool) -> None:
    assert labels.parse(text).matches(labels_) is matches


def test_from_set_is_sorted_equality() -> None:
    selector = labels.from_set({"tier": "web", "app": "shop"})
    assert str(selector) == "app=shop,tier=web"
    assert selector.matches({"app": "shop", "tier": "web", "extra": "1"})
    assert not selector.matches({"app": "shop"})
    assert labels.from_set({}).empty()


def test_from_label_selector_combines_match_labels_and_expressions() -> None:
    selector = labels.from_label_selector(
        {
            "matchLabels": {"tier": "web", "app": "shop"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev", "prod"]},
                {"key": "legacy", "operator": "DoesNotExist"},
                {"key": "zone", "operator": "NotIn", "values": ["b"]},
                {"key": "team", "operator": "Exists"},
            ],
        }
    )
    assert str(selector) == "app=shop,tier=web,env in (dev,prod),!legacy,zone notin (b),team"
    assert selector.matches({"app": "shop", "tier": "web", "env": "dev", "team": "x"})
    assert not selector.matches({"app": "shop", "tier": "web", "env": "dev", "team": "x", "legacy": "1"})
    assert not selector.matches({"app": "shop", "tier": "web", "env": "dev", "team": "x", "zone": "b"})
    assert labels.parse(str(selector)) == selector


def test_a_nil_selector_matches_nothing_and_an_empty_one_everything() -> None:
    nothing = labels.from_label_selector(None)
    everything = labels.from_label_selector({})
    assert not nothing.matches({})
    assert not nothing.matches({"a": "b"})
    assert not nothing.empty()
    assert everything.empty()
    assert everything.matches({})
    assert everything.matches({"a": "b"})
    assert labels.from_label_selector({"matchLabels": None, "matchExpressions": None}).empty()


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}, r"matchExpressions\[0\]: operator"),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "operator In needs values"),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]}, "operator NotIn needs values"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}, "Exists takes no values"),
        ({"matchExpressions": [{"operator": "Exists"}]}, r"matchExpressions\[0\]: invalid label key ''"),
        (
            {
                "matchExpressions": [
                    {"key": "ok", "operator": "Exists"},
                    {"key": "a", "operator": "In", "values": ["-"]},
                ]
            },
            r"matchExpressions\[1\]: invalid label value",
        ),
        ({"matchLabels": {"bad key": "x"}}, "matchLabels: invalid label key"),
        ({"matchLabels": {"a": "bad value"}}, "matchLabels: invalid label value"),
    ],
)
def test_from_label_selector_names_the_bad_expression(selector: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectorError, match=message):
        labels.from_label_selector(selector)


# ----------------------------------------------------------------------------------------- properties

_NAME = st.from_regex(r"[a-z0-9]([-a-z0-9_.]{0,6}[a-z0-9])?", fullmatch=True)
_PREFIX = st.from_regex(r"[a-z0-9]{1,5}(\.[a-z0-9]{1,5}){0,2}/", fullmatch=True)
_KEYS = st.builds(lambda prefix, name: prefix + name, st.one_of(st.just(""), _PREFIX), _NAME)
_VALUES = st.one_of(st.just(""), st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,6}[A-Za-z0-9])?", fullmatch=True))


@st.composite
def _requirements(draw: st.DrawFn) -> Requirement:
    key = draw(_KEYS)
    operator = draw(st.sampled_from(["=", "!=", "in", "notin", "exists", "doesnotexist"]))
    if operator in ("=", "!="):
        return Requirement(key, operator, (draw(_VALUES),))
    if operator in ("in", "notin"):
        return Requirement(key, operator, tuple(sorted(draw(st.sets(_VALUES, min_size=1, max_size=4)))))
    return Requirement(key, operator)


_SELECTORS = st.builds(lambda reqs: Selector(tuple(reqs)), st.lists(_requirements(), max_size=5))


@given(_SELECTORS)
def test_the_string_form_parses_back_to_the_same_selector(selector: Selector) -> None:
    text = str(selector)
    assert labels.parse(text) == selector
    assert str(labels.parse(text)) == text


@given(_SELECTORS, st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_a_reparsed_selector_matches_the_same_labels(selector: Selector, labels_: dict[str, str]) -> None:
    assert labels.parse(str(selector)).matches(labels_) == selector.matches(labels_)


@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_a_set_selects_itself(labels_: dict[str, str]) -> None:
    selector = labels.from_set(labels_)
    assert selector.matches(labels_)
    assert labels.parse(str(selector)) == selector
