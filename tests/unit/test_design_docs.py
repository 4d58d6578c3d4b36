"""The design documents stay current: docs/design.md's layout tables name every package of `internal/`, every
controller module and every webhook module, `internal/__init__.py`'s package map names every package, and
docs/operator.md's lane table names every lane and admission path the wiring registers."""

from __future__ import annotations

import ast
import re

from ballast.internal.cmd.wiring import CONTROLLERS
from tests.paths import REPOSITORY

DESIGN = REPOSITORY / "docs" / "design.md"
OPERATOR = REPOSITORY / "docs" / "operator.md"
WIRING = REPOSITORY / "internal" / "cmd" / "wiring.py"


def _section(text: str, heading: str) -> str:
    """The text under `heading` up to the next heading of the same or a higher level."""
    level = heading.split(" ", maxsplit=1)[0]
    start = text.index(f"\n{heading}\n")
    following = re.compile(rf"^#{{1,{len(level)}}} ", re.MULTILINE)
    found = following.search(text, start + len(heading) + 2)
    return text[start : found.start() if found else len(text)]


def _packages() -> list[str]:
    return sorted(path.name for path in (REPOSITORY / "internal").iterdir() if (path / "__init__.py").is_file())


def _modules(folder: str) -> list[str]:
    return sorted(path.name for path in (REPOSITORY / folder).glob("*.py") if path.name != "__init__.py")


def _table_cells(text: str) -> set[str]:
    """Every backquoted name in the rows of the markdown tables of `text` (prose does not count)."""
    return {name for line in text.splitlines() if line.startswith("|") for name in re.findall(r"`([^`]+)`", line)}


def test_the_layout_names_every_package_controller_and_webhook_module() -> None:
    layout = _table_cells(_section(DESIGN.read_text(), "## Layout"))
    missing = [f"internal/{name}/" for name in _packages() if f"internal/{name}/" not in layout]
    missing += [f"controllers/{name}" for name in _modules("controllers") if f"controllers/{name}" not in layout]
    missing += [f"webhook/{name}" for name in _modules("webhook") if f"webhook/{name}" not in layout]
    assert len(_packages()) > 20
    assert len(_modules("controllers")) > 10
    assert len(_modules("webhook")) > 7
    assert missing == []


def test_the_package_map_in_internal_init_names_every_package() -> None:
    docstring = ast.get_docstring(ast.parse((REPOSITORY / "internal" / "__init__.py").read_text())) or ""
    assert [name for name in _packages() if f"`{name}/`" not in docstring] == []


def test_the_layout_says_which_test_folders_exist() -> None:
    layout = _section(DESIGN.read_text(), "## Layout")
    folders = [path.name for path in (REPOSITORY / "tests").iterdir() if (path / "__init__.py").is_file()]
    assert "e2e" in folders
    assert [name for name in folders if f"`{name}/`" not in layout] == []


def _wired() -> tuple[set[str], set[str]]:
    """The controller and webhook modules `internal/cmd/wiring.py` calls `setup` / `register` on."""
    calls = [node.func for node in ast.walk(ast.parse(WIRING.read_text())) if isinstance(node, ast.Call)]
    called = [(call.value.id, call.attr) for call in calls
              if isinstance(call, ast.Attribute) and isinstance(call.value, ast.Name)]  # fmt: skip
    controllers = {name for name, method in called if method == "setup" and _exists("controllers", name)}
    webhooks = {name for name, method in called if method == "register" and _exists("webhook", name)}
    return controllers, webhooks


def _exists(folder: str, module: str) -> bool:
    return (REPOSITORY / folder / f"{module}.py").is_file()


def _paths(module: str) -> list[str]:
    """The admission paths a webhook module serves: its `*_PATH` constants."""
    tree = ast.parse((REPOSITORY / "webhook" / f"{module}.py").read_text())
    named = [(target.id, node.value) for node in tree.body if isinstance(node, ast.Assign)
             for target in node.targets if isinstance(target, ast.Name)]  # fmt: skip
    return [str(value.value) for name, value in named if name.endswith("_PATH") and isinstance(value, ast.Constant)]


def test_the_operator_page_lists_every_lane_and_path_the_wiring_registers() -> None:
    lanes = _section(OPERATOR.read_text(), "## Process layout")
    cells = _table_cells(lanes)
    controllers, webhooks = _wired()
    assert {"enrollment", "schedulingpolicy", "balancer", "consolidation"} <= controllers
    assert {"pods", "scheduling", "schedulingpolicies"} <= webhooks
    missing = [f"controllers/{name}.py" for name in sorted(controllers) if f"controllers/{name}.py" not in cells]
    missing += [f"webhook/{name}.py" for name in sorted(webhooks) if f"webhook/{name}.py" not in cells]
    missing += [name for name in CONTROLLERS if name not in cells]
    missing += [path for name in sorted(webhooks) for path in _paths(name) if path not in cells]
    assert missing == []


def test_the_checks_read_the_tables() -> None:
    table = "| a | b |\n|---|---|\n| `internal/x/` | `y` and `z.py` |\nprose `internal/w/`\n"
    assert _table_cells(table) == {"internal/x/", "y", "z.py"}
    assert _section("# A\n\n## B\nb\n### C\nc\n## D\nd\n", "## B") == "\n## B\nb\n### C\nc\n"
    assert _paths("pods") == ["/mutate-v1-pod", "/validate-v1-pod"]
