"""Ballast for Python: right-sizing operator and a controller-runtime-style framework.

The top-level folders are reached as `ballast.*` through relative symlinks in this package (docs/design.md,
layout): `ballast.api`, `ballast.controllers`, `ballast.webhook`, the framework `ballast.runtime` (its files are
in `internal/runtime/`) and `ballast.internal`, a real package whose sub-packages are symlinks to `internal/`'s,
the framework's excepted, so each source file is importable under one module name only.
"""

__version__ = "0.1.0.dev0"
