"""`OwnerReader`, the one owner lookup of policy matching: owners read by uid and remembered, a chain that
cannot be followed ends where it is, other read errors propagate."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.policy import OwnerReader
from ballast.runtime.apierrors import ForbiddenError, InternalServerError
from ballast.runtime.restmapper import NoKindMatchError
from tests.unit.webhook.support import NAMESPACE, MemoryReader, owner

REPLICA_SET = {
    "apiVersion": "apps/v1", "kind": "ReplicaSet",
    "metadata": {"name": "web-7d9", "namespace": NAMESPACE, "uid": "rs-1",
                 "ownerReferences": [owner("Deployment", "web", "dep-1")]},
}  # fmt: skip


def test_the_owner_comes_back_with_what_the_walk_needs_and_is_read_once_per_uid() -> None:
    reader = MemoryReader(REPLICA_SET)
    lookup = OwnerReader(reader)
    for _ in range(3):
        found = lookup(NAMESPACE, owner("ReplicaSet", "web-7d9", "rs-1"))
        assert found is not None
        assert found["metadata"]["ownerReferences"] == [owner("Deployment", "web", "dep-1")]
    assert reader.reads_of("ReplicaSet") == [("get", "ReplicaSet", "web-7d9")]


@pytest.mark.parametrize("error", [ForbiddenError(403, "Forbidden", "no"), NoKindMatchError("no such kind")])
def test_an_owner_we_cannot_read_ends_the_chain(error: Exception) -> None:
    reader = MemoryReader(REPLICA_SET)
    reader.fail["ReplicaSet"] = error
    assert OwnerReader(reader)(NAMESPACE, owner("ReplicaSet", "web-7d9", "rs-1")) is None


@pytest.mark.parametrize(
    "reference",
    [
        owner("ReplicaSet", "gone", "rs-9"),  # not found
        owner("ReplicaSet", "web-7d9", "rs-2"),  # recreated under another uid
        {"kind": "ReplicaSet", "name": "web-7d9", "controller": True},  # no apiVersion
        owner("ReplicaSet", "web-7d9", "rs-1", api_version=""),  # an apiVersion without a version
    ],
)
def test_a_reference_that_does_not_lead_to_its_owner_ends_the_chain(reference: dict[str, Any]) -> None:
    assert OwnerReader(MemoryReader(REPLICA_SET))(NAMESPACE, reference) is None


def test_other_read_errors_propagate_and_are_not_remembered() -> None:
    reader = MemoryReader(REPLICA_SET)
    reader.fail["ReplicaSet"] = InternalServerError(500, "InternalError", "etcd")
    lookup = OwnerReader(reader)
    with pytest.raises(InternalServerError):
        lookup(NAMESPACE, owner("ReplicaSet", "web-7d9", "rs-1"))
    reader.fail.clear()
    assert lookup(NAMESPACE, owner("ReplicaSet", "web-7d9", "rs-1")) is not None


def test_a_refusal_is_asked_again_next_time() -> None:
    """RBAC that arrives late, or an owner kind served later, must not cut the chain for that uid forever."""
    reader = MemoryReader(REPLICA_SET)
    reader.fail["ReplicaSet"] = ForbiddenError(403, "Forbidden", "not yet")
    lookup = OwnerReader(reader)
    assert lookup(NAMESPACE, owner("ReplicaSet", "web-7d9", "rs-1")) is None
    reader.fail.clear()
    assert lookup(NAMESPACE, owner("ReplicaSet", "web-7d9", "rs-1")) is not None
