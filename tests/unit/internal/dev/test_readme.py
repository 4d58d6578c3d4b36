"""The `make dev` section of docs/development.md names what a new user needs to find the operator: its namespace."""

from __future__ import annotations

from ballast.internal.dev.scenario import OPERATOR_NAMESPACE
from tests.paths import REPOSITORY


def _dev_section() -> str:
    text = (REPOSITORY / "docs" / "development.md").read_text()
    start = text.index("## Try it: `make dev`")
    return text[start : text.index("\n## ", start + 1)]


def test_the_dev_section_names_the_operator_namespace_the_demo_uses() -> None:
    section = _dev_section()
    assert OPERATOR_NAMESPACE == "ballast-system"
    assert f"`{OPERATOR_NAMESPACE}`" in section
