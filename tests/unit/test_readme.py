"""The README is the front door: short, `make dev` and `make test` first (the command CI runs), then `make demo`,
and a link to every page under docs/; the manuals live on those pages. Every relative link of the README, the
docs and the benchmark results resolves: the file exists, and so does the heading an anchor names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.paths import REPOSITORY

README = REPOSITORY / "README.md"
DOCS = REPOSITORY / "docs"
MAX_LINES = 250
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def code_blocks(text: str) -> list[tuple[str, str]]:
    return [(match[1], match[2]) for match in BLOCK.finditer(text)]


def commands(block: str) -> list[str]:
    """A bash block's commands, without their comments."""
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def docs_pages() -> list[Path]:
    """Every page under docs/ but the example projects' own files (docs/examples/<project>/…)."""
    return sorted(p for p in DOCS.rglob("*.md") if "examples" not in p.relative_to(DOCS).parts)


def test_the_readme_is_short() -> None:
    lines = README.read_text().count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines (at most {MAX_LINES}): the manuals belong in docs/"


def test_make_dev_and_make_test_come_first_then_make_demo() -> None:
    blocks = code_blocks(README.read_text())
    assert blocks[0][0] == "bash"
    assert commands(blocks[0][1]) == ["make dev", "make test"]
    assert commands(blocks[1][1]) == ["make demo"]


def test_ci_runs_the_readme_test_command() -> None:
    (test_command,) = [c for c in commands(code_blocks(README.read_text())[0][1]) if "test" in c]
    ci = (REPOSITORY / ".ci" / "run").read_text()
    assert "README's test command" in ci
    # `phase "<name>" make test ALREADY_PASSED=...`: the suites CI ran beside the tool builds are not run twice
    lines = [re.sub(r'^phase "[^"]*" ', "", line.strip()) for line in ci.splitlines()]
    assert any(line == test_command or line.startswith(f"{test_command} ") for line in lines)


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {
        (REPOSITORY / target.partition("#")[0]).resolve()
        for target in LINK.findall(README.read_text())
        if not re.match(r"^[a-z]+:", target) and not target.startswith("#")
    }
    pages = docs_pages()
    assert DOCS / "index.md" in pages
    assert [str(p.relative_to(REPOSITORY)) for p in pages if p.resolve() not in linked] == []


def test_the_readme_install_commands_are_those_of_the_installation_page() -> None:
    readme = README.read_text()
    install = readme[readme.index("## Install\n") :]
    (block,) = [body for language, body in code_blocks(install.split("\n## ", 1)[0]) if language == "bash"]
    page = (DOCS / "install.md").read_text().replace('"$HELM"', "helm")  # the page's helm may be one it built
    for line in block.splitlines():
        assert line.strip() in page, f"README's install line is not in docs/install.md: {line}"


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = BLOCK.sub("", path.read_text())
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(text):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


LINKED_FILES = [README, *docs_pages(), REPOSITORY / "benchmarks" / "RESULTS.md"]


@pytest.mark.parametrize("source", LINKED_FILES, ids=lambda p: str(p.relative_to(REPOSITORY)))
def test_every_relative_link_resolves(source: Path) -> None:
    broken = []
    for target in LINK.findall(BLOCK.sub("", source.read_text())):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (source.parent / path).resolve() if path else source
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no such heading")
    assert broken == []


def test_slugs_follow_github() -> None:
    assert slug("Try it: `make dev`") == "try-it-make-dev"
    assert slug("The operator (`ballastd`)") == "the-operator-ballastd"
    assert slug("What BallastConfig and MetricsSource accept") == "what-ballastconfig-and-metricssource-accept"
