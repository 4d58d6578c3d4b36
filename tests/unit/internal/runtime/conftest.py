"""Fixtures for the runtime's unit tests: an in-memory API server, a client on it, a fake clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ballast.runtime import Client, FakeAPI, FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    fake = FakeAPI()
    yield fake
    fake.close()


@pytest.fixture
def client(api: FakeAPI) -> Client:
    return api.client()
