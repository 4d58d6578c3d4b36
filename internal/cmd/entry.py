"""The console scripts `ballastd` and `ballast`: they need the operator's dependencies, which a framework-only
install (`pip install ballast`, for `ballast.runtime`) leaves out. Without them the command says which extra to
install instead of failing on an ImportError deep in the wiring."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

OPERATOR_MODULES = {"redis": "redis", "re2": "google-re2", "rich": "rich", "croniter": "croniter"}
"""The modules only the operator and its CLI import, by the distribution that provides each."""
EXIT_MISSING_EXTRA = 2


def missing_operator_packages() -> list[str]:
    """The distributions of `ballast[operator]` that are not installed."""
    return [package for module, package in OPERATOR_MODULES.items() if importlib.util.find_spec(module) is None]


def _require_operator(program: str) -> int | None:
    missing = missing_operator_packages()
    if not missing:
        return None
    print(
        f"{program}: the operator's dependencies are not installed (missing: {', '.join(missing)}); "
        "install ballast[operator]: pip install 'ballast[operator]'",
        file=sys.stderr,
    )
    return EXIT_MISSING_EXTRA


def ballastd(argv: Sequence[str] | None = None) -> int:
    """`ballastd`: the operator."""
    if (code := _require_operator("ballastd")) is not None:
        return code
    from ballast.internal.cmd.ballastd import main  # noqa: PLC0415 - only once its dependencies are known present

    return main(argv)


def ballast(argv: Sequence[str] | None = None) -> int:
    """`ballast`: the operator's CLI."""
    if (code := _require_operator("ballast")) is not None:
        return code
    from ballast.internal.cmd.ballast import main  # noqa: PLC0415 - only once its dependencies are known present

    return main(argv)
