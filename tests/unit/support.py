"""Helpers shared by unit tests across packages."""

from __future__ import annotations

from typing import TypeVar

from ballast.api.scheme import KINDS
from ballast.internal.runtime import FakeAPI, GroupVersionKind

API = TypeVar("API", bound=FakeAPI)


def register_our_kinds(api: API) -> API:
    """Serve every kind of `ballast.api.scheme.KINDS` on `api`, as their CRDs do on a real server; returns `api`."""
    for kind in KINDS:
        gvk = GroupVersionKind(kind.GROUP, kind.VERSION, kind.KIND)
        api.register(gvk, kind.PLURAL, namespaced=kind.SCOPE == "Namespaced", status=kind.STATUS_SUBRESOURCE)
    return api
