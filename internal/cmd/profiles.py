"""`ballast profiles`: WorkloadProfiles as `kubectl get workloadprofiles` prints them.

The default table has the CRD's printer columns (NAME, ACTIVEWORKLOADS, POLICY, STATE, ORPHANED, AGE) with
kubectl's layout: left-aligned, three spaces between columns, an empty cell where the field is unset, and AGE
in kubectl's human durations. `-o wide` adds READY (the collector's Ready condition), CONTAINERS, SAMPLES (the
fewest samples of any container and resource, which is what readiness waits for) and TUPLE. `-o json|yaml`
print a `v1` List of the objects, keys sorted, as kubectl does.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ballast.internal.cmd.ballast import EXIT_USAGE, ConnectError, connect, fail

PROFILE_KIND = "ballast.tightlinesoftware.com/v1/WorkloadProfile"
PROFILE_RESOURCE = "workloadprofiles.ballast.tightlinesoftware.com"
COLUMNS = ("NAME", "ACTIVEWORKLOADS", "POLICY", "STATE", "ORPHANED", "AGE")
WIDE_COLUMNS = (*COLUMNS, "READY", "CONTAINERS", "SAMPLES", "TUPLE")
_PADDING = 3


def human_duration(seconds: float) -> str:
    """kubectl's AGE: `45s`, `2m5s`, `17m`, `4h12m`, `30h`, `3d4h`, `120d`, `2y30d`, `9y`.

    A time up to two seconds in the future counts as now (clock skew); further ahead is `<invalid>`.
    """
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    whole = max(whole, 0)
    minutes, hours, days = whole // 60, whole // 3600, whole // 86400
    # (applies, larger unit, smaller unit shown unless it is zero), first that applies wins.
    rules = (
        (whole < 120, f"{whole}s", ""),
        (minutes < 10, f"{minutes}m", f"{whole % 60}s"),
        (minutes < 180, f"{minutes}m", ""),
        (hours < 8, f"{hours}h", f"{minutes % 60}m"),
        (hours < 48, f"{hours}h", ""),
        (hours < 24 * 8, f"{days}d", f"{hours % 24}h"),
        (hours < 24 * 365 * 2, f"{days}d", ""),
        (hours < 24 * 365 * 8, f"{days // 365}y", f"{days % 365}d"),
    )
    for applies, larger, smaller in rules:
        if applies:
            return larger + (smaller if smaller and not smaller.startswith("0") else "")
    return f"{days // 365}y"


def parse_time(text: str | None) -> datetime.datetime | None:
    """An RFC 3339 timestamp as the API writes it (`2026-11-29T12:00:00Z`), or None."""
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def age(obj: Mapping[str, Any], now: datetime.datetime) -> str:
    """The AGE cell of an object: time since its creationTimestamp ("" without one)."""
    created = parse_time((obj.get("metadata") or {}).get("creationTimestamp"))
    return human_duration((now - created).total_seconds()) if created else ""


def condition_status(status: Mapping[str, Any], condition_type: str) -> str:
    """The status (`True`/`False`/`Unknown`) of a condition, "" when absent."""
    for condition in status.get("conditions") or ():
        if condition.get("type") == condition_type:
            return str(condition.get("status") or "")
    return ""


def fewest_samples(status: Mapping[str, Any]) -> str:
    """The smallest `samples` of any usageStats entry ("" when there is none)."""
    counts = [
        int(usage.get("samples") or 0)
        for container in status.get("containers") or ()
        for usage in container.get("usageStats") or ()
    ]
    return str(min(counts)) if counts else ""


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def profile_row(profile: Mapping[str, Any], now: datetime.datetime, *, wide: bool = False) -> list[str]:
    """One table row of a profile (a dict as the API returns it)."""
    status: Mapping[str, Any] = profile.get("status") or {}
    row = [
        str((profile.get("metadata") or {}).get("name") or ""),
        _cell(status.get("activeWorkloads")),
        _cell((status.get("policyRef") or {}).get("name")),
        _cell(status.get("state")),
        condition_status(status, "Orphaned"),
        age(profile, now),
    ]
    if wide:
        tuple_labels: Mapping[str, str] = status.get("tupleLabels") or {}
        row += [
            condition_status(status, "Ready"),
            _cell(len(status["containers"]) if status.get("containers") else None),
            fewest_samples(status),
            ",".join(f"{key}={tuple_labels[key]}" for key in sorted(tuple_labels)),
        ]
    return row


def render_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Columns left-aligned, each padded to its widest cell plus three spaces; the last column is not padded."""
    table = [list(header), *[list(row) for row in rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for row in table:
        cells = [cell.ljust(widths[i] + _PADDING) for i, cell in enumerate(row[:-1])]
        lines.append("".join(cells) + row[-1])
    return "\n".join(lines)


def list_document(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The `v1` List kubectl prints for `-o json|yaml`: without managedFields, as kubectl leaves them out unless
    `--show-managed-fields`."""
    return {
        "apiVersion": "v1",
        "items": [_without_managed_fields(item) for item in items],
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


def _without_managed_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata = {key: value for key, value in (item.get("metadata") or {}).items() if key != "managedFields"}
    return {**item, "metadata": metadata}


def render(profiles: Sequence[Mapping[str, Any]], output: str | None, now: datetime.datetime) -> str:
    """The whole output for `-o <output>` (None: the table); "" for a table without profiles."""
    if output == "json":
        return json.dumps(list_document(profiles), indent=4, sort_keys=True, ensure_ascii=False)
    if output == "yaml":
        import yaml  # noqa: PLC0415 - only -o yaml needs it: the table starts faster without

        return yaml.safe_dump(list_document(profiles), sort_keys=True, default_flow_style=False).rstrip("\n")
    if not profiles:
        return ""
    wide = output == "wide"
    return render_table(WIDE_COLUMNS if wide else COLUMNS, [profile_row(p, now, wide=wide) for p in profiles])


def run(args: argparse.Namespace) -> int:
    """`ballast profiles` with parsed flags; returns 0, or 1 when a named profile is missing or the API fails."""
    from ballast.runtime import APIStatusError, NotFoundError  # noqa: PLC0415

    try:
        client = connect(args, typed=False)
    except ConnectError as exc:
        return fail(exc)
    code = 0
    try:
        if args.names:
            profiles = []
            for name in args.names:
                try:
                    profiles.append(client.get(PROFILE_KIND, name))
                except NotFoundError:
                    print(f'Error from server (NotFound): {PROFILE_RESOURCE} "{name}" not found', file=sys.stderr)
                    code = EXIT_USAGE
        else:
            profiles = list(client.list_all(PROFILE_KIND))
    except (APIStatusError, OSError, LookupError) as exc:
        return fail(exc)
    finally:
        client.close()
    text = render(profiles, args.output, datetime.datetime.now(datetime.UTC))
    if text:
        print(text)
    elif not profiles and code == 0:
        print("No resources found", file=sys.stderr)
    return code
