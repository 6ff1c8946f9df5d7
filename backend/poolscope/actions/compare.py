"""A change's verdict from the store: the polls of the windows around it and the changes that
overlap them, judged by actions/verdict.py."""

from __future__ import annotations

import asyncio

from poolscope.actions.audit import AuditLog
from poolscope.actions.models import AuditEntry, Comparison, Judgement, OverlappingChange
from poolscope.actions.verdict import JUDGED, LOAD, Rules, Second, headline, judge
from poolscope.config import Settings
from poolscope.store.sql import SqlStore

#: What the verdict reads: the load and the judged metrics.
COMPARED = tuple(metric for metric, _, _ in (*LOAD, *JUDGED))


async def polls(store: SqlStore, target: str, start: float, end: float, step_s: float) -> list[Second]:
    """One row per poll between start and end: each compared metric summed over its label sets."""
    points = int(max(1, min(20_000, (end - start) / step_s)))
    result = await store.query(target, COMPARED, start, end, points, "avg", min_step_s=step_s)
    rows: dict[float, dict[str, float]] = {}
    for series in result.series:
        for ts, value in series.points:
            if value is not None and start <= ts <= end:
                row = rows.setdefault(ts, {})
                row[series.metric] = row.get(series.metric, 0.0) + value
    return sorted(rows.items())


async def judge_change(
    store: SqlStore, audit: AuditLog, entry: AuditEntry, window_s: float, settings: Settings
) -> Judgement:
    """The verdict of change `entry` over `window_s` on each side (the guard's and the API's)."""
    step = settings.poll_interval_s
    # The poll in the second of the change belongs to neither side.
    before = await polls(store, entry.target, entry.ts - window_s, entry.ts - step, step)
    after = await polls(store, entry.target, entry.ts + step, entry.ts + window_s, step)
    others = [
        OverlappingChange(id=o.id, ts=o.ts, variable=o.variable, old_value=o.old_value, new_value=o.new_value)
        for o in await audit.in_window(entry.target, entry.ts - window_s, entry.ts + window_s)
        if o.id != entry.id and o.result != "failed"
    ]
    # The bootstrap takes a few hundred ms of CPU: off the event loop that serves the API.
    return await asyncio.to_thread(
        judge, before, after, variable=entry.variable, overlaps=others, rules=Rules.of(settings)
    )


async def compare(
    store: SqlStore, audit: AuditLog, entry: AuditEntry, window_s: float, settings: Settings, now: float
) -> Comparison:
    j = await judge_change(store, audit, entry, window_s, settings)
    complete = now >= entry.ts + window_s
    reasons = list(j.reasons)
    verdict = j.verdict
    if not complete:
        verdict = "inconclusive"
        reasons.insert(0, f"the window after is still running ({entry.ts + window_s - now:.0f} s to go)")
    return Comparison(
        **{**dict(j), "verdict": verdict, "reasons": reasons},
        change_id=entry.id,
        ts=entry.ts,
        window_s=window_s,
        before_from=entry.ts - window_s,
        after_to=entry.ts + window_s,
        complete=complete,
        headline=f"{verdict}: {reasons[0]}" if reasons else headline(j),
    )
