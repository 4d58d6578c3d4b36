"""The policies an admission judges, compiled and put in merge order once, and rebuilt only when they change.

Every Pod of a namespace is judged against the same cluster policies and the same namespaced ones, and the pods
of one workload carry the same labels and the same scheduling fields. A `PolicySet` therefore holds the
policies compiled (`compile_policy`), already in `order_policies` order, and remembers the selection for each
set of labels it has judged and the merge for each (selection, scheduling fields) it has merged;
`PolicySets` keeps one per namespace and rebuilds it only when a listed policy is not the object it was built
from (the cache replaces an object on every change and never edits one in place, so identity is enough).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Generic, TypeVar

import orjson

from ballast.runtime.objects import FrozenDict, stored

from .matching import CompiledPolicy, Selection
from .merge import merge_detailed
from .order import order_policies
from .outcome import MergeResult
from .policies import policy_ref

LabelKey = tuple[tuple[str, str], ...]
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """A dict of at most `limit` entries; the oldest goes first when a new one needs room. Each entry keeps the
    object its key names by identity (`owner`), so a key built from an `id()` never finds another object's
    entry. Reads and writes are single dict operations (atomic under the GIL)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: dict[K, tuple[object, V]] = {}

    def get(self, key: K, owner: object) -> V | None:
        found = self._entries.get(key)
        return found[1] if found is not None and found[0] is owner else None

    def put(self, key: K, owner: object, value: V) -> None:
        while len(self._entries) >= self.limit:
            try:
                del self._entries[next(iter(self._entries))]
            except (StopIteration, KeyError, RuntimeError):  # emptied or changed by another thread meanwhile
                break
        self._entries[key] = (owner, value)

    def __len__(self) -> int:
        return len(self._entries)


class Memos:
    """The memos of every `PolicySet` of one `PolicySets`, bounded together: remembered selections (label sets
    judged), merges (scheduling fields merged) and the annotation texts."""

    def __init__(self, selections: int = 4096, merges: int = 1024) -> None:
        self.selections: Memo[tuple[int, LabelKey, LabelKey], Selection[Mapping[str, Any]]] = Memo(selections)
        self.merges: Memo[tuple[int, bytes], MergeResult] = Memo(merges)
        self.refs: Memo[int, str] = Memo(merges)


def _label_key(labels: Mapping[str, str] | None) -> LabelKey | None:
    """The labels as a memo key, or None when a value is not a string (a malformed object: judged, not kept)."""
    items = (labels or {}).items()
    if not all(type(value) is str for _, value in items):
        return None
    return tuple(sorted(items))


class PolicySet:
    """Compiled policies in merge order; `select` gives what `select_compiled` would, remembered per label set.

    `sources` are the listed objects the set was built from (`stored` dicts), kept so that `built_from` can
    tell by identity whether a new listing is the same. What is remembered goes to `memos` (shared by the sets of
    one `PolicySets`, so their bound is for all namespaces together)."""

    def __init__(
        self,
        compiled: Sequence[CompiledPolicy],
        sources: Sequence[Any] = (),
        generation: int | None = None,
        memos: Memos | None = None,
    ) -> None:
        ordered = order_policies([c.policy for c in compiled if c.error is None])
        by_policy = {id(c.policy): c for c in compiled if c.error is None}
        self.policies: tuple[CompiledPolicy, ...] = tuple(by_policy[id(p)] for p in ordered)
        """The valid policies, in merge order."""
        self.invalid = tuple(c for c in compiled if c.error is not None)
        """The policies that are invalid as stored, in listing order."""
        self.errors = tuple(c.error for c in self.invalid if c.error is not None)
        """Their `ERROR` outcomes."""
        self.sources = tuple(sources)
        self.generation = generation
        """The count of policy changes the set was built at (`PolicySets.current`), when the caller keeps one."""
        self.reads_namespace = any(c.cluster for c in self.policies)
        """Whether any policy is a cluster one (only those read the namespace's labels)."""
        self.memos = memos if memos is not None else Memos()

    def built_from(self, sources: Sequence[Any]) -> bool:
        """Whether `sources` are the very objects this set was built from, in the same order."""
        return len(sources) == len(self.sources) and all(a is b for a, b in zip(sources, self.sources, strict=True))

    def select(
        self, namespace_labels: Mapping[str, str] | None, pod_labels: Mapping[str, str] | None
    ) -> Selection[Mapping[str, Any]]:
        """The policies that apply, in merge order, and the errors: `select_compiled`'s answer."""
        namespace_key = _label_key(namespace_labels) if self.reads_namespace else ()
        pod_key = _label_key(pod_labels)
        key = None if namespace_key is None or pod_key is None else (id(self), namespace_key, pod_key)
        found = None if key is None else self.memos.selections.get(key, self)
        if found is None:
            matched = tuple(c.policy for c in self.policies if c.matches(namespace_labels, pod_labels))
            found = Selection(matched, self.errors)
            if key is not None:
                self.memos.selections.put(key, self, found)
        return found

    def refs(self, selection: Selection[Mapping[str, Any]]) -> str:
        """The matched policies' `policy_ref`s in merge order, comma-separated (the Pod annotation's value)."""
        found = self.memos.refs.get(id(selection), selection)
        if found is None:
            found = ",".join(policy_ref(policy) for policy in selection.matched)
            self.memos.refs.put(id(selection), selection, found)
        return found

    def merge(self, fields: Mapping[str, Any], selection: Selection[Mapping[str, Any]]) -> MergeResult:
        """`merge_detailed(fields, selection.matched)`, remembered for a selection of this set's and the same
        `fields` (a pod spec's scheduling fields). The result is shared between calls: read it, never edit it."""
        try:
            key = (id(selection), orjson.dumps(fields, option=orjson.OPT_SORT_KEYS))
        except TypeError:  # not plain JSON: merged, not remembered
            return merge_detailed(fields, selection.matched)
        found = self.memos.merges.get(key, selection)
        if found is None:
            found = merge_detailed(fields, selection.matched)
            self.memos.merges.put(key, selection, found)
        return found


class PolicySets:
    """One `PolicySet` per namespace, rebuilt when the policies listed for it change.

    `compile` turns one listed policy into a `CompiledPolicy` (the caller's memo, per resourceVersion). Only
    listings of cache views (`FrozenDict`) are reused: a reader that hands out models or plain dicts gives no
    guarantee that an object is not edited in place, so its policies are put in a new set on every call. At most
    `LIMIT` namespaces are kept (the oldest set goes first), and the sets' memos are bounded together
    (`Memos`), so memory stays bounded however many namespaces and pod shapes are admitted."""

    LIMIT = 1024

    def __init__(self, compile: Callable[[Any], CompiledPolicy], memos: Memos | None = None) -> None:
        self._compile = compile
        self._sets: dict[str, PolicySet] = {}
        self._lock = threading.Lock()
        self.memos = memos if memos is not None else Memos()

    def current(self, namespace: str, generation: int) -> PolicySet | None:
        """The set of `namespace` if it was built at `generation` of a count of policy changes the caller keeps
        (a cache's informer events), else None: nothing to list while nothing changed."""
        found = self._sets.get(namespace)
        return found if found is not None and found.generation == generation else None

    def get(self, namespace: str, listed: Sequence[Any], generation: int | None = None) -> PolicySet:
        """The set for `namespace` over `listed` (its cluster policies, then its own), built if they changed.
        `generation` is the caller's count of policy changes read before listing, for `current`."""
        views = all(isinstance(p, FrozenDict) for p in listed)
        sources = [stored(p) for p in listed] if views else []
        current = self._sets.get(namespace)
        if views and current is not None and current.built_from(sources):
            if generation is not None and current.generation != generation:
                current.generation = generation  # the same objects: the set is right at this count too
            return current
        built = PolicySet([self._compile(p) for p in listed], sources, generation, self.memos)
        if views:
            with self._lock:  # two threads may build the same set; either result is right
                while len(self._sets) >= self.LIMIT and namespace not in self._sets:
                    del self._sets[next(iter(self._sets))]
                self._sets[namespace] = built
        return built
