"""`--leave-alone-namespaces` (docs/design.md, difference 60): names, deduplicated; a bad one named."""

from __future__ import annotations

import pytest

from ballast.internal.cmd.ballastd import build_parser, leave_alone_namespaces


def test_the_flag_gives_the_names_once_each_in_order() -> None:
    args = build_parser().parse_args(["--leave-alone-namespaces", "tenant-admin, batch,tenant-admin,"])
    assert leave_alone_namespaces(args) == ("tenant-admin", "batch")
    assert leave_alone_namespaces(build_parser().parse_args([])) == ()


@pytest.mark.parametrize("bad", ["Bad_Name", "-lead", "x" * 64])
def test_a_name_that_cannot_be_a_namespace_is_named_with_the_flag(bad: str) -> None:
    args = build_parser().parse_args(["--leave-alone-namespaces", f"ok,{bad}"])
    with pytest.raises(ValueError, match=r"--leave-alone-namespaces: .* is not a namespace name"):
        leave_alone_namespaces(args)
