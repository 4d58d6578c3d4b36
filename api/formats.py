"""The string formats our CRD schemas check on the API server: Go durations and Kubernetes qualified names
(label keys), as OpenAPI `pattern`s and CEL rules (`x-kubernetes-validations`) — the framework's
(`ballast.runtime.crd.formats`, `enum` from `ballast.runtime.crd.markers`), re-exported here.

They change the generated schema only (`CRDSchema`), never the models' own validation: an object stored before
a rule existed must still be read, so that the operator can say it is invalid (docs/design.md, difference 26).
The exact checks, with messages naming the field, are the domain's (`ballast.internal.metricsources.validation`,
`ballast.internal.enrollment.config`), which the validating webhook and the lanes call.
"""

from __future__ import annotations

from ballast.runtime.crd.formats import (
    DURATION_MAX_LENGTH,
    DURATION_PATTERN,
    DURATION_UNITS,
    LABEL_NAME_MAX_LENGTH,
    LABEL_PREFIX_MAX_LENGTH,
    QUALIFIED_NAME_MAX_LENGTH,
    QUALIFIED_NAME_PATTERN,
    UNSIGNED_DURATION_PATTERN,
    duration,
    positive_duration,
    qualified_name,
    unique_items,
)
from ballast.runtime.crd.markers import enum

__all__ = [
    "DURATION_MAX_LENGTH",
    "DURATION_PATTERN",
    "DURATION_UNITS",
    "LABEL_NAME_MAX_LENGTH",
    "LABEL_PREFIX_MAX_LENGTH",
    "QUALIFIED_NAME_MAX_LENGTH",
    "QUALIFIED_NAME_PATTERN",
    "UNSIGNED_DURATION_PATTERN",
    "duration",
    "enum",
    "positive_duration",
    "qualified_name",
    "unique_items",
]
