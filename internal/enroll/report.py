"""What `ballast enroll` prints: one record line per workload decision, the header and the summary line, and
the exit code — in the enroll script's formats, so wrappers that parse its output keep working."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ballast.internal.enrollment import MODE_LABEL

EXIT_OK = 0
EXIT_USAGE = 1
"""Bad flags, no identity labels, the API server unreachable: nothing was attempted."""
EXIT_FAILED = 2
"""At least one workload FAILed (the others were still processed)."""


class Status(enum.StrEnum):
    """A record's status. PLAN (dry-run) and NOTE are informational and not counted in the summary."""

    PLAN = "PLAN"
    OK = "OK"
    WARN = "WARN"
    SKIP = "SKIP"
    FAIL = "FAIL"
    NOTE = "NOTE"


@dataclass(frozen=True, slots=True)
class Record:
    """One decision about one workload (`subject`, e.g. `deployment web/api`), or a NOTE about several."""

    status: Status
    subject: str
    detail: str

    def line(self) -> str:
        """`OK    deployment web/api                                      enrolled (…)`: status in 5 columns,
        subject in 55, then the detail."""
        return f"{self.status.value:<5} {self.subject:<55} {self.detail}"


@dataclass(frozen=True, slots=True)
class Tally:
    """The counts of the summary line."""

    enrolled: int = 0
    failed: int = 0
    warnings: int = 0
    skipped: int = 0

    @classmethod
    def of(cls, records: Iterable[Record]) -> Tally:
        """Count OK as enrolled, FAIL, WARN and SKIP; PLAN and NOTE do not count."""
        counts = Counter(record.status for record in records)
        return cls(counts[Status.OK], counts[Status.FAIL], counts[Status.WARN], counts[Status.SKIP])

    def summary(self) -> str:
        """`Summary: 3 enrolled, 0 failed, 1 warning(s), 2 skipped.`"""
        return (
            f"Summary: {self.enrolled} enrolled, {self.failed} failed, "
            f"{self.warnings} warning(s), {self.skipped} skipped."
        )

    def exit_code(self) -> int:
        """2 when any workload failed, else 0 (warnings and skips are not failures)."""
        return EXIT_FAILED if self.failed else EXIT_OK


def header(mode: str, *, apply: bool, namespace: str | None) -> str:
    """The first line: whether this run changes anything, at which mode, and where."""
    if apply:
        scope = f"namespace {namespace}" if namespace else "all namespaces"
        return f"=== APPLY MODE [mode={mode}]: changes will be made ({scope}) ==="
    return f"=== DRY-RUN [mode={mode}]: no changes will be made; re-run with --apply to execute ==="


def options_lines(mode: str, *, ignore: str | None, no_restart: bool, remode: bool) -> list[str]:
    """The lines after the identity line that restate options changing what happens."""
    lines: list[str] = []
    if ignore:
        lines.append(f"Ignoring workload names matching: /{ignore}/")
    if no_restart:
        lines.append("Route: no-restart (hotfix in place) for all workloads, including multi-replica.")
    if remode:
        lines.append(f"Re-mode: workloads already at a different mode will be changed to {mode}.")
    return lines


def found_line(deployments: int, statefulsets: int, daemonsets: int) -> str:
    """`Found (before ignore filter): 2 deployment(s), 1 statefulset(s), 0 daemonset(s)`."""
    return (
        f"Found (before ignore filter): {deployments} deployment(s), {statefulsets} statefulset(s), "
        f"{daemonsets} daemonset(s)"
    )


def already_enrolled_note(count: int, mode: str) -> Record:
    """The NOTE for StatefulSets and DaemonSets already at `mode`."""
    return Record(
        Status.NOTE,
        "already enrolled",
        f"{count} workload(s) already carry {MODE_LABEL}={mode}; nothing to do (no patch, no restart)",
    )


def converged_note(count: int, mode: str) -> Record:
    """The NOTE for Deployments whose template, current ReplicaSet and pods are all at `mode`."""
    return Record(
        Status.NOTE,
        "already enrolled",
        f"{count} deployment(s) already fully enrolled at {MODE_LABEL}={mode} "
        "(template, ReplicaSet, and all pods); nothing to do",
    )
