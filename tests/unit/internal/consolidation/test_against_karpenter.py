"""Karpenter v1.15.0 itself as the oracle: `eviction_cost`, `score_result`, `score_move` and `approves` give, bit
for bit, what its exported `EvictionCost` and `ScoreMove(...).Score()/Threshold()/Approved()` give, and a
scheduled budget allows what its `Budget.IsActive`/`GetAllowedDisruptions` allow, on a few thousand generated
inputs (a seeded generator, edge cases first).

The Go side is hack/karpenter-oracle, built by hack/setup-karpenter-oracle (`make karpenter-oracle`; it is never
built from a test). It runs once, all cases in one batch on its stdin. Without it the test skips; under CI=true
it fails, like every real component. Floats cross the pipe as their IEEE-754 bit patterns, so "agree" means the
same 64 bits (two NaNs agree whatever their payload: that is the hardware's, not either program's).
"""

from __future__ import annotations

import json
import logging
import math
import random
import struct
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.consolidation import (
    ConsolidationInputError,
    approves,
    eviction_cost,
    pool_from_mapping,
    score_move,
    score_result,
)
from ballast.internal.consolidation.pools import UNDERUTILIZED
from ballast.internal.consolidation.schedule import parse_budget_duration
from tests.tools import installed_tool

DISRUPTION = "karpenter.sh/disruption-cost"
DELETION = "controller.kubernetes.io/pod-deletion-cost"
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
SEED = 17  # the project's issue 17; any fixed seed keeps a failure reproducible

# Strings for either annotation: what Go's strconv.ParseInt(s, 10, 32) takes, what it refuses although Python's
# int() or float() would take it, and values that land on the ±10 clamp.
ANNOTATION_TEXTS = [
    "0", "1", "-1", "42", "+7", "-0", "+0", "007", "-007", "134217728", "-134217728", "67108864",
    "1207959552", "1207959553", "-1476395008", "-1476395009",  # (10-1)·2**27 and (-10-1)·2**27, and one past
    "2147483647", "2147483646", "-2147483648", "-2147483647",
    "2147483648", "-2147483649", "99999999999999999999", "9223372036854775808",
    "1.5", "1.0", "1e3", "1E3", "-1e3", ".5", "5.", " 5", "5 ", "5\n", "\t5", "1_000", "1,000",
    "0x10", "0X10", "0b1", "0o7", "010",
    "٣", "١٢", "５", "৩", "𝟓",  # digits of other scripts: Python's int() reads them, Go does not
    "", "+", "-", "--1", "+-1", "++1", "abc", "NaN", "nan", "inf", "-Infinity", "true", "null", "1 2",
]  # fmt: skip
PRIORITIES: list[int | None] = [
    None, 0, 1, -1, 1000, -1000, 1_000_000_000, 2_000_000_000, 2_000_001_000,  # system-cluster/node-critical
    2**25, -(2**25), 301989888, 301989889, 301989887,  # (10-1)·2**25: exactly 10 for a plain pod
    -369098752, -369098753, -369098751,  # (-10-1)·2**25: exactly -10
    INT32_MAX, INT32_MAX - 1, INT32_MIN, INT32_MIN + 1,
]  # fmt: skip
K_VALUES = [1, 2, 3, 4, 5, 7, 10, 100, 1000, INT32_MAX]
SPECIAL_FLOATS = [
    0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, 1e-9, 0.01, 0.1, 0.5, 1.0, -1.0, 2.0, -5.0,
    2.42, 9.0, 58.08, 48.40, 90.0, 3.0, 1e9, 1e300, 1.7976931348623157e308, -1.7976931348623157e308,
    math.inf, -math.inf, math.nan,
]  # fmt: skip


def bits(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


def from_bits(pattern: int) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", pattern))[0])


def same_float(ours: float, theirs_bits: int) -> bool:
    theirs = from_bits(theirs_bits)
    return (math.isnan(ours) and math.isnan(theirs)) or bits(ours) == theirs_bits


# --- the cases -----------------------------------------------------------------------------------------------


def eviction_case(annotations: Mapping[str, str] | None, priority: int | None, gate: bool = False) -> dict[str, Any]:
    case: dict[str, Any] = {"kind": "eviction", "pod_deletion_cost_management": gate}
    if annotations is not None:
        case["annotations"] = dict(annotations)
    if priority is not None:
        case["priority"] = priority
    return case


def score_case(
    savings: float, disruption: float, total_cost: float, total_disruption: float, k: int = 2
) -> dict[str, Any]:
    return {
        "kind": "score",
        "savings": bits(savings),
        "disruption_cost": bits(disruption),
        "total_cost": bits(total_cost),
        "total_disruption_cost": bits(total_disruption),
        "k": k,
    }


def _odd_text(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789+-. _eExX٣５\n\ta") for _ in range(rng.randrange(6)))


ANNOTATION_SHAPES: list[Callable[[random.Random], str]] = [
    lambda rng: rng.choice(ANNOTATION_TEXTS),
    lambda rng: str(rng.randint(INT32_MIN, INT32_MAX)),
    lambda rng: str(rng.choice([INT32_MIN, INT32_MAX]) + rng.randint(-3, 3)),  # just inside and just outside
    lambda rng: str(rng.randint(-(2**28), 2**28)),  # a plausible user value
    lambda rng: rng.choice(["+", "-", "", "0", "00", " ", "_"]) + str(rng.randint(0, 2**31)),
    lambda rng: repr(rng.uniform(-1e6, 1e6)),
    lambda rng: str(rng.randint(-(10**20), 10**20)),
    _odd_text,
]


def random_annotation(rng: random.Random) -> str:
    """A number Go may or may not take: an int32 in some spelling, a larger one, a float, or odd text."""
    return rng.choice(ANNOTATION_SHAPES)(rng)


def random_priority(rng: random.Random) -> int | None:
    shape = rng.randrange(5)
    if shape == 0:
        return None
    if shape == 1:
        return rng.choice(PRIORITIES)
    if shape == 2:
        return rng.randint(INT32_MIN, INT32_MAX)
    if shape == 3:
        return rng.randint(-10_000, 10_000)
    return rng.randint(-(2**29), 2**29)  # the band where the clamp and the annotations both matter


def eviction_cases(rng: random.Random) -> list[dict[str, Any]]:
    cases = [eviction_case(None, None), eviction_case({}, None), eviction_case({"app": "web"}, 5)]
    for priority in PRIORITIES:
        cases.append(eviction_case(None, priority))
    for text in ANNOTATION_TEXTS:
        for gate in (False, True):
            cases.append(eviction_case({DISRUPTION: text}, None, gate))
            cases.append(eviction_case({DELETION: text}, None, gate))
            # Both present: the disruption cost wins, even an invalid one (no fall back to the deletion cost).
            cases.append(eviction_case({DISRUPTION: text, DELETION: "134217728"}, None, gate))
            cases.append(eviction_case({DISRUPTION: "-67108864", DELETION: text}, None, gate))
        for priority in PRIORITIES:
            cases.append(eviction_case({DELETION: text}, priority))
            cases.append(eviction_case({DISRUPTION: text}, priority))
    for _ in range(3000):
        annotations: dict[str, str] = {}
        if rng.random() < 0.6:
            annotations[DISRUPTION] = random_annotation(rng)
        if rng.random() < 0.6:
            annotations[DELETION] = random_annotation(rng)
        if rng.random() < 0.1:
            annotations["karpenter.sh/do-not-disrupt"] = "true"
        cases.append(eviction_case(annotations or None, random_priority(rng), rng.random() < 0.3))
    return cases


def random_price(rng: random.Random) -> float:
    return round(rng.uniform(0.001, 50.0), rng.choice([2, 3, 4, 6]))


def score_cases(rng: random.Random) -> list[dict[str, Any]]:
    cases = [
        score_case(2.42, 9.0, 58.08, 90.0, 2),  # 0.41666666666666663: rejected at 2, approved at 3
        score_case(2.42, 9.0, 58.08, 90.0, 3),
        score_case(2.42, 9.0, 48.40, 90.0, 2),  # exactly 0.5
        score_case(0.2, 3.0, 0.2, 3.0, 2),  # a single-node pool's delete: 1.0
        score_case(1.0, 0.0, 10.0, 20.0, 2),  # disrupts nothing: +inf
        score_case(0.0, 5.0, 10.0, 20.0, 2),  # saves nothing: 0
        score_case(-1.0, 5.0, 10.0, 20.0, 2),
    ]
    # Zero, negative and odd totals, and every special value in every position.
    for total_cost in (0.0, -0.0, -1.0, 5e-324, math.nan, math.inf):
        for total_disruption in (0.0, -0.0, -3.0, 1.0, math.nan, math.inf):
            cases.append(score_case(2.0, 3.0, total_cost, total_disruption))
    for special in SPECIAL_FLOATS:
        cases.append(score_case(special, 3.0, 10.0, 30.0))
        cases.append(score_case(1.0, special, 10.0, 30.0))
        cases.append(score_case(1.0, 3.0, special, 30.0))
        cases.append(score_case(1.0, 3.0, 10.0, special))
    # The threshold boundary: savings put the score at exactly 1/k in exact arithmetic, then one ulp either way.
    for _ in range(800):
        k = rng.choice(K_VALUES[:7])
        total_cost = random_price(rng) * rng.randint(1, 40)
        total_disruption = float(rng.randint(1, 400)) + rng.choice([0.0, 0.5, rng.random()])
        disruption = min(total_disruption, float(rng.randint(1, 40)) + rng.choice([0.0, rng.random()]))
        savings = disruption * total_cost / (total_disruption * k)
        nudged = rng.choice([savings, math.nextafter(savings, math.inf), math.nextafter(savings, -math.inf)])
        cases.append(score_case(nudged, disruption, total_cost, total_disruption, k))
    # Realistic moves: a pool of priced nodes, a delete or a replace of some of them.
    for _ in range(1500):
        prices = [random_price(rng) for _ in range(rng.randint(1, 12))]
        costs = [1.0 + rng.choice([0.0, float(rng.randint(0, 30)), rng.uniform(0, 100)]) for _ in prices]
        moved = rng.randint(1, len(prices))
        savings = sum(prices[:moved]) - rng.choice([0.0, rng.uniform(0, sum(prices[:moved]) * 1.2)])
        cases.append(score_case(savings, sum(costs[:moved]), sum(prices), sum(costs), rng.choice(K_VALUES)))
    # Anything at all, including the specials, with every k.
    for _ in range(500):
        values = [rng.choice(SPECIAL_FLOATS) if rng.random() < 0.3 else rng.uniform(-10, 100) for _ in range(4)]
        cases.append(score_case(values[0], values[1], values[2], values[3], rng.choice(K_VALUES)))
    return cases


# Budget schedules: each field from what robfig/cron reads, and from what only croniter would (refused by both).
MINUTES = ["*", "0", "30", "59", "*/15", "5/20", "0-29", "10,40", "?", "*/1", "0-59/7"]
HOURS = ["*", "9", "0", "23", "0-8", "*/6", "22-23", "9,17", "8-18/2"]
DAYS = ["*", "1", "15", "31", "1-7", "*/2", "?", "1-31"]
MONTHS = ["*", "1", "jan-mar", "DEC", "*/3", "2", "Feb,Aug"]
WEEKDAYS = ["*", "0", "1-5", "mon-fri", "SAT,SUN", "6", "?", "*/1"]
REFUSED_FIELDS = ["60", "30-10", "*/0", "24", "L", "15W", "13", "7", "1-7", "5#2", "5L", "x"]
SCHEDULE_TEXTS = [
    "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly", "@Daily", "@dailyx",
    "@every 1h", "@every 90m", "@every 1s", "@every 500ms", "@every 8h0m0s", "@every x", " @daily ", "0  9 * *  1",
    "", "bad", "0 0 * * * *", "0 0 * *", "TZ=UTC 0 9 * * *", "CRON_TZ=UTC 0 9 * * *", "H 9 * * *", "0 9 * * 1 2027",
]  # fmt: skip
DURATIONS = ["1m", "30m", "1h", "8h", "24h", "1h30m", "168h", "2h0m0s", "744h", "59m"]
EPOCH_2026 = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp())
TWO_YEARS = 2 * 365 * 86400


def budget_case(schedule: str | None, duration: str | None, now_unix: int) -> dict[str, Any]:
    case: dict[str, Any] = {"kind": "budget", "now_unix": now_unix}
    if schedule is not None:
        case["schedule"] = schedule
    if duration is not None:
        case["duration"] = duration
    return case


def random_schedule(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return rng.choice(SCHEDULE_TEXTS)
    fields = (MINUTES, HOURS, DAYS, MONTHS, WEEKDAYS)
    return " ".join(rng.choice(REFUSED_FIELDS if rng.random() < 0.04 else field) for field in fields)


def random_instant(rng: random.Random, duration: str) -> int:
    """A time near where windows open and close: on an hour or a day, then the duration and a second either way."""
    base = EPOCH_2026 + rng.randrange(TWO_YEARS)
    shape = rng.randrange(4)
    if shape == 0:
        return base
    unit = rng.choice([60, 3600, 86400])
    aligned = base - base % unit
    window = int(parse_budget_duration(duration).total_seconds())  # only picks instants: Karpenter judges them
    return aligned + rng.choice([0, 0, window]) + rng.choice([-1, 0, 0, 1])


def budget_cases(rng: random.Random) -> list[dict[str, Any]]:
    cases = [budget_case(None, None, EPOCH_2026)]
    for text in SCHEDULE_TEXTS:
        cases.append(budget_case(text, "1h", EPOCH_2026 + 9 * 3600))
    for _ in range(4000):
        duration = rng.choice(DURATIONS)
        cases.append(budget_case(random_schedule(rng), duration, random_instant(rng, duration)))
    return cases


# --- running both sides --------------------------------------------------------------------------------------


def oracle_binary() -> Path:
    """$BALLAST_KARPENTER_ORACLE, else what hack/setup-karpenter-oracle cached (never built from a test)."""
    return installed_tool("karpenter-oracle", "setup-karpenter-oracle", "BALLAST_KARPENTER_ORACLE")


def ask_karpenter(binary: Path, cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    batch = "".join(json.dumps(case) + "\n" for case in cases)
    done = subprocess.run([str(binary)], input=batch, capture_output=True, text=True, check=False, timeout=120, env={})
    assert done.returncode == 0, f"karpenter-oracle exited {done.returncode}: {done.stderr}"
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(cases), f"{len(cases)} cases, {len(answers)} answers; stderr: {done.stderr}"
    errors = [(case, answer) for case, answer in zip(cases, answers, strict=True) if "error" in answer]
    assert not errors, f"karpenter-oracle refused {len(errors)} case(s), first: {errors[:3]}"
    return answers


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextmanager
def counting_warnings(logger_name: str) -> Iterator[_Counter]:
    logger = logging.getLogger(logger_name)
    counter, level, propagate = _Counter(), logger.level, logger.propagate
    logger.addHandler(counter)
    logger.setLevel(logging.WARNING)
    logger.propagate = False  # thousands of expected warnings need not reach the test report
    try:
        yield counter
    finally:
        logger.removeHandler(counter)
        logger.setLevel(level)
        logger.propagate = propagate


@dataclass(frozen=True)
class Disagreement:
    case: Mapping[str, Any]
    karpenter: Mapping[str, Any]
    ours: Mapping[str, Any]

    def __str__(self) -> str:
        return f"  case {readable(self.case)}\n    karpenter {readable(self.karpenter)}\n    ours      {self.ours}"


FLOAT_FIELDS = {
    "savings", "disruption_cost", "total_cost", "total_disruption_cost",  # a score case
    "cost", "score", "savings_fraction", "disruption_fraction", "threshold",  # an answer
}  # fmt: skip


def readable(message: Mapping[str, Any]) -> dict[str, Any]:
    """A case or answer with its float bit patterns shown as the floats they are."""
    return {key: from_bits(value) if key in FLOAT_FIELDS else value for key, value in message.items()}


def report(disagreements: Sequence[Disagreement], total: int) -> str:
    shown = "\n".join(str(item) for item in disagreements[:10])
    return f"{len(disagreements)} of {total} cases disagree with Karpenter v1.15.0; the first:\n{shown}"


def pod_of(case: Mapping[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "p", "namespace": "default"}
    if "annotations" in case:
        metadata["annotations"] = case["annotations"]
    spec = {"priority": case["priority"]} if "priority" in case else {}
    return {"metadata": metadata, "spec": spec}


def compare_eviction(case: Mapping[str, Any], answer: Mapping[str, Any], counter: _Counter) -> Disagreement | None:
    counter.count = 0
    gate = case["pod_deletion_cost_management"]
    cost = eviction_cost(pod_of(case), pod_deletion_cost_management=gate)
    agree = (
        same_float(cost, answer["cost"])
        and counter.count == answer["logged_errors"]
        and answer["pod_deletion_cost_management"] == gate
    )
    return None if agree else Disagreement(case, answer, {"cost": cost, "logged": counter.count})


def compare_score(case: Mapping[str, Any], answer: Mapping[str, Any]) -> Disagreement | None:
    savings, disruption, total_cost, total_disruption = (
        from_bits(case[name]) for name in ("savings", "disruption_cost", "total_cost", "total_disruption_cost")
    )
    result = score_result(savings, disruption, total_cost, total_disruption, case["k"])
    score = score_move(savings, disruption, total_cost, total_disruption)
    ours = {
        "score": result.score,
        "score_move": score,
        "savings_fraction": result.savings_fraction,
        "disruption_fraction": result.disruption_fraction,
        "threshold": result.threshold,
        "approved": result.approved,
        "approves": approves(score, case["k"]),
    }
    agree = (
        all(same_float(ours[name], answer[name]) for name in ("score", "savings_fraction", "disruption_fraction"))
        and same_float(score, answer["score"])
        and same_float(result.threshold, answer["threshold"])
        and ours["approved"] is answer["approved"]
        and ours["approves"] is answer["approved"]
    )
    return None if agree else Disagreement(case, answer, ours)


def compare_budget(case: Mapping[str, Any], answer: Mapping[str, Any]) -> Disagreement | None:
    """Ours refuses (a named input error) exactly what Karpenter fails closed on, and otherwise allows the same
    number of 10 nodes at "30%" (3 when active, MaxInt32 when not)."""
    budget = {"nodes": "30%", **{key: case[key] for key in ("schedule", "duration") if key in case}}
    now = datetime.fromtimestamp(case["now_unix"], UTC)
    try:
        pool = pool_from_mapping("p", {"budgets": [budget]}, now=now)
    except ConsolidationInputError as error:
        return (
            None
            if answer["invalid"] and answer["allowed"] == 0
            else Disagreement(case, answer, {"refused": str(error)})
        )
    allowed = pool.allowed_disruptions(10, UNDERUTILIZED)
    return (
        None
        if not answer["invalid"] and allowed == answer["allowed"]
        else Disagreement(case, answer, {"allowed": allowed})
    )


def disagreements(
    compare: Callable[[Mapping[str, Any], Mapping[str, Any]], Disagreement | None],
    pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
) -> list[Disagreement]:
    found = []
    for case, answer in pairs:
        try:
            disagreement = compare(case, answer)
        except Exception as exc:  # Go answered this case, so whatever Python raises is a disagreement too
            disagreement = Disagreement(case, answer, {"raised": repr(exc)})
        if disagreement:
            found.append(disagreement)
    return found


@dataclass(frozen=True)
class Run:
    eviction: list[tuple[dict[str, Any], dict[str, Any]]]
    score: list[tuple[dict[str, Any], dict[str, Any]]]
    budget: list[tuple[dict[str, Any], dict[str, Any]]]


@pytest.fixture(scope="module")
def karpenter() -> Run:
    """Every case of this module, answered by Karpenter v1.15.0 in one run of the oracle."""
    binary = oracle_binary()
    rng = random.Random(SEED)  # noqa: S311 - reproducible test inputs, not secrets
    evictions, scores, budgets = eviction_cases(rng), score_cases(rng), budget_cases(rng)
    answers = ask_karpenter(binary, [*evictions, *scores, *budgets])
    first_budget = len(evictions) + len(scores)
    return Run(
        list(zip(evictions, answers[: len(evictions)], strict=True)),
        list(zip(scores, answers[len(evictions) : first_budget], strict=True)),
        list(zip(budgets, answers[first_budget:], strict=True)),
    )


# --- the tests -----------------------------------------------------------------------------------------------


def test_eviction_cost_agrees_with_karpenter_on_every_pod(karpenter: Run) -> None:
    with counting_warnings("ballast.internal.consolidation.cost") as counter:
        found = disagreements(lambda case, answer: compare_eviction(case, answer, counter), karpenter.eviction)
    assert not found, report(found, len(karpenter.eviction))


def test_the_score_agrees_with_karpenter_on_every_move(karpenter: Run) -> None:
    found = disagreements(compare_score, karpenter.score)
    assert not found, report(found, len(karpenter.score))


def test_a_scheduled_budget_allows_what_karpenter_allows_at_every_instant(karpenter: Run) -> None:
    found = disagreements(compare_budget, karpenter.budget)
    assert not found, report(found, len(karpenter.budget))


def test_the_cases_reach_every_edge(karpenter: Run) -> None:
    """The corpus really exercises what it is meant to (a generator that drifted would make the tests above
    vacuous): counted on Karpenter's own answers."""
    costs = [from_bits(answer["cost"]) for _, answer in karpenter.eviction]
    refused = [case for case, answer in karpenter.eviction if answer["logged_errors"]]
    scores = [(from_bits(answer["score"]), answer, case) for case, answer in karpenter.score]
    assert len(karpenter.eviction) >= 3000
    assert len(karpenter.score) >= 2500
    assert costs.count(10.0) >= 500
    assert costs.count(-10.0) >= 500
    assert sum(1 for cost in costs if -10.0 < cost < 10.0 and cost != 1.0) >= 1000
    assert len(refused) >= 1000
    assert sum(1 for case, _ in karpenter.eviction if case["pod_deletion_cost_management"]) >= 500
    # An invalid disruption cost beside a valid deletion cost, gate off: Karpenter does not fall back.
    assert any(
        DISRUPTION in case.get("annotations", {}) and DELETION in case.get("annotations", {}) for case in refused
    )
    assert sum(1 for score, answer, case in scores if score == 1.0 / case["k"]) >= 200  # the boundary, approved
    assert sum(1 for score, answer, case in scores if 0 < score < 1.0 / case["k"]) >= 50
    assert sum(1 for score, answer, case in scores if score == 0.0) >= 50
    assert any(math.isinf(score) for score, _, _ in scores)
    budgets = [answer for _, answer in karpenter.budget]
    assert sum(1 for answer in budgets if answer["active"]) >= 400
    assert sum(1 for answer in budgets if not answer["active"] and not answer["invalid"]) >= 1000
    assert sum(1 for answer in budgets if answer["invalid"]) >= 500
    assert any(math.isnan(score) for score, _, _ in scores)
    assert sum(1 for _, answer, _ in scores if answer["approved"]) >= 500
