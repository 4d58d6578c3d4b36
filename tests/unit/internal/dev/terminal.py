"""What a terminal shows after the live view's output: the lines left once its redraws have erased theirs."""

from __future__ import annotations

import re

_ERASE = re.compile(r"\x1b\[(\d+)F\x1b\[J")
_COLOR = re.compile(r"\x1b\[[0-9;]*m")


def screen(output: str) -> list[str]:
    """The lines `output` leaves on a terminal, colors dropped: each `ESC[<n>F ESC[J` takes back the last n lines
    drawn."""
    output = _COLOR.sub("", output)
    lines: list[str] = []
    position = 0
    for erase in _ERASE.finditer(output):
        lines += output[position : erase.start()].splitlines()
        del lines[len(lines) - int(erase.group(1)) :]
        position = erase.end()
    return lines + output[position:].splitlines()
