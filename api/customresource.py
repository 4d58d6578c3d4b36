"""The base class of every kind: the framework's (`ballast.runtime.crd.customresource`), re-exported
for the kinds of `ballast.api` — their identity on the API server (group, version, kind, plural, scope), the API
paths built from it, and what their CustomResourceDefinition shows (short names, printer columns, subresources).
"""

from __future__ import annotations

from ballast.runtime.crd.customresource import CustomResource

__all__ = ["CustomResource"]
