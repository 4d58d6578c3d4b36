"""Register every kind of `ballast.api` in a runtime Scheme, so clients read and write them as models."""

from __future__ import annotations

from ballast.internal.runtime.gvk import GroupVersionKind
from ballast.internal.runtime.scheme import Scheme

from .crds import KINDS


def add_to_scheme(scheme: Scheme) -> Scheme:
    """Register every kind (controller-runtime's `AddToScheme`); returns the scheme for chaining."""
    for kind in KINDS:
        scheme.register(GroupVersionKind(kind.GROUP, kind.VERSION, kind.KIND), kind)
    return scheme
