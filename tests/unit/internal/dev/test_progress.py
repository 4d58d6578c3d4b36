"""The progress view: kubectl-style tables, profile rows, the live block and the plain lines."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import pytest

from ballast.internal.dev import progress
from ballast.internal.dev.progress import (
    Frame,
    LineView,
    LiveView,
    ProfileRow,
    ResizeTrail,
    Step,
    changes,
    choose_view,
    command_lines,
    cut,
    format_elapsed,
    format_table,
    profile_cells,
    profile_row,
    render,
    resize_line,
    step_line,
)
from ballast.internal.enrollment import MODE_LABEL

from .terminal import screen

PROFILE: dict[str, Any] = {
    "metadata": {"name": "checkout--api--default-a9696153"},
    "status": {
        "state": "Sufficient",
        "activeWorkloads": 3,
        "containers": [
            {
                "name": "api",
                "usageStats": [
                    {"resource": "cpu", "samples": 15, "timeSpan": "1m0s"},
                    {"resource": "memory", "samples": 14, "timeSpan": "59s"},
                ],
                "recommendations": {"cpu": {"request": "287m"}, "memory": {"request": "192Mi", "limit": "240Mi"}},
            }
        ],
    },
}


def test_format_table_lays_out_columns_like_kubectl() -> None:
    lines = format_table(("NAME", "STATE"), [("checkout", "Sufficient"), ("search-indexer", "Accruing")])
    assert lines == [
        "NAME             STATE",
        "checkout         Sufficient",
        "search-indexer   Accruing",
    ]


@pytest.mark.parametrize(("seconds", "text"), [(0, "0:00"), (65.9, "1:05"), (600, "10:00"), (-1, "0:00")])
def test_format_elapsed(seconds: float, text: str) -> None:
    assert format_elapsed(seconds) == text


def test_profile_row_reads_state_counts_and_recommendations() -> None:
    assert profile_row(PROFILE) == ProfileRow(
        name="checkout--api--default-a9696153",
        state="Sufficient",
        pods=3,
        samples=14,
        span="1m0s",
        cpu_request="287m",
        memory_request="192Mi",
        memory_limit="240Mi",
    )


def test_a_fresh_profile_is_accruing_with_nothing_yet() -> None:
    row = profile_row({"metadata": {"name": "x"}})
    assert (row.state, row.pods, row.samples, row.span, row.cpu_request) == ("Accruing", 0, 0, "-", "-")


def test_resize_line_shows_the_ladder_or_what_it_waits_for() -> None:
    waiting = ResizeTrail("staging/checkout-0", ("1",), ("512Mi",))
    assert resize_line(waiting) == (
        "resize staging/checkout-0: cpu 1, memory 512Mi; waiting for its profile to be Sufficient"
    )
    stepping = ResizeTrail("staging/checkout-0", ("1", "643m"), ("512Mi", "352Mi"), "287m", "192Mi")
    assert resize_line(stepping) == (
        "resize staging/checkout-0 (stepping): cpu 1 → 643m (target 287m); memory 512Mi → 352Mi (target 192Mi)"
    )


def frame(elapsed: float, *steps: Step, profiles: tuple[ProfileRow, ...] = ()) -> Frame:
    return Frame(elapsed=elapsed, steps=steps, profiles=profiles, min_samples=5)


def test_render_has_the_clock_the_steps_the_table_and_the_notes() -> None:
    row = profile_row(PROFILE)
    lines = render(
        Frame(
            elapsed=75,
            steps=(Step("control plane", "done", "ready"), Step("profiles", "running", "accruing")),
            profiles=(row,),
            min_samples=5,
            notes=("usage is synthetic",),
        )
    )
    assert lines[0].endswith("1:15")
    assert lines[1] == "  ✓ control plane ready"
    assert lines[2] == "  … profiles      accruing"
    assert lines[4].split() == [
        "PROFILE", "STATE", "PODS", "MIN", "SAMPLES", "SPAN", "CPU", "REQ", "MEM", "REQ", "MEM", "LIM",
    ]  # fmt: skip
    assert lines[5].split() == [
        "checkout--api--default-a9696153",
        "Sufficient",
        "3",
        "14",
        "1m0s",
        "287m",
        "192Mi",
        "240Mi",
    ]
    assert lines[-1] == "  usage is synthetic"
    assert not any("\x1b" in line for line in lines)
    assert any("\x1b[32m✓\x1b[0m" in line for line in render(frame(1, Step("x", "done")), color=True))


def test_accruing_rows_show_progress_toward_min_samples() -> None:
    row = ProfileRow("p", "Accruing", 2, 3, "30s")
    assert "3/5" in render(frame(1, profiles=(row,)))[-2]  # the row, above the legend


def test_changes_reports_each_change_once() -> None:
    first = frame(1, Step("control plane", "running", "starting"), Step("preset"))
    assert changes(None, first) == ["… control plane: starting"]
    assert changes(first, first) == []
    row = ProfileRow("p", "Accruing", 2, 3, "30s")
    second = frame(2, Step("control plane", "done", "ready"), Step("preset"), profiles=(row,))
    assert changes(first, second) == [
        "✓ control plane: ready",
        "profile p: Accruing, 2 pod(s), fewest samples 3/5 over 30s, cpu request -, memory request - limit -",
    ]
    assert changes(second, second) == []


def test_line_view_prints_changes_with_a_time_stamp() -> None:
    out = io.StringIO()
    view = LineView(out)
    view.show(frame(1.25, Step("metrics", "done", "Available")))
    view.show(frame(2.0, Step("metrics", "done", "Available")))
    view.say("plain")
    assert out.getvalue() == "[   1.2s] ✓ metrics: Available\nplain\n"


def test_live_view_redraws_its_block_in_place_and_prints_lines_above_it() -> None:
    out = io.StringIO()
    view = LiveView(out, color=False)
    view.show(frame(1, Step("a", "running")))
    assert "\x1b[" not in out.getvalue()  # nothing to erase yet
    view.show(frame(2, Step("a", "done")))
    assert "\x1b[2F\x1b[J" in out.getvalue()  # up over the two lines drawn, then clear
    view.say("hello")
    text = out.getvalue()
    assert text.rindex("hello\n") < text.rindex("✓ a")  # the block comes back below the line
    view.close()
    view.say("after")
    assert out.getvalue().endswith("✓ a\nafter\n")  # closed: the last frame stays, nothing redrawn


def test_cut_keeps_color_sequences_and_counts_only_visible_characters() -> None:
    assert cut("abcdef", 3) == "abc"
    assert cut("\x1b[32mabcdef\x1b[0m", 2) == "\x1b[32mab\x1b[0m"
    assert cut("ab", 10) == "ab"


def test_choose_view_is_live_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(choose_view(io.StringIO(), interactive=True), LineView)
    assert isinstance(choose_view(Terminal(), interactive=False), LineView)
    assert isinstance(choose_view(Terminal(), interactive=True), LiveView)


def test_sufficient_profiles_are_not_repeated_every_cycle() -> None:
    before = frame(1, profiles=(ProfileRow("p", "Sufficient", 3, 15, "1m0s", "287m"),))
    later = frame(16, profiles=(ProfileRow("p", "Sufficient", 3, 18, "1m15s", "290m"),))
    assert changes(before, later) == []
    more_pods = frame(17, profiles=(ProfileRow("p", "Sufficient", 4, 18, "1m15s", "290m"),))
    assert changes(later, more_pods) == [
        "profile p: Sufficient, 4 pod(s), fewest samples 18 over 1m15s, cpu request 290m, memory request - limit -"
    ]


def test_command_lines_align_their_comments() -> None:
    assert command_lines([("export A=1", "first"), ("kubectl get x", ""), ("tail -f log", "second")]) == [
        "export A=1   # first",
        "kubectl get x",
        "tail -f log  # second",
    ]


def test_accruing_rows_show_what_readiness_still_waits_for() -> None:
    few = ProfileRow("p", "Accruing", 3, 3, "15s")
    enough = ProfileRow("p", "Accruing", 3, 9, "30s")
    done = ProfileRow("p", "Sufficient", 3, 15, "1m0s")
    assert profile_cells(few, 5, "1m")[3:5] == ("3/5", "15s/1m")
    assert profile_cells(enough, 5, "1m")[3:5] == ("9", "30s/1m")
    assert profile_cells(done, 5, "1m")[3:5] == ("15", "1m0s")
    assert profile_cells(ProfileRow("p", "Accruing", 1, 0, "-"), 5, "1m")[3:5] == ("0/5", "-")


def test_the_samples_column_says_it_is_the_fewest_and_a_legend_explains_it() -> None:
    lines = render(frame(1, profiles=(profile_row(PROFILE),)))
    header = lines[2]
    assert "MIN SAMPLES" in header
    assert lines[3].split()[3] == "14"  # cpu has 15, memory 14: the fewest
    assert lines[4].strip().startswith("MIN SAMPLES: the fewest of any container and resource")


def test_memory_reads_with_binary_suffixes_wherever_the_view_shows_it() -> None:
    row = ProfileRow("p", "Sufficient", 3, 15, "1m0s", "314m", "258534604", "1Gi")
    assert profile_cells(row, 5)[5:] == ("314m", "246.56Mi", "1Gi")
    trail = ResizeTrail("staging/checkout-0", ("1", "657m"), ("512Mi", "384263372"), "314m", "258534604")
    assert resize_line(trail) == (
        "resize staging/checkout-0 (stepping): cpu 1 → 657m (target 314m); memory 512Mi → 366.46Mi (target 246.56Mi)"
    )
    pod = {
        "metadata": {"namespace": "dev-carol", "name": "checkout-0", "labels": {MODE_LABEL: "apply"}},
        "spec": {"containers": [{"resources": {"requests": {"cpu": "314m", "memory": "258534604"},
                                               "limits": {"memory": "1Gi"}}}]},
        "status": {"phase": "Running"},
    }  # fmt: skip
    assert [line.split() for line in progress.pod_table([pod])] == [
        ["NAMESPACE", "NAME", "MODE", "CPU", "REQ", "MEM", "REQ", "MEM", "LIM", "STATUS"],
        ["dev-carol", "checkout-0", "apply", "314m", "246.56Mi", "1Gi", "Running"],
    ]
    assert not any("258534604" in line for line in changes(None, frame(1, profiles=(row,))))


def test_the_resize_step_says_what_the_trail_says_now() -> None:
    trail = ResizeTrail("staging/checkout-0").seen("1", "512Mi")
    for cpu, memory in (("657m", "384Mi"), ("494m", "300Mi"), ("420m", "260Mi"), ("353m", "260Mi")):
        trail = trail.seen(cpu, memory)
    assert trail.steps == 4
    converged = dataclasses.replace(trail, target_cpu="340m", target_memory="250Mi", converged=True)
    assert progress.resize_step(converged, "checkout") == ("done", "staging/checkout-0 converged in 4 in-place step(s)")
    moved_on = dataclasses.replace(converged.seen("300m", "230Mi"), target_cpu="280m", converged=False)
    assert progress.resize_step(moved_on, "checkout") == (
        "running",
        "staging/checkout-0: stepping toward checkout, 5 in-place step(s) so far",
    )
    settled = dataclasses.replace(moved_on, converged=True)
    assert progress.resize_step(settled, "checkout")[1] == "staging/checkout-0 converged in 5 in-place step(s)"


def test_a_live_view_closed_with_its_history_keeps_the_steps_only() -> None:
    out = io.StringIO()
    view = LiveView(out, color=False)
    current = frame(5, Step("a", "done", "ready"), profiles=(ProfileRow("p", "Accruing", 2, 3, "30s"),))
    view.show(current)
    view.close(keep=progress.history(current))
    view.say("after")
    assert screen(out.getvalue()) == [
        "Ballast dev — the operator on a local control plane",
        step_line(Step("a", "done", "ready"), False),
        "after",
    ]
