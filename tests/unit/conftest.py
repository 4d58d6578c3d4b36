"""Fixtures shared by unit tests across packages (a package with its own `api` fixture overrides this one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ballast.runtime import FakeAPI
from tests.unit.support import register_our_kinds


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    """An in-memory API server serving every kind of ours, as their CRDs do on a real one."""
    fake = register_our_kinds(FakeAPI())
    yield fake
    fake.close()
