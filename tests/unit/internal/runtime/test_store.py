"""The Indexer: keyed objects plus named indexes that follow every write."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballast.runtime._store import NAMESPACE_INDEX, IndexConflictError, Indexer, namespace_index


def pod(name: str, namespace: str = "shop", node: str | None = None, **labels: str) -> dict[str, Any]:
    spec = {"nodeName": node} if node else {}
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": spec}


def by_node(obj: Any) -> list[str]:
    node = obj["spec"].get("nodeName")
    return [node] if node else []


def by_label_values(obj: Any) -> Iterable[str]:
    return sorted(obj["metadata"]["labels"].values())


def test_upsert_get_delete_and_keys() -> None:
    store = Indexer()
    assert store.upsert(pod("a")) is None
    first = pod("a", app="v1")
    previous = store.upsert(first)
    assert previous is not None
    assert previous["metadata"]["labels"] == {}  # returns the previous object
    store.upsert(pod("node-1", namespace=""))
    assert store.get("shop/a") is first
    assert sorted(store.keys()) == ["node-1", "shop/a"]
    assert len(store) == 2
    assert len(store.values()) == 2
    assert store.delete("shop/a") is first
    assert store.delete("shop/a") is None
    assert store.get("shop/a") is None
    assert store.keys() == ["node-1"]


def test_indexes_follow_value_changes() -> None:
    store = Indexer({"node": by_node})
    store.upsert(pod("a", node="n1"))
    store.upsert(pod("b", node="n1"))
    assert store.index_keys("node", "n1") == ["shop/a", "shop/b"]
    store.upsert(pod("a", node="n2"))  # moved
    assert store.index_keys("node", "n1") == ["shop/b"]
    assert store.index_keys("node", "n2") == ["shop/a"]
    store.upsert(pod("b"))  # no value any more
    assert store.index_keys("node", "n1") == []
    assert store.index_values("node") == ["n2"]  # empty values are dropped, not kept as empty sets
    store.delete("shop/a")
    assert store.index_values("node") == []


def test_multi_valued_indexes() -> None:
    store = Indexer({"labels": by_label_values})
    store.upsert(pod("a", x="red", y="blue"))
    store.upsert(pod("b", x="red"))
    assert [o["metadata"]["name"] for o in store.by_index("labels", "red")] == ["a", "b"]
    assert store.index_keys("labels", "blue") == ["shop/a"]
    store.upsert(pod("a", x="green"))
    assert store.index_keys("labels", "red") == ["shop/b"]
    assert store.index_values("labels") == ["green", "red"]


def test_by_index_is_in_key_order() -> None:
    store = Indexer({NAMESPACE_INDEX: namespace_index})
    for name in ["zeta", "alpha", "mid"]:
        store.upsert(pod(name))
    store.upsert(pod("other", namespace="elsewhere"))
    assert [o["metadata"]["name"] for o in store.by_index(NAMESPACE_INDEX, "shop")] == ["alpha", "mid", "zeta"]
    assert store.by_index(NAMESPACE_INDEX, "missing") == []


def test_cluster_scoped_objects_have_no_namespace_index_value() -> None:
    assert namespace_index(pod("n", namespace="")) == []
    assert namespace_index(pod("n")) == ["shop"]


def test_replace_swaps_content_and_rebuilds_indexes() -> None:
    store = Indexer({"node": by_node})
    store.upsert(pod("a", node="n1"))
    store.upsert(pod("b", node="n1"))
    previous = store.replace({"shop/b": pod("b", node="n2"), "shop/c": pod("c", node="n1")})
    assert sorted(previous) == ["shop/a", "shop/b"]
    assert sorted(store.keys()) == ["shop/b", "shop/c"]
    assert store.index_keys("node", "n1") == ["shop/c"]
    assert store.index_keys("node", "n2") == ["shop/b"]


def test_indexes_added_after_items_exist_cover_them_and_later_writes() -> None:
    store = Indexer()
    store.upsert(pod("a", node="n1"))
    store.upsert(pod("b"))
    assert not store.has_index("node")
    store.add_indexers({"node": by_node})
    assert store.has_index("node")
    assert store.index_keys("node", "n1") == ["shop/a"]
    store.upsert(pod("b", node="n1"))
    store.upsert(pod("a", node="n3"))
    assert store.index_keys("node", "n1") == ["shop/b"]
    assert store.index_keys("node", "n3") == ["shop/a"]


def test_index_names_are_unique_and_unknown_ones_are_named() -> None:
    store = Indexer({"node": by_node})
    with pytest.raises(IndexConflictError, match="index 'node' already exists"):
        store.add_indexers({"other": by_node, "node": by_node})
    assert not store.has_index("other")  # nothing was added
    with pytest.raises(KeyError, match=r"no index named 'nope'; known: \['node'\]"):
        store.by_index("nope", "x")
    with pytest.raises(KeyError, match="no index named 'nope'"):
        store.index_keys("nope", "x")


def test_a_custom_key_function() -> None:
    store = Indexer(key_func=lambda obj: obj["metadata"]["uid"])
    store.upsert({"metadata": {"uid": "u1", "name": "a"}})
    assert store.key({"metadata": {"uid": "u1"}}) == "u1"
    assert store.get("u1") is not None


_NAMES = st.sampled_from(["a", "b", "c", "d"])
_NODES = st.sampled_from([None, "n1", "n2", "n3"])
_OPS = st.lists(st.tuples(st.sampled_from(["upsert", "delete"]), _NAMES, _NODES), max_size=30)


@settings(max_examples=60)
@given(_OPS)
def test_indexes_always_equal_a_recomputation(operations: list[tuple[str, str, str | None]]) -> None:
    store = Indexer({"node": by_node, NAMESPACE_INDEX: namespace_index})
    for op, name, node in operations:
        if op == "upsert":
            store.upsert(pod(name, node=node))
        else:
            store.delete(f"shop/{name}")
    expected: dict[str, list[str]] = {}
    for key in sorted(store.keys()):
        for value in by_node(store.get(key)):
            expected.setdefault(value, []).append(key)
    assert {value: store.index_keys("node", value) for value in store.index_values("node")} == expected
    assert store.index_keys(NAMESPACE_INDEX, "shop") == sorted(store.keys())
