"""When a scheduled disruption budget applies: a cron `schedule` (UTC) opens a window of `duration`.

Karpenter's rule: a budget with a schedule is active when the first cron hit after `now − duration` is at or
before `now`, i.e. `now` lies in `[hit, hit + duration)` for some hit. The schedule is what Karpenter's parser
(robfig/cron's standard one) accepts: five fields (minute, hour, day of month, month, day of week; numbers,
`*`, `?`, ranges, lists, steps, month and day names) or one of the macros `@yearly`, `@annually`, `@monthly`,
`@weekly`, `@daily`, `@midnight`, `@hourly`, `@every <Go duration>`. `croniter` evaluates the fields; what it
would accept beyond robfig's (a seconds field, `L`, `#`, `W`, `H`, weekday 7, reversed ranges) is refused, as
Karpenter refuses it. Checked against Karpenter's own `Budget.IsActive`
(tests/unit/internal/consolidation/test_against_karpenter.py).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from croniter import CroniterBadDateError, croniter

from ballast.internal.stats.duration import parse_duration

_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_NAME = "(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat)"
_FIELD = re.compile(rf"^(?:[0-9*?,/-]|{_NAME})+$", re.IGNORECASE)
_DURATION = re.compile(r"^(?:([0-9]+)h)?(?:([0-9]+)m)?(?:0s)?$")
_EVERY = "@every "
_NANOS_PER_SECOND = 10**9


def parse_budget_duration(text: str) -> timedelta:
    """A budget's `duration` as Karpenter's NodePool accepts it: `Xh`, `Ym` or `XhYm` (a trailing `0s`, as
    Go writes durations back, is allowed). Raises ValueError naming the text otherwise."""
    match = _DURATION.match(text) if isinstance(text, str) else None
    if match is None or not (match[1] or match[2]):
        raise ValueError(f"{text!r} is not a duration such as '8h', '30m' or '1h30m'")
    return timedelta(hours=int(match[1] or 0), minutes=int(match[2] or 0))


def cron_expression(schedule: str) -> str:
    """The five-field expression of `schedule` (a macro expanded, `?` as `*`). Raises ValueError naming the
    schedule when Karpenter's parser would refuse it."""
    if not isinstance(schedule, str):
        raise ValueError(f"{schedule!r} is not a cron schedule")
    text = schedule.strip()
    if text.startswith("@"):
        if text not in _MACROS:
            raise ValueError(f"{schedule!r} is not a cron schedule (macros: {', '.join(_MACROS)}, @every)")
        return _MACROS[text]
    fields = text.split()
    if len(fields) != 5 or not all(_FIELD.match(field) for field in fields):
        raise ValueError(f"{schedule!r} is not a cron schedule of five fields (minute hour day month weekday)")
    # robfig/cron: `?` is `*`, a step of 1 keeps a field unrestricted (day of month and day of week are ORed only
    # when both are restricted), and weekdays are 0-6.
    fields = ["*" if field.replace("?", "*") in ("*", "*/1") else field.replace("?", "*") for field in fields]
    if any(int(number) > 6 for number in re.findall(r"[0-9]+", fields[4].split("/")[0])):
        raise ValueError(f"{schedule!r} is not a cron schedule: weekdays are 0 (Sunday) to 6")
    for field in fields:
        for part in field.split(","):
            low, _, high = part.split("/")[0].partition("-")
            if low.isdigit() and high.isdigit() and int(low) > int(high):
                raise ValueError(f"{schedule!r} is not a cron schedule: range {part} runs backwards")
    expression = " ".join(fields)
    if not croniter.is_valid(expression):
        raise ValueError(f"{schedule!r} is not a cron schedule: a field is out of range")
    return expression


def every_delay(schedule: str) -> timedelta | None:
    """The delay of an `@every <Go duration>` schedule, as robfig/cron keeps it (whole seconds, at least one);
    None for any other schedule. Raises ValueError naming a malformed duration."""
    text = schedule.strip() if isinstance(schedule, str) else ""
    if not text.startswith(_EVERY):
        return None
    try:
        nanos = parse_duration(text[len(_EVERY) :])
    except ValueError:
        raise ValueError(f"{schedule!r} is not a cron schedule: @every needs a Go duration such as 1h") from None
    return timedelta(seconds=max(1, nanos // _NANOS_PER_SECOND))


def check_schedule(schedule: str) -> None:
    """Raise ValueError naming `schedule` unless Karpenter's parser takes it (fields, a macro or @every)."""
    if every_delay(schedule) is None:
        cron_expression(schedule)


def budget_window_active(schedule: str, duration: str, now: datetime) -> bool:
    """Whether a budget with this `schedule` and `duration` applies at `now` (aware, or naive UTC). Raises
    ValueError naming the schedule or the duration when either is malformed."""
    window = parse_budget_duration(duration)
    at = now.astimezone(UTC) if now.tzinfo else now.replace(tzinfo=UTC)
    delay = every_delay(schedule)
    if delay is not None:
        # robfig's constant-delay Next(t) is t without its fraction of a second, plus the delay.
        start = at - window
        return start.replace(microsecond=0) + delay <= at
    expression = cron_expression(schedule)
    # The first hit strictly after the window's start (Go's Schedule.Next, as croniter's get_next): a window
    # opened exactly `duration` ago has closed.
    try:
        hit: datetime = croniter(expression, at - window).get_next(datetime)
    except CroniterBadDateError:
        return True  # a date that never comes (Feb 31): robfig's Next gives the zero time, before any `now`
    return hit <= at
