"""`ballast explain pod/<namespace>/<name>`: why a pod has the requests and limits it has.

Parses the pod reference, reads the pod's context with `ballast.internal.explain.gather` and prints what
`explain` makes of it. Exit 0, or 1 for a bad reference, a missing pod or an unreachable API server.
"""

from __future__ import annotations

import argparse
import sys

from ballast.internal.cmd.ballast import EXIT_USAGE, ConnectError, connect, fail
from ballast.internal.explain import explain, gather, parse_pod_ref


def run(args: argparse.Namespace) -> int:
    """`ballast explain` with parsed flags; returns 0, or 1 for a bad reference, a missing pod or no cluster."""
    from ballast.runtime import APIStatusError, NotFoundError  # noqa: PLC0415

    try:
        namespace, name = parse_pod_ref(args.pod, args.namespace)
    except ValueError as exc:
        print(f"ballast explain: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        client = connect(args)
    except ConnectError as exc:
        return fail(exc)
    try:
        ctx = gather(client, namespace, name)
    except NotFoundError:
        return fail(f'pod "{name}" not found in namespace "{namespace}"')
    except (APIStatusError, OSError) as exc:
        return fail(exc)
    finally:
        client.close()
    print("\n".join(explain(ctx)))
    return 0
