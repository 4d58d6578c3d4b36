"""How `ballast` and `ballastd` end on a failure: one line on stderr that names the cause, the traceback only
with `--verbose`; a reader that went away (`ballast profiles -o json | head`) ends the command quietly.

The expected failures — an unreachable or refusing API server, a kubeconfig that cannot be loaded, a file, a
flag — carry their whole story in their message; anything else is a bug, so its line names its type and points at
`--verbose`.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130
"""128 + SIGINT."""
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell reports for a tool whose reader went away."""


def guarded(run: Callable[[], int], *, program: str, verbose: bool) -> int:
    """Run a command so that it ends in one line naming the cause, never a traceback (unless `verbose`): the
    expected failures (an unreachable or refusing API server, a bad kubeconfig, a file) say what they are, the
    unexpected ones their type; a reader that went away (`| head`) ends it quietly."""
    try:
        return run()
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"{program}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # the last line of defence: every failure becomes one line, the traceback opt-in
        if verbose:
            traceback.print_exc()
        hint = " (--verbose prints the traceback)" if _unexpected(exc) and not verbose else ""
        print(f"{program}: {_describe(exc)}{hint}", file=sys.stderr)
        return EXIT_FAILURE


def _unexpected(exc: BaseException) -> bool:
    """Whether `exc` is outside the failures a command expects (and whose message is the whole story)."""
    from ballast.runtime import APIStatusError  # noqa: PLC0415

    if isinstance(exc, (KeyError, IndexError)):  # a lookup in our own data that went wrong: a bug
        return True
    return not isinstance(exc, (APIStatusError, OSError, LookupError, ValueError))


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if _unexpected(exc) else text


def _silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null, so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a descriptor (a test's capture): nothing will flush it
        pass
