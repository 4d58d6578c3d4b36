"""How the reader pages a LIST: every page parsed as it comes, and a list whose continue token expired (410, as
after an etcd compaction: the API server's answer is simulated here, the paging is the reader's) started over
rather than stitched, so an object is never counted twice."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.consolidation.inputs import read
from ballast.runtime import ObjectList
from ballast.runtime.apierrors import GoneError
from ballast.runtime.client import APIServerClient


class Pages:
    """A LIST of `items` in pages of `limit`; the continue tokens of the first `expire` lists expire after one page.
    It pages as the framework's client does (`Client.list_all` over this `list`)."""

    list_all = APIServerClient.list_all

    def __init__(self, items: list[int], expire: int = 0) -> None:
        self.items = items
        self.expire = expire
        self.calls: list[tuple[int, str | None]] = []

    def list(self, kind: Any, namespace: str | None = None, *, limit: int, continue_: str | None = None,
             **_: Any) -> ObjectList:  # fmt: skip
        self.calls.append((limit, continue_))
        if continue_ is not None and self.expire:
            self.expire -= 1
            raise GoneError(410, "Expired", "The provided continue parameter is too old")
        start = int(continue_ or 0)
        end = start + limit
        return ObjectList(self.items[start:end], continue_=str(end) if end < len(self.items) else "")


def test_every_page_is_read_once() -> None:
    pages = Pages(list(range(7)))
    assert read._paged(pages, "v1/Node", lambda i: i * 10, page_size=3) == [0, 10, 20, 30, 40, 50, 60]  # type: ignore[arg-type]
    assert pages.calls == [(3, None), (3, "3"), (3, "6")]


def test_an_expired_continue_starts_the_list_over() -> None:
    pages = Pages(list(range(5)), expire=2)
    assert read._paged(pages, "v1/Pod", lambda i: i, page_size=2) == [0, 1, 2, 3, 4]  # type: ignore[arg-type]
    assert [c for _, c in pages.calls].count(None) == 3  # two restarts, no item twice


def test_a_list_that_keeps_expiring_raises() -> None:
    pages = Pages(list(range(5)), expire=10)
    with pytest.raises(GoneError):
        read._paged(pages, "v1/Pod", lambda i: i, page_size=2)  # type: ignore[arg-type]
