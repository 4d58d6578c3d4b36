"""The default run's table and verdict in docs/simulate.md, written from that run's JSON (`hack/simulate-docs`).

`make demo` writes `demo/figures.json` and `demo/verdict.json`; `hack/simulate-docs demo` copies both into
`docs/data/simulate-demo/` and rewrites the part of docs/simulate.md between `BEGIN` and `END` with the report's
own table (`report.figures_table`, recomputed from the copied figures) and the verdict's lines, under a line
naming the machine and the date of the run. `tests/unit/internal/fleetsim/test_docs.py` checks that the page holds
exactly that and that the verdict follows from the figures, so the page cannot drift from a run.
"""

from __future__ import annotations

import datetime
import os
import platform
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from .figures import Figures, figures_from_json, verdict, verdict_json
from .report import figures_table, markdown_table, recommender_order

PAGE = Path("docs") / "simulate.md"
DATA = Path("docs") / "data" / "simulate-demo"
FILES = ("figures.json", "verdict.json", "run.json")
BEGIN = "<!-- begin: the default run's table and verdict, written by hack/simulate-docs -->"
END = "<!-- end: the default run's table and verdict -->"


class DocsError(ValueError):
    """The page or the run's files are not as `hack/simulate-docs` needs them; the message says which."""


def load_figures(data: Path) -> dict[str, Figures]:
    """Every recommender's figures from `data/figures.json`, in the report's column order."""
    raw: Mapping[str, Any] = orjson.loads((data / "figures.json").read_bytes())
    return {name: figures_from_json(raw[name]) for name in recommender_order(raw)}


def poll_interval_of(verdict_data: Mapping[str, Any]) -> int:
    """The poll interval the run's verdict judged the cold start against."""
    for clause in verdict_data["clauses"]:
        if clause["name"] == "new-namespace cold start":
            return int(clause["figures"]["poll_interval_s"])
    raise DocsError("verdict.json has no new-namespace cold start clause")


def recomputed_verdict(data: Path) -> dict[str, object]:
    """The verdict of the figures in `data/figures.json`, as `verdict.json` would hold it."""
    results = load_figures(data)
    committed = orjson.loads((data / "verdict.json").read_bytes())
    judged = verdict(results["ballast"], results["vpa"], poll_interval_of(committed), results.get("none"))
    return verdict_json(judged)


def block(data: Path) -> str:
    """What the page holds between `BEGIN` and `END`: the run's line, the report's table and the verdict."""
    results = load_figures(data)
    run = orjson.loads((data / "run.json").read_bytes())
    judged = orjson.loads((data / "verdict.json").read_bytes())
    table = markdown_table(figures_table(results, list(results)))
    outcome = "passed" if judged["passed"] else "failed"
    failed = [clause["name"] for clause in judged["clauses"] if not clause["passed"]]
    lines = [
        BEGIN,
        "",
        f"`{run['command']}` on {run['date']}, {run['machine']}; the JSON is in"
        f" [docs/data/simulate-demo/](data/simulate-demo/figures.json).",
        "",
        *table,
        "",
        *(f"- {clause['text']}" for clause in judged["clauses"]),
        "",
        f"**Verdict on this scenario: {outcome}**" + (f" ({', '.join(failed)})" if failed else ""),
        "",
        END,
    ]
    return "\n".join(lines)


def replace_block(page: str, new_block: str) -> str:
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise DocsError(f"{PAGE} has no block between {BEGIN!r} and {END!r}")
    return page[:start] + new_block + page[end + len(END) :]


def page_block(page: str) -> str:
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise DocsError(f"{PAGE} has no block between {BEGIN!r} and {END!r}")
    return page[start : end + len(END)]


def machine() -> str:
    """The host as the docs name it: cores and processor model."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass  # not Linux: platform's name will do
    return f"{os.cpu_count()} cores ({model})"


def write(run_dir: Path, root: Path, command: str, note: str = "") -> Path:
    """Copy `run_dir`'s JSON into the docs and rewrite the page's block; returns the page."""
    target = root / DATA
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES[:2]:
        if not (run_dir / name).is_file():
            raise DocsError(f"{run_dir / name}: missing (run `make demo` first)")
        shutil.copyfile(run_dir / name, target / name)
    written = datetime.datetime.fromtimestamp((run_dir / "figures.json").stat().st_mtime, tz=datetime.UTC)
    run = {"command": command, "date": written.strftime("%Y-%m-%d %H:%M UTC"), "machine": machine() + note}
    (target / "run.json").write_bytes(orjson.dumps(run, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n")
    page = root / PAGE
    page.write_text(replace_block(page.read_text(encoding="utf-8"), block(target)), encoding="utf-8")
    return page


def main(argv: Sequence[str], root: Path) -> int:
    """`hack/simulate-docs RUN_DIR [NOTE]`: RUN_DIR is `make demo`'s output; NOTE is appended to the machine."""
    if not argv or len(argv) > 2:
        print("usage: hack/simulate-docs RUN_DIR [NOTE]   (RUN_DIR: the output of `make demo`)")
        return 2
    try:
        page = write(Path(argv[0]), root, "make demo", f", {argv[1]}" if len(argv) > 1 else "")
    except (DocsError, OSError) as exc:
        print(f"hack/simulate-docs: {exc}")
        return 1
    print(f"wrote {page} and {root / DATA}")
    return 0
