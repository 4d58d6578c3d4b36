"""Policy patterns: exact strings and /regex/ with the Go operator's full-match RE2 semantics."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.policy import PatternError, compile_pattern, is_regex
from ballast.internal.policy.pattern import MEMO_SIZE


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("web", "web", True),
        ("web", "web-a", False),
        ("web", "WEB", False),
        ("", "", True),
        ("", "x", False),
        ("/web-.*/", "web-a", True),
        ("/web-.*/", "xweb-a", False),  # anchored at the start
        ("/web-.*/", "web", False),
        ("/web/", "web-a", False),  # anchored at the end
        ("/a|b/", "a", True),
        ("/a|b/", "ab", False),  # the alternation is grouped inside the anchors: ^(?:a|b)$
        ("/(?i)web/", "WeB", True),
        ("/[[:digit:]]+/", "123", True),
        ("/\\pL+/", "équipe", True),
        ("/.*/", "", True),
        ("//", "", True),  # an empty regex matches only the empty string
        ("//", "x", False),
        ("/", "/", True),  # a single slash is an exact string
        ("/web", "/web", True),  # no closing slash: exact
        ("/prod$/", "prod\n", False),  # $ is the end of the text, not before a final newline as in Python's re
    ],
)
def test_pattern_matches(pattern: str, value: str, expected: bool) -> None:
    assert compile_pattern(pattern).matches(value) is expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("/(/", 'invalid regex "/(/": missing closing ): `(`'),
        ("/[/", 'invalid regex "/[/": missing closing ]: `[`'),
        ("/a)|(b/", 'invalid regex "/a)|(b/": unexpected ): `a)|(b`'),  # never spliced into ^(?:a)|(b)$
        (
            "/(a)\\1/",
            'invalid regex "/(a)\\\\1/": invalid escape sequence: `\\1` '
            "(policies use RE2 syntax: no backreferences or look-around)",
        ),
        (
            "/(?=a)b/",
            'invalid regex "/(?=a)b/": invalid perl operator: `(?=` '
            "(policies use RE2 syntax: no backreferences or look-around)",
        ),
        ("/x{2,1}/", 'invalid regex "/x{2,1}/": invalid repetition size: `{2,1}`'),
        ("/a{1000}{1000}/", 'invalid regex "/a{1000}{1000}/": bad repetition operator: `{1000}{1000}`'),
    ],
)
def test_invalid_regex_is_refused_with_its_reason(pattern: str, message: str) -> None:
    with pytest.raises(PatternError) as caught:
        compile_pattern(pattern)
    assert str(caught.value) == message


@pytest.mark.parametrize("pattern", ["/(a+)+$/", "/(a|aa)+/", "/(.*a){12}/"])
def test_catastrophic_backtracking_patterns_run_in_linear_time(pattern: str) -> None:
    compiled = compile_pattern(pattern)
    hostile = "a" * 100_000 + "!"
    started = time.perf_counter()
    assert compiled.matches(hostile) is False
    assert time.perf_counter() - started < 1.0  # Python's re would not finish for years


def test_remembered_verdicts_stay_correct_and_bounded() -> None:
    pattern = compile_pattern("/team-[0-9]+/")
    for round_ in range(2):
        for number in range(MEMO_SIZE + 10):
            assert pattern.matches(f"team-{number}"), round_
            assert not pattern.matches(f"xteam-{number}"), round_
    assert len(pattern._memo) <= MEMO_SIZE


def test_text_that_is_not_utf8_never_breaks_matching() -> None:
    with pytest.raises(PatternError, match="not valid UTF-8"):
        compile_pattern("/\ud800/")
    assert compile_pattern("/.*/").matches("\ud800") is False


def test_non_string_pattern_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a pattern must be a str"):
        compile_pattern(5)  # type: ignore[arg-type]


@given(st.text(max_size=40))
def test_any_text_compiles_or_fails_with_pattern_error(text: str) -> None:
    message = ""
    try:
        pattern = compile_pattern(text)
    except PatternError as error:
        message = str(error)
    if message:
        assert is_regex(text)
        assert message.startswith(f"invalid regex {json.dumps(text, ensure_ascii=False)}: ")
    else:
        assert (pattern.regex is not None) is is_regex(text)


@given(st.text(max_size=40).filter(lambda text: not is_regex(text)), st.text(max_size=40))
def test_exact_pattern_matches_only_itself(text: str, other: str) -> None:
    pattern = compile_pattern(text)
    assert pattern.matches(text)
    assert pattern.matches(other) is (other == text)
