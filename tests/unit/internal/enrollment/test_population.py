"""Who feeds a profile: active pods and their namespaces (docs/design.md, difference 24)."""

from __future__ import annotations

from ballast.internal.enrollment import MODE_LABEL, NAMES_SHOWN, PodProjection, pod_projection, population


def pod(namespace: str, mode: str | None = "measure", deleting: bool = False) -> PodProjection:
    metadata: dict[str, object] = {"name": "p", "namespace": namespace, "labels": {MODE_LABEL: mode} if mode else {}}
    if deleting:
        metadata["deletionTimestamp"] = "2026-03-01T12:00:00Z"
    return pod_projection({"metadata": metadata})


def test_only_enrolled_pods_that_are_not_terminating_count_and_namespaces_are_distinct_and_sorted() -> None:
    found = population([pod("b"), pod("a"), pod("b"), pod("c", mode=None), pod("d", deleting=True), pod("e", "x")])
    assert (found.active, found.namespaces) == (3, ("a", "b"))
    assert found.contributing_namespaces() == {"count": 2, "names": ["a", "b"]}


def test_the_count_is_exact_and_the_names_stop_at_ten() -> None:
    found = population([pod(f"ns-{n:02d}") for n in range(25)])
    shown = found.contributing_namespaces()
    assert shown["count"] == 25
    assert shown["names"] == [f"ns-{n:02d}" for n in range(NAMES_SHOWN)]
    assert population([]).contributing_namespaces() == {"count": 0}
