"""Name segments: what a label value or a policy name becomes inside a Kubernetes object name."""

from __future__ import annotations


def lower_runes(text: str) -> str:
    """Return `text` lowercased one character at a time, as Go's `strings.ToLower` does.

    Unlike `str.lower()` there are no context rules (final sigma) and no expansions (U+0130 gives `i`), so
    names match the Go operator's for any input.
    """
    return "".join(char.lower()[:1] for char in text)


def sanitize_segment(value: str) -> str:
    """Return `value` lowercased, with every rune that is not a letter, a digit or `-` replaced by `-`.

    Leading and trailing `-` are trimmed, so the result may be empty (`"..."` gives `""`). Letters and digits are
    Unicode ones, as in the Go operator; for Kubernetes label values and object names (ASCII) the result is a valid
    DNS-label fragment: `My_App.v2` gives `my-app-v2`.
    """
    lowered = lower_runes(value)
    return "".join(c if c.isalpha() or c.isdecimal() or c == "-" else "-" for c in lowered).strip("-")
