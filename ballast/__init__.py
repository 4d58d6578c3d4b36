"""Ballast for Python: right-sizing operator and a controller-runtime-style framework.

The top-level folders (`api/`, `controllers/`, `webhook/`, `internal/`) are reached as `ballast.*`
through relative symlinks in this package (docs/design.md, layout).
"""

__version__ = "0.1.0.dev0"
