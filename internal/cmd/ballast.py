"""`ballast`: the user CLI (enrollment, profiles, explanations)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ballast import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ballast",
        description="Ballast user CLI: enroll workloads and explain the resources Ballast gives them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _parser().parse_args(argv)
    print("ballast: no subcommands yet; see the README for what works today", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
