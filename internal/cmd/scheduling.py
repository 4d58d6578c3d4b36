"""`ballast scheduling preview -f policy.yaml [-n NS] [-o json]`: what scheduling policies would change, before
they are applied.

Reads the previewed policies (`load_policies`), connects, and prints what
`ballast.internal.scheduling.preview_report` reads and renders. Writes nothing. Exit 0, or 1 for a bad file, a
missing namespace or an unreachable API server.
"""

from __future__ import annotations

import argparse
import sys

from ballast.internal.cmd.ballast import ConnectError, connect, fail
from ballast.internal.scheduling.preview import PolicyFileError, foreign_webhooks, load_policies, preview
from ballast.internal.scheduling.preview_report import gather, listing_scope, render_json, render_text, webhook_warnings


def _read(path: str, source: str) -> str:
    """The file's text; `PolicyFileError` naming `source` when it cannot be read or is not text."""
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as file:
            return file.read()
    except UnicodeDecodeError as exc:
        where = f"byte 0x{exc.object[exc.start]:02x} at offset {exc.start}"
        raise PolicyFileError(f"{source}: not a text file ({where} is not UTF-8)") from None
    except OSError as exc:
        raise PolicyFileError(f"{source}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    """`ballast scheduling preview` with parsed flags; returns 0, or 1 for a bad file, a missing namespace or
    an unreachable API server."""
    from ballast.runtime import APIStatusError, NotFoundError  # noqa: PLC0415

    source = "stdin" if args.filename == "-" else args.filename
    try:
        policies = load_policies(_read(args.filename, source), source, args.namespace)
    except PolicyFileError as exc:
        return fail(exc)
    scope = listing_scope(policies, args.namespace)
    try:
        client = connect(args, typed=False)
    except ConnectError as exc:
        return fail(exc)
    try:
        state = gather(client, scope)
    except NotFoundError:
        return fail(f'namespace "{scope}" not found')
    except (APIStatusError, OSError, LookupError) as exc:
        return fail(exc)
    finally:
        client.close()
    result = preview(policies, state.policies, state.namespace_labels, state.objects)
    warnings = webhook_warnings(foreign_webhooks(state.configurations or ()))
    notes = [f"could not read {what}" for what in state.unreadable]
    if args.output == "json":
        for warning in warnings:  # stdout is for the document; people still see these
            print(f"warning: {warning}", file=sys.stderr)
        print(render_json(result, warnings, notes, scope))
    else:
        print("\n".join(render_text(result, warnings, notes, scope)))
    return 0
