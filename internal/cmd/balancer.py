"""`ballast balancer status <name> [-n NS] [-o json]`: how a Balancer spreads its replicas, and why.

Connects, then prints what `ballast.internal.balancer.status_report` reads and renders. Writes nothing. Exit 0,
or 1 for a missing Balancer, a target whose scale or pods cannot be read, a spec the placement refuses, or an
unreachable API server.
"""

from __future__ import annotations

import argparse
import datetime

from ballast.internal.balancer.status_report import StatusError, gather, render_json, render_text
from ballast.internal.cmd.ballast import ConnectError, connect, fail

DEFAULT_NAMESPACE = "default"


def run(args: argparse.Namespace, now: datetime.datetime | None = None) -> int:
    """`ballast balancer status` with parsed flags; returns 0, or 1 for a missing Balancer, an unreadable target,
    a refused spec or an unreachable API server."""
    from ballast.runtime import APIStatusError, NotFoundError  # noqa: PLC0415

    namespace = args.namespace or DEFAULT_NAMESPACE
    try:
        client = connect(args, typed=False)
    except ConnectError as exc:
        return fail(exc)
    try:
        status = gather(client, namespace, args.name, now or datetime.datetime.now(datetime.UTC))
    except NotFoundError:
        return fail(f'balancer "{args.name}" not found in namespace "{namespace}"')
    except LookupError as exc:  # the REST mapper: no Balancer kind at all
        return fail(f"{exc} (are the Ballast CRDs installed?)")
    except (StatusError, APIStatusError, OSError) as exc:
        return fail(exc)
    finally:
        client.close()
    print(render_json(status) if args.output == "json" else "\n".join(render_text(status)))
    return 0
