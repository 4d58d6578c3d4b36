"""Policy patterns: an exact string, or `/regex/` matched in full with RE2 (the Go operator's Go `regexp` semantics).

RE2 runs in time linear in the input, so no pattern a user writes can stall admission the way a backtracking
engine (Python's `re`) can on `(a+)+$`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import re2

from .problems import quote

# Errors go to the exception, not to stderr through RE2's logger.
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
# RE2 reports unsupported Perl syntax with these phrases; users arriving from PCRE deserve the reason.
_PCRE_ONLY = frozenset({"invalid escape sequence", "invalid perl operator", "invalid named capture group"})
_GO_WORDING = {"missing )": "missing closing )", "missing ]": "missing closing ]"}
# Namespaces and annotation values repeat from pod to pod; a regex's verdicts are remembered up to this many values
# (then forgotten at once), which turns the ~4 µs of a call through the RE2 bindings into a dict lookup.
MEMO_SIZE = 1024


class PatternError(ValueError):
    """A `/regex/` pattern that RE2 cannot compile; the message quotes the pattern and says why."""


def is_regex(text: str) -> bool:
    """Return whether `text` is written as a regex: at least two characters, starting and ending with `/`."""
    return len(text) >= 2 and text[0] == "/" and text[-1] == "/"


def _describe(error: Any) -> str:
    # RE2 says "<what>: <fragment>" ("missing ): ("); show it as Go's regexp does ("missing closing ): `(`").
    reason = error.args[0] if error.args else ""
    if isinstance(reason, bytes):
        reason = reason.decode("utf-8", "replace")
    what, separator, fragment = str(reason).partition(": ")
    what = _GO_WORDING.get(what, what)
    described = f"{what}: `{fragment}`" if separator else what
    if what in _PCRE_ONLY:
        described += " (policies use RE2 syntax: no backreferences or look-around)"
    return described


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled policy pattern. `text` is what the policy says; `regex` is None for an exact string."""

    text: str
    regex: Any = None  # a compiled re2 pattern; re2 ships no type information
    _memo: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False)

    def matches(self, value: str) -> bool:
        """Return whether `value` equals the exact string, or the regex matches all of `value`."""
        if self.regex is None:
            return value == self.text
        verdict = self._memo.get(value)
        if verdict is None:
            try:
                verdict = self.regex.fullmatch(value) is not None
            except UnicodeEncodeError:  # a lone surrogate: no UTF-8 text, so nothing RE2 can match
                verdict = False
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[value] = verdict
        return verdict


def compile_pattern(text: str) -> Pattern:
    """Return the pattern `text` stands for: `/web-.*/` matches `web-a` but not `xweb-a`; `web` only `web`.

    The text between the slashes is RE2 syntax (Go's `regexp`), matched against the whole value as the Go operator's
    `^(?:re)$` does; it must be a complete expression on its own, so `/a)|(b/` is refused rather than turned
    into an unanchored alternation. Raises PatternError naming the pattern when RE2 cannot compile it
    (backreferences, look-around, unbalanced parentheses, repetitions over 1000, a program over RE2's memory
    budget, text that is not UTF-8), TypeError when
    `text` is not a str.
    """
    if not isinstance(text, str):
        raise TypeError(f"a pattern must be a str, got {type(text).__name__} {text!r}")
    if not is_regex(text):
        return Pattern(text)
    try:
        regex = re2.compile(text[1:-1], _OPTIONS)
    except re2.error as error:
        raise PatternError(f"invalid regex {quote(text)}: {_describe(error)}") from None
    except UnicodeEncodeError:
        raise PatternError(f"invalid regex {quote(text)}: not valid UTF-8 (a lone surrogate)") from None
    return Pattern(text, regex)
