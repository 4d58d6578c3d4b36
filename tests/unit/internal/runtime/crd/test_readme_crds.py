"""The "Your own CRDs" example (docs/framework/crds.md) runs as printed (as a module of its own), and its CRD
carries what its comments promise."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

from tests.paths import REPOSITORY


def example(directory: Path) -> ModuleType:
    body = (REPOSITORY / "docs" / "framework" / "crds.md").read_text()
    match = re.search(r"```python\n(.*?)```", body, re.DOTALL)
    assert match, "docs/framework/crds.md lost its example"
    path = directory / "readme_widgets.py"
    path.write_text(match.group(1))
    spec = importlib.util.spec_from_file_location("readme_widgets", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_widget_crd_has_the_enum_default_minimum_rule_and_status(tmp_path: Path) -> None:
    crd = example(tmp_path).crd
    assert crd["metadata"]["name"] == "widgets.example.com"
    (version,) = crd["spec"]["versions"]
    assert version["subresources"] == {"status": {}}
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["size"]["enum"] == ["Small", "Large"]
    assert spec["properties"]["size"]["default"] == "Small"
    assert spec["properties"]["min"]["minimum"] == 0
    assert spec["x-kubernetes-validations"] == [{"rule": "self.min <= self.max", "message": "min must not exceed max"}]
