"""Ballast for Python: right-sizing operator and a controller-runtime-style framework.

The top-level folders (`api/`, `controllers/`, `webhook/`, `internal/`) are reached as `ballast.*`
through relative symlinks in this package (docs/design.md, layout). `ballast.runtime` is not a symlink: it is
the framework, `ballast.internal.runtime`, bound under a public name to the same module objects (`_runtime_alias`).
"""

from ballast import _runtime_alias

__version__ = "0.1.0.dev0"

_runtime_alias.install()  # `ballast.runtime` binds the modules of `ballast.internal.runtime` (see the module)
