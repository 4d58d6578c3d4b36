"""`hack/audit` (`make audit`): which known vulnerabilities fail the run — only those whose fix lies inside the
version range pyproject.toml allows — the allowlist, and the fallback to PyPI's project JSON."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import tomllib
import urllib.error
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet

from tests.paths import REPOSITORY

AUDIT_SCRIPT = REPOSITORY / "hack" / "audit"


def _load() -> Any:
    loader = importlib.machinery.SourceFileLoader("hack_audit", str(AUDIT_SCRIPT))
    spec = importlib.util.spec_from_loader("hack_audit", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    loader.exec_module(module)
    return module


audit = _load()
RANGES = audit.allowed_ranges(tomllib.loads((REPOSITORY / "pyproject.toml").read_text()))


@pytest.mark.parametrize(
    ("installed", "fixes", "allowed", "expected"),
    [
        ("2.7.0", ["2.7.4"], ">=2.7,<3", "2.7.4"),  # inside the range: take it
        ("2.7.0", ["3.0.1"], ">=2.7,<3", None),  # only outside: widen the constraint first
        ("37.0.2", ["38.0.0"], "==37.0.2", None),  # a pin allows no fix
        ("1.0", ["0.9.8", "1.2", "1.1.5"], "", "1.1.5"),  # the lowest above the installed one; 0.9.8 is another line
        ("1.0", [], "", None),  # no fix released
        ("1.0", ["not-a-version", "1.0.1"], "", "1.0.1"),  # an unparseable fix counts as none
        ("1.0", ["1.0"], "", None),  # the installed release itself is not a fix of it
        ("1.0", ["2.0rc1"], ">=1", "2.0rc1"),  # a pre-release fix still says an upgrade exists
    ],
)
def test_a_fix_counts_only_inside_the_allowed_range(
    installed: str, fixes: list[str], allowed: str, expected: str | None
) -> None:
    fix = audit.fix_in_range(installed, fixes, SpecifierSet(allowed))
    assert (str(fix) if fix is not None else None) == expected


def test_the_ranges_come_from_every_requirement_list_of_pyproject() -> None:
    assert RANGES["kubernetes"] == SpecifierSet(">=30")
    assert RANGES["redis"] == SpecifierSet(">=5.0")  # the operator extra
    assert RANGES["pydantic"] == SpecifierSet(">=2.12,<3")
    assert RANGES["ruff"] == SpecifierSet(">=0.17,<0.18")  # the dev extra
    assert RANGES["opentelemetry-sdk"] == SpecifierSet(">=1.30")  # the otel extra
    assert RANGES["setuptools"] == SpecifierSet(">=77")  # build-system.requires
    assert RANGES["pyyaml"] == SpecifierSet(">=6.0")  # by canonical name (PyYAML)
    assert "certifi" not in RANGES  # transitive: any version allowed


def test_one_package_in_several_lists_allows_what_all_of_them_allow() -> None:
    pyproject = {"project": {"dependencies": ["urllib3>=2.0"], "optional-dependencies": {"x": ["urllib3<2.5"]}}}
    assert audit.allowed_ranges(pyproject)["urllib3"] == SpecifierSet(">=2.0,<2.5")


def _package(name: str, version: str, *vulnerabilities: Any) -> Any:
    return audit.Package(name, version, tuple(vulnerabilities), audited_by="pip-audit")


def _vulnerability(identifier: str, *fixes: str, aliases: tuple[str, ...] = ()) -> Any:
    return audit.Vulnerability(identifier, aliases, fixes)


def test_each_finding_gets_its_verdict_and_only_an_in_range_fix_fails() -> None:
    packages = [
        _package("pydantic", "2.12.0", _vulnerability("PYSEC-1", "2.12.1")),
        _package("pydantic", "2.12.0", _vulnerability("PYSEC-2", "3.0.0")),
        _package("ruff", "0.17.2", _vulnerability("GHSA-ruff", "0.18.0")),
        _package("certifi", "2024.1.1", _vulnerability("PYSEC-3", "2024.7.4")),
        _package("urllib3", "2.0.0", _vulnerability("PYSEC-4")),
        _package("PyYAML", "6.0", _vulnerability("PYSEC-5", "6.0.1", aliases=("CVE-2099-1",))),
    ]
    allowlist = audit.read_allowlist("CVE-2099-1 pyyaml reviewed 2026-12: we only load our own files  # comment\n")
    findings = audit.judge(packages, RANGES, allowlist)
    verdicts = [(f.vulnerability.id, f.verdict) for f in findings]
    assert verdicts == [("PYSEC-1", "FIX"), ("PYSEC-2", "CONSTRAINED"), ("GHSA-ruff", "CONSTRAINED"),
                        ("PYSEC-3", "FIX"), ("PYSEC-4", "NO FIX"), ("PYSEC-5", "ALLOWED")]  # fmt: skip
    assert findings[0].detail == "upgrade to 2.12.1 (pyproject allows <3,>=2.12)"
    assert findings[2].detail == "fixed in 0.18.0, outside what pyproject allows (<0.18,>=0.17)"
    assert findings[5].detail == "reviewed 2026-12: we only load our own files"
    assert audit.exit_code(findings) == audit.FIXABLE
    assert audit.exit_code([f for f in findings if f.verdict != "FIX"]) == audit.OK


def test_an_allowlist_entry_needs_an_id_a_package_and_a_reason() -> None:
    assert audit.read_allowlist("# only comments\n\n") == {}
    with pytest.raises(audit.AuditError, match="allowlist line 2"):
        audit.read_allowlist("# header\nPYSEC-1 pyyaml\n")


def test_the_committed_allowlist_parses() -> None:
    entries = audit.read_allowlist(audit.ALLOWLIST.read_text())
    assert all(reason.strip() for reason in entries.values())


def test_the_project_json_audits_a_package_at_its_latest_release() -> None:
    document = {
        "info": {"version": "2.6.1"},
        "vulnerabilities": [
            {"id": "PYSEC-2017-94", "aliases": ["CVE-2013-7459"], "fixed_in": [], "summary": "overflow"},
            {"id": "PYSEC-OLD", "aliases": [], "fixed_in": ["2.6.2"], "withdrawn": "2024-01-01T00:00:00Z"},
        ],
    }
    package = audit.from_project_json("pycrypto", "2.6.1", fetch=lambda url: document)
    assert package.audited_by == "project JSON"
    assert [v.id for v in package.vulnerabilities] == ["PYSEC-2017-94"]  # a withdrawn one is not a finding
    assert package.vulnerabilities[0].aliases == ("CVE-2013-7459",)


def test_the_project_json_says_nothing_of_an_older_release() -> None:
    document = {"info": {"version": "3.0"}, "vulnerabilities": []}
    package = audit.from_project_json("thing", "2.9", fetch=lambda url: document)
    assert (package.audited_by, package.vulnerabilities) == ("", ())
    assert package.skipped == "installed 2.9; the index's data covers only the latest, 3.0"


def test_an_index_that_does_not_answer_is_unreachable() -> None:
    def refused(url: str) -> Any:
        raise urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))

    with pytest.raises(audit.UnreachableError, match=r"pypi\.org/pypi/thing/json"):
        audit.from_project_json("thing", "1.0", fetch=refused)
