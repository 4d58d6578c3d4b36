"""`ballastd`: the operator process (controllers on the leader, webhook and caches on every replica)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ballast import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ballastd",
        description="Ballast operator: keeps pods' resource requests and limits matched to measured usage.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    _parser().parse_args(argv)
    print("ballastd: the operator is not wired yet; see the README for what works today", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
