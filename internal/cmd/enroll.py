"""`ballast enroll`: the flags, checked, then one `Enroller` run (`ballast.internal.enroll.enroller`); exit 0,
1 on bad usage or no cluster, 2 when a workload failed, 130 when interrupted (the recovery breadcrumb printed).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from ballast.internal.cmd.ballast import ConnectError, connect, fail
from ballast.internal.enroll import IdentityError, Options, messages, resolve_identity
from ballast.internal.enroll.enroller import (
    API_FAILURES,
    EXIT_INTERRUPTED,
    Enroller,
    Reporter,
    configured_identity_labels,
    make_reporter,
)
from ballast.internal.enroll.report import EXIT_USAGE
from ballast.internal.enrollment import MODES
from ballast.runtime import Clock


def flag_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the flags, in the enroll script's words, or None."""
    mode = args.mode or ""
    if not mode:
        return f"--mode is required ({'|'.join(MODES)})"
    if mode not in MODES:
        return f"invalid --mode '{mode}' (want {'|'.join(MODES)})"
    if args.ignore:
        try:
            re.compile(args.ignore)
        except re.error as exc:
            return f"invalid --ignore regex /{args.ignore}/: {exc}"
    for flag, seconds in (("--timeout", args.timeout), ("--settle", args.settle)):
        if seconds < 0:
            return f"invalid {flag} {seconds:g}: must not be negative"
    return _identity_labels_problem(args.identity_labels)


def _identity_labels_problem(flag: str | None) -> str | None:
    """A key of `--identity-labels` the API server would refuse as a label key, or one given twice."""
    from ballast.internal.naming.labelkey import label_key_problem  # noqa: PLC0415

    seen: set[str] = set()
    for key in (part.strip() for part in (flag or "").split(",") if part.strip()):
        problem = label_key_problem(key)
        if problem is not None:
            return f"invalid --identity-labels: {problem}"
        if key in seen:
            return f"invalid --identity-labels: {key!r} appears more than once"
        seen.add(key)
    return None


def namespace_problem(client: Any, namespace: str | None) -> str | None:
    """`-n` naming a namespace that does not exist (one we may not read is left to the listing to report)."""
    from ballast.runtime import NotFoundError  # noqa: PLC0415

    if not namespace:
        return None
    try:
        client.get("v1/Namespace", namespace)
    except NotFoundError:
        return f'namespace "{namespace}" not found'
    except API_FAILURES:  # forbidden or unreachable: the listing that follows says so in its own words
        return None
    return None


def run(args: argparse.Namespace, *, reporter: Reporter | None = None, clock: Clock | None = None) -> int:  # noqa: PLR0911
    """`ballast enroll` with parsed flags; returns the exit code (0, 1 on bad usage or no cluster, 2 on a FAIL)."""
    problem = flag_problem(args)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_USAGE
    try:
        client = connect(args)
    except ConnectError as exc:
        return fail(exc)
    problem = namespace_problem(client, args.namespace)
    if problem:
        client.close()
        return fail(problem)
    try:
        configured = None if args.identity_labels else configured_identity_labels(client)
        identity = resolve_identity(args.identity_labels, configured, getattr(args, "context", None))
    except IdentityError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    options = Options(args.mode, remode=args.remode, no_restart=args.no_restart, timeout=args.timeout)
    enroller = Enroller(
        client,
        identity,
        options,
        apply=args.apply,
        namespace=args.namespace,
        ignore=args.ignore,
        settle=args.settle,
        reporter=reporter or make_reporter(),
        clock=clock,
    )
    try:
        return enroller.run().exit_code()
    except KeyboardInterrupt:
        if enroller.inflight:
            print(f"\n{messages.interrupted(enroller.inflight)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except API_FAILURES as exc:
        return fail(exc)
    finally:
        client.close()
