"""CRD files of typed kinds: one `<group>_<plural>.yaml` per kind after a header, written only when they differ,
and nothing written with `check`."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest
import yaml

from ballast.runtime.crd import HEADER, CustomResource, Scope, crd_for, rendered_crds, write_crds


class Thing(CustomResource):
    """A thing."""

    GROUP: ClassVar[str] = "example.com"
    VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Thing"
    PLURAL: ClassVar[str] = "things"
    SCOPE: ClassVar[Scope] = "Cluster"


class OtherThing(CustomResource):
    """The same plural in the same group: the same file."""

    GROUP: ClassVar[str] = "example.com"
    VERSION: ClassVar[str] = "v2"
    KIND: ClassVar[str] = "OtherThing"
    PLURAL: ClassVar[str] = "things"
    SCOPE: ClassVar[Scope] = "Cluster"


def test_rendered_crds_are_named_by_group_and_plural_after_the_header() -> None:
    ((name, text),) = rendered_crds([Thing]).items()

    assert name == "example.com_things.yaml"
    assert text.startswith(HEADER + "---\n")
    assert yaml.safe_load(text) == crd_for(Thing)
    assert rendered_crds([Thing], header="# ours\n")[name].startswith("# ours\n---\n")


def test_two_kinds_in_one_file_are_refused() -> None:
    with pytest.raises(ValueError, match=r"example\.com_things\.yaml"):
        rendered_crds([Thing, OtherThing])


def test_write_crds_writes_what_differs_and_check_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "crds"
    target = out / "example.com_things.yaml"

    assert write_crds(out, [Thing], check=True) == [target]
    assert not out.exists()
    assert write_crds(out, [Thing]) == [target]
    assert write_crds(out, [Thing]) == []
    (out / "someone-elses.yaml").write_text("kept\n")
    assert write_crds(out, [Thing], check=True) == []
    assert (out / "someone-elses.yaml").read_text() == "kept\n"
