"""`make dev`: run the operator for real on a local control plane and show what it does (`internal/dev`).

python -m ballast.internal.cmd.dev                                   # live view; Ctrl-C stops everything
python -m ballast.internal.cmd.dev --non-interactive --exit-after cold-start --report run.json
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ballast import __version__
from ballast.internal.dev.demo import Demo, DemoOptions, default_interactive, interrupt_on_terminate
from ballast.internal.dev.preset import LOCAL_TESTING, SAMPLES_DIR
from ballast.internal.dev.usage import DEMO_DAY_SECONDS, Timeline


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="make dev",
        description="Start a local control plane with the local-testing preset, synthetic metrics.k8s.io and "
        "ballastd; create demo workloads and show profiles accruing, a cold-start admission and an in-place "
        "resize. Keeps running until Ctrl-C, which tears everything down.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--non-interactive",
        action="store_true",
        help="plain lines instead of the live view (the default when stdout is not a terminal or CI=true)",
    )
    parser.add_argument(
        "--exit-after",
        choices=["cold-start", "resized", "never"],
        default="never",
        help="stop after the cold-start admission, after the resize pod converged, or never (default: Ctrl-C)",
    )
    parser.add_argument("--report", type=Path, metavar="FILE", help="write a JSON record of the run to FILE")
    parser.add_argument("--kubernetes-version", help="control-plane version from the envtest cache")
    parser.add_argument("--seed", type=int, default=7, help="seed of the synthetic usage (default %(default)s)")
    parser.add_argument(
        "--day-minutes",
        type=float,
        default=DEMO_DAY_SECONDS / 60,
        help="length of the compressed usage day in minutes (default %(default)g)",
    )
    parser.add_argument(
        "--preset-dir",
        type=Path,
        default=SAMPLES_DIR / LOCAL_TESTING,
        help="preset objects to install (default: config/samples/local-testing)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.day_minutes <= 0:
        _parser().error("--day-minutes must be positive")
    options = DemoOptions(
        interactive=not args.non_interactive and default_interactive(),
        exit_after=args.exit_after,
        kubernetes_version=args.kubernetes_version,
        seed=args.seed,
        timeline=Timeline(day_seconds=args.day_minutes * 60),
        report_path=args.report,
        preset_dir=args.preset_dir,
    )
    interrupt_on_terminate()
    return Demo(options).run()


if __name__ == "__main__":
    sys.exit(main())
