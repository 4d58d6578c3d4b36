"""RESP encoding of script calls: the values of a cycle are tens of thousands of small ints, which redis-py's
general-purpose packer encodes one `isinstance` chain at a time; this does the same in one string join."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def pack_command(args: Sequence[str | int]) -> str:
    """One command as a RESP array of bulk strings (str and int arguments only; ints in decimal)."""
    texts = [arg if type(arg) is str else str(arg) for arg in args]
    if "".join(texts).isascii():  # the usual case: lengths in characters are lengths in bytes
        return f"*{len(texts)}\r\n" + "".join([f"${len(text)}\r\n{text}\r\n" for text in texts])
    return f"*{len(texts)}\r\n" + "".join([f"${len(text.encode())}\r\n{text}\r\n" for text in texts])


def pack_commands(commands: Iterable[Sequence[str | int]]) -> bytes:
    """Several commands back to back (a pipeline), as bytes for the socket."""
    return "".join(pack_command(command) for command in commands).encode()
