"""What the admission handlers read through, and the owner lookup behind the policy `kinds` rule.

The handlers read policies, the BallastConfig and WorkloadProfiles through the manager's cache-backed client
(`manager.client`); any object with `get` and `list` of that shape will do (a plain `Client`, a fake).

Owners (ReplicaSet → Deployment, Job → CronJob) are read through a reader of their own, which the wiring
points at `manager.api_reader` (live reads): a Deployment's rollout creates the new ReplicaSet milliseconds
before its first pod, so a cache may not hold it yet at that pod's admission — the pod would then miss a
`kinds: [Deployment]` policy and be admitted under another profile. Live reads also keep cluster-wide
ReplicaSet/Job informers off every replica, honour the webhook's request deadline, and need only `get`
permission. They cost at most one GET per owner in the chain, and only when some candidate policy lists
`kinds` at all (`PodMutator` checks that first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from ballast.internal.policy import OwnerLookup
from ballast.internal.runtime import objects
from ballast.internal.runtime.apierrors import ForbiddenError, NotFoundError
from ballast.internal.runtime.gvk import GroupVersionKind
from ballast.internal.runtime.restmapper import NoKindMatchError

M = TypeVar("M", bound=BaseModel)


class Reader(Protocol):
    """Reads objects by kind (a GroupVersionKind, `"apps/v1/ReplicaSet"`, or a registered model type).

    `manager.client` (cache), `manager.api_reader` (live) and `FakeAPI().client()` all fit. `get` raises
    NotFoundError when the object does not exist.
    """

    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any: ...

    def list(self, kind: Any, namespace: str | None = None) -> Iterable[Any]: ...


def as_model(model: type[M], obj: Any) -> M:
    """`obj` as an instance of `model`: returned as is when it already is one (cache and client reads of a
    registered kind), validated from its wire form otherwise (dicts, read-only views). Raises pydantic's
    ValidationError for an object that does not fit the model."""
    if isinstance(obj, model):
        return obj
    return model.model_validate(objects.thaw(obj) if isinstance(obj, Mapping) else obj)


def owner_lookup(reader: Reader) -> OwnerLookup:
    """An `OwnerLookup` for `PodFacts.from_pod` reading each controller owner through `reader`.

    An owner that does not exist, whose kind the API server does not serve, that we may not read, or whose uid
    differs from the reference's (deleted and recreated) ends the chain: the kinds known so far stand. Any other
    error (timeouts, 5xx) propagates, so the caller can answer "policy not available" instead of resolving with
    a chain it could not read.
    """

    def lookup(namespace: str, reference: Mapping[str, Any]) -> Mapping[str, Any] | None:
        api_version, kind, name = reference.get("apiVersion"), reference.get("kind"), reference.get("name")
        if not (isinstance(api_version, str) and isinstance(kind, str) and isinstance(name, str) and name):
            return None
        try:
            gvk = GroupVersionKind.from_api_version(api_version, kind)
            owner = reader.get(gvk, name, namespace or None)
        except (NotFoundError, ForbiddenError, NoKindMatchError, ValueError):
            return None
        uid = reference.get("uid")
        if uid and objects.uid(owner) and objects.uid(owner) != uid:
            return None
        return owner if isinstance(owner, Mapping) else objects.thaw(owner)

    return lookup
