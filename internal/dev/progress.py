"""The `make dev` progress view: what the demo is doing, the profiles accruing, the resize ladder.

The demo builds a `Frame` (steps, profile rows, the resize trail) a few times a second and hands it to a view:

- `LiveView` (a terminal): one block redrawn in place with ANSI cursor movement, lines cut to the terminal width
  so the redraw stays aligned; permanent lines (`say`) go above it.
- `LineView` (a pipe, a log, `--non-interactive`): plain lines, one per change, each stamped with the seconds
  since start — what a test or CI reads.

Formatting is pure functions (`render`, `format_table`, `profile_row`, ...), tested without a terminal. Rows and
trails keep the quantities as the API has them; memory is shown with binary suffixes (`246.56Mi`, never the
canonical `258534604`) by `human_quantity` at render time. The table's MIN SAMPLES is the fewest samples of
any container and resource of the profile — what readiness waits for — and a legend under the table says so.
`history` is what stays on screen of a live block that is closed (the steps, not the live table).
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TextIO

from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.quantity import human_quantity
from ballast.internal.stats import parse_duration

StepState = Literal["waiting", "running", "done", "failed"]

MARKERS: Mapping[StepState, str] = {"waiting": "·", "running": "…", "done": "✓", "failed": "✗"}
COLORS: Mapping[StepState, str] = {"waiting": "2", "running": "33", "done": "32", "failed": "31"}
PROFILE_HEADERS = ("PROFILE", "STATE", "PODS", "MIN SAMPLES", "SPAN", "CPU REQ", "MEM REQ", "MEM LIM")
TABLE_LEGEND = (
    "MIN SAMPLES: the fewest of any container and resource (readiness needs them all); SPAN: the longest; "
    "REQ/LIM: the first container's recommendation"
)
NONE = "-"
TITLE_WIDTH = len("control plane")


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the demo does, in order: its title, where it stands, and a detail line."""

    title: str
    state: StepState = "waiting"
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ProfileRow:
    """A WorkloadProfile as the view shows it. `samples` is the fewest samples of any of its series."""

    name: str
    state: str
    pods: int
    samples: int
    span: str
    cpu_request: str = NONE
    memory_request: str = NONE
    memory_limit: str = NONE


@dataclass(frozen=True, slots=True)
class ResizeTrail:
    """The values a `resize` pod's first container went through, and the profile's current recommendation.
    `steps` counts the in-place resizes seen (a change of its cpu or memory request, or both)."""

    pod: str
    cpu: tuple[str, ...] = ()
    memory: tuple[str, ...] = ()
    target_cpu: str = NONE
    target_memory: str = NONE
    converged: bool = False
    steps: int = 0

    def seen(self, cpu: str, memory: str) -> ResizeTrail:
        """The trail after the pod was read with these requests (a step when either differs from the last)."""
        moved = bool(self.cpu or self.memory) and (self.cpu[-1:], self.memory[-1:]) != ((cpu,), (memory,))
        return dataclasses.replace(
            self,
            cpu=self.cpu if self.cpu[-1:] == (cpu,) else (*self.cpu, cpu),
            memory=self.memory if self.memory[-1:] == (memory,) else (*self.memory, memory),
            steps=self.steps + moved,
        )


@dataclass(frozen=True, slots=True)
class Frame:
    """Everything the view shows at one moment."""

    elapsed: float
    steps: tuple[Step, ...]
    profiles: tuple[ProfileRow, ...] = ()
    min_samples: int = 0
    min_time_span: str = ""
    resize: ResizeTrail | None = None
    notes: tuple[str, ...] = field(default=())


def format_elapsed(seconds: float) -> str:
    """`m:ss` for the header clock (`1:05`)."""
    whole = max(int(seconds), 0)
    return f"{whole // 60}:{whole % 60:02d}"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """kubectl's table layout: upper-case headers, columns left-aligned, three spaces between, no trailing blanks."""
    widths = [len(h) for h in headers]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))
    lines = []
    for row in (headers, *rows):
        cells = [cell.ljust(widths[index]) for index, cell in enumerate(row)]
        lines.append("   ".join(cells).rstrip())
    return lines


def _fewest_samples(containers: Sequence[Mapping[str, Any]]) -> int:
    counts = [int(stat.get("samples") or 0) for c in containers for stat in c.get("usageStats") or ()]
    return min(counts) if counts else 0


def _span_ns(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError:
        return -1


def _longest_span(containers: Sequence[Mapping[str, Any]]) -> str:
    spans = [str(stat.get("timeSpan") or "") for c in containers for stat in c.get("usageStats") or ()]
    spans = [s for s in spans if s]
    return max(spans, key=_span_ns) if spans else NONE


def profile_row(profile: Mapping[str, Any]) -> ProfileRow:
    """The row of a WorkloadProfile object (wire form): state, pods, samples, span, first container's values."""
    status = profile.get("status") or {}
    containers: Sequence[Mapping[str, Any]] = status.get("containers") or ()
    recommendations: Mapping[str, Any] = (containers[0].get("recommendations") or {}) if containers else {}
    cpu = recommendations.get("cpu") or {}
    memory = recommendations.get("memory") or {}
    return ProfileRow(
        name=str((profile.get("metadata") or {}).get("name", "")),
        state=str(status.get("state") or "Accruing"),
        pods=int(status.get("activeWorkloads") or 0),
        samples=_fewest_samples(containers),
        span=_longest_span(containers),
        cpu_request=str(cpu.get("request") or NONE),
        memory_request=str(memory.get("request") or NONE),
        memory_limit=str(memory.get("limit") or NONE),
    )


def shown(value: str, resource: str) -> str:
    """A quantity as the view shows it (`human_quantity`); the `-` of an unset value stays."""
    return value if value == NONE else human_quantity(value, resource)


def profile_cells(row: ProfileRow, min_samples: int, min_time_span: str = "") -> tuple[str, ...]:
    """The table cells of a row; while accruing, samples and span show what readiness still waits for
    (`3/5`, `45s/1m`)."""
    accruing = row.state != "Sufficient"
    samples = f"{row.samples}/{min_samples}" if accruing and row.samples < min_samples else str(row.samples)
    span = f"{row.span}/{min_time_span}" if accruing and min_time_span and row.span != NONE else row.span
    return (
        row.name,
        row.state,
        str(row.pods),
        samples,
        span,
        shown(row.cpu_request, "cpu"),
        shown(row.memory_request, "memory"),
        shown(row.memory_limit, "memory"),
    )


def trail_text(values: Sequence[str], resource: str = "cpu") -> str:
    """`1 → 643m → 465m`: the distinct values in order, as the view shows `resource`'s quantities."""
    return " → ".join(shown(value, resource) for value in values) if values else NONE


def resize_line(trail: ResizeTrail) -> str:
    """One line for the resize pod: each resource's ladder and its target (or what it waits for)."""
    if NONE in (trail.target_cpu, trail.target_memory):
        cpu = shown(trail.cpu[-1], "cpu") if trail.cpu else NONE
        memory = shown(trail.memory[-1], "memory") if trail.memory else NONE
        return f"resize {trail.pod}: cpu {cpu}, memory {memory}; waiting for its profile to be Sufficient"
    verdict = "converged" if trail.converged else "stepping"
    cpu, memory = trail_text(trail.cpu, "cpu"), trail_text(trail.memory, "memory")
    return (
        f"resize {trail.pod} ({verdict}): cpu {cpu} (target {shown(trail.target_cpu, 'cpu')}); "
        f"memory {memory} (target {shown(trail.target_memory, 'memory')})"
    )


def resize_step(trail: ResizeTrail, toward: str) -> tuple[StepState, str]:
    """The resize step's state and detail, from the trail as it is now — so the line never outlives what it
    says: `converged in 4 in-place step(s)` while it holds, `stepping again` once the recommendation moved on."""
    if trail.converged:
        return "done", f"{trail.pod} converged in {trail.steps} in-place step(s)"
    if trail.steps:
        return "running", f"{trail.pod}: stepping toward {toward}, {trail.steps} in-place step(s) so far"
    return "running", f"{trail.pod}: stepping toward {toward}"


def command_lines(commands: Sequence[tuple[str, str]]) -> list[str]:
    """Shell commands with their `# comments` aligned in one column (commands without one stay bare)."""
    width = max((len(command) for command, comment in commands if comment), default=0)
    return [f"{command.ljust(width)}  # {comment}" if comment else command for command, comment in commands]


def paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def step_line(step: Step, color: bool) -> str:
    marker = paint(MARKERS[step.state], COLORS[step.state], color)
    title = step.title.ljust(TITLE_WIDTH)
    return f"  {marker} {title} {step.detail}".rstrip()


def render(frame: Frame, *, color: bool = False) -> list[str]:
    """The live block: a header with the clock, the steps, the profile table, the resize line, notes."""
    lines = [
        paint(f"Ballast dev — the operator on a local control plane   {format_elapsed(frame.elapsed)}", "1", color)
    ]
    lines += [step_line(step, color) for step in frame.steps]
    if frame.profiles:
        lines.append("")
        rows = [profile_cells(p, frame.min_samples, frame.min_time_span) for p in frame.profiles]
        lines += ["  " + line for line in format_table(PROFILE_HEADERS, rows)]
        lines.append("  " + paint(TABLE_LEGEND, "2", color))
    if frame.resize is not None:
        lines += ["", "  " + resize_line(frame.resize)]
    if frame.notes:
        lines.append("")
        lines += ["  " + paint(note, "2", color) for note in frame.notes]
    return lines


POD_HEADERS = ("NAMESPACE", "NAME", "MODE", "CPU REQ", "MEM REQ", "MEM LIM", "STATUS")


def pod_table(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    """The demo pods (wire form) as a table of their first container's requests and limits, sorted by namespace
    and name, quantities as the view shows them."""
    rows = []
    for pod in sorted(pods, key=lambda p: (p["metadata"].get("namespace", ""), p["metadata"].get("name", ""))):
        metadata = pod["metadata"]
        containers = (pod.get("spec") or {}).get("containers") or [{}]
        resources = containers[0].get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        rows.append(
            (
                str(metadata.get("namespace", "")),
                str(metadata.get("name", "")),
                str((metadata.get("labels") or {}).get(MODE_LABEL, NONE)),
                shown(str(requests.get("cpu", NONE)), "cpu"),
                shown(str(requests.get("memory", NONE)), "memory"),
                shown(str(limits.get("memory", NONE)), "memory"),
                str((pod.get("status") or {}).get("phase") or NONE),
            )
        )
    return format_table(POD_HEADERS, rows)


def history(frame: Frame, *, color: bool = False) -> list[str]:
    """What stays on screen when a live block gives way to other output: the title and the steps taken, without
    the clock, the steps still waiting, the profile table or the resize line — the next live block shows those,
    fresh."""
    title = paint("Ballast dev — the operator on a local control plane", "1", color)
    return [title, *(step_line(step, color) for step in frame.steps if step.state != "waiting")]


def changes(previous: Frame | None, current: Frame) -> list[str]:
    """What changed between two frames, as plain lines (the `LineView`'s output)."""
    lines: list[str] = []
    before_steps = {s.title: s for s in previous.steps} if previous else {}
    for step in current.steps:
        if step.state != "waiting" and before_steps.get(step.title) != step:
            lines.append(f"{MARKERS[step.state]} {step.title}: {step.detail}".rstrip(": "))
    before_rows = {p.name: p for p in previous.profiles} if previous else {}
    for row in current.profiles:
        old = before_rows.get(row.name)
        # Every new state or pod count; samples only while accruing (afterwards a line per cycle says little).
        if (
            old is None
            or (old.state, old.pods) != (row.state, row.pods)
            or (row.state != "Sufficient" and old.samples != row.samples)
        ):
            cells = profile_cells(row, current.min_samples, current.min_time_span)
            lines.append(
                f"profile {row.name}: {row.state}, {row.pods} pod(s), fewest samples {cells[3]} over {cells[4]}, "
                f"cpu request {cells[5]}, memory request {cells[6]} limit {cells[7]}"
            )
    old_trail = previous.resize if previous else None
    if (current.resize is not None and current.resize.cpu) and (
        old_trail is None
        or (old_trail.cpu, old_trail.memory, old_trail.converged)
        != (current.resize.cpu, current.resize.memory, current.resize.converged)
    ):
        lines.append(resize_line(current.resize))
    return lines


class View(Protocol):
    """Where the demo reports: `show` a frame (often), `say` a permanent line, `close` at the end — leaving on
    screen the last frame, or `keep` (e.g. `history(frame)`) instead of it."""

    def show(self, frame: Frame) -> None: ...

    def say(self, line: str = "") -> None: ...

    def close(self, keep: Sequence[str] | None = None) -> None: ...


class LineView:
    """Plain lines for pipes and tests: each change once, prefixed with seconds since start."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        self._out = out
        self._last: Frame | None = None

    def show(self, frame: Frame) -> None:
        for line in changes(self._last, frame):
            self._out.write(f"[{frame.elapsed:6.1f}s] {line}\n")
        self._out.flush()
        self._last = frame

    def say(self, line: str = "") -> None:
        self._out.write(line + "\n")
        self._out.flush()

    def close(self, keep: Sequence[str] | None = None) -> None:
        """Nothing to take back: every line printed stays (`keep` is for live views)."""
        self._out.flush()


class LiveView:
    """A block redrawn in place on a terminal; `say` prints above it. `close` leaves the last frame on screen."""

    def __init__(self, out: TextIO = sys.stdout, *, color: bool = True) -> None:
        self._out = out
        self._color = color
        self._height = 0
        self._last: list[str] = []

    def _width(self) -> int:
        return max(shutil.get_terminal_size((100, 24)).columns - 1, 20)

    def _erase(self) -> None:
        if self._height:
            self._out.write(f"\x1b[{self._height}F\x1b[J")  # to the block's first line, clear to the end
            self._height = 0

    def _draw(self, lines: list[str]) -> None:
        width = self._width()
        for line in lines:
            self._out.write(cut(line, width) + "\n")
        self._height = len(lines)

    def show(self, frame: Frame) -> None:
        lines = render(frame, color=self._color)
        self._erase()
        self._draw(lines)
        self._out.flush()
        self._last = lines

    def say(self, line: str = "") -> None:
        self._erase()
        self._out.write(line + "\n")
        self._draw(self._last)
        self._out.flush()

    def close(self, keep: Sequence[str] | None = None) -> None:
        """Leave the last frame on screen, or replace it with the lines `keep`; later output goes below."""
        if keep is not None:
            self._erase()
            self._draw(list(keep))
        self._height = 0
        self._last = []
        self._out.flush()


def cut(line: str, width: int) -> str:
    """`line` cut to `width` visible characters (ANSI color sequences do not count and are kept)."""
    visible = 0
    out: list[str] = []
    index = 0
    while index < len(line):
        if line.startswith("\x1b[", index):
            end = line.index("m", index) + 1
            out.append(line[index:end])
            index = end
            continue
        if visible < width:
            out.append(line[index])
            visible += 1
        index += 1
    return "".join(out)


def choose_view(out: TextIO, *, interactive: bool) -> View:
    """`LiveView` on a terminal when `interactive`, else `LineView`."""
    if interactive and out.isatty():
        return LiveView(out)
    return LineView(out)
