"""Every design reference in the repository resolves inside it: nothing cites a document that is not shipped
(section signs, the upstream anchor notes, the architecture notes or the shared folder beside the checkout — see
`OUTSIDE`), every `docs/….md` named exists, and every "docs/design.md, difference N" names an item of that
file's numbered list."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.paths import REPOSITORY

TEXT_SUFFIXES = (".py", ".md", ".yaml", ".yml", ".toml", ".cfg", ".txt", ".sh", ".tpl")
OUTSIDE = re.compile(r"§|anchor\.md|architecture\.md|\.\./shared")
DOC = re.compile(r"\bdocs/[\w./-]+\.md\b")
DIFFERENCE = re.compile(r"docs/design\.md,\s+differences?\s+(\d+(?:(?:,\s*|\s+and\s+|–)\d+)*)")
ITEM = re.compile(r"^(\d+)\. \*\*", re.MULTILINE)
THIS_FILE = Path(__file__).resolve()


def tracked_text_files() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files"], cwd=REPOSITORY, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    paths = [REPOSITORY / name for name in names]
    return [p for p in paths if p.is_file() and p != THIS_FILE and (p.suffix in TEXT_SUFFIXES or p.name == "Makefile")]


def _numbers(spec: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r",\s*|\s+and\s+", spec):
        low, _, high = part.partition("–")
        numbers.extend(range(int(low), int(high or low) + 1))
    return numbers


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {str(p.relative_to(REPOSITORY)): p.read_text(errors="replace") for p in tracked_text_files()}


def test_nothing_cites_a_document_outside_the_repository(texts: dict[str, str]) -> None:
    found = [
        f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
        for name, text in texts.items()
        for match in OUTSIDE.finditer(text)
    ]
    assert found == []


def test_every_named_doc_exists(texts: dict[str, str]) -> None:
    missing = sorted(
        {
            f"{name}: {doc}"
            for name, text in texts.items()
            for doc in DOC.findall(text)
            if not (REPOSITORY / doc).is_file()
        }
    )
    assert missing == []


def test_every_cited_difference_is_an_item_of_the_design(texts: dict[str, str]) -> None:
    items = {int(number) for number in ITEM.findall((REPOSITORY / "docs/design.md").read_text())}
    assert items == set(range(1, max(items) + 1)), "the differences are numbered 1..N without gaps"
    cited = {
        (name, number)
        for name, text in texts.items()
        for match in DIFFERENCE.finditer(text)
        for number in _numbers(match.group(1))
    }
    assert cited, "the code cites the differences it implements"
    assert sorted((name, n) for name, n in cited if n not in items) == []


CITED_TEST = re.compile(r"\b(tests/[\w/]+\.py)(?:::(\w+))?")


def test_every_cited_test_exists(texts: dict[str, str]) -> None:
    """A document that names a test (`tests/….py::test_name`) names one that is there."""
    missing = set()
    for name, text in texts.items():
        if not name.endswith(".md"):
            continue
        for path, function in CITED_TEST.findall(text):
            source = REPOSITORY / path
            if not source.is_file():
                missing.add(f"{name}: {path}")
            elif function and not re.search(rf"^(?:async )?def {function}\(", source.read_text(), re.MULTILINE):
                missing.add(f"{name}: {path}::{function}")
    assert sorted(missing) == []
