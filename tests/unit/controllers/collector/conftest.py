"""Fixtures of the collector's unit tests: a `world` (fake API wired like the operator, SQLite store, fake clock)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.controllers.collector.support import World


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    created = World(tmp_path)
    yield created
    created.close()
