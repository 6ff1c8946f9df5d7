"""Before/after comparison of throughput, queue and latency for the windows around a change."""

from __future__ import annotations

import time

from poolscope.actions.models import Comparison, MetricChange
from poolscope.recommend.window import Window
from poolscope.store.sql import SqlStore

#: (metric, label): what a DBA checks after a change. Queue wait stands in for latency (the
#: pool adds exactly that to every statement's response time).
COMPARED = (
    ("qps", "queries / s"),
    ("tp_group_queue_length", "queue length (all groups)"),
    ("tp_queue_wait_avg_ms", "mean queue wait, ms (latency added by the pool)"),
    ("tp_group_stalls_per_s", "stalls / s (all groups)"),
    ("threads_running", "running statements"),
)


async def window_means(
    store: SqlStore, target: str, start: float, end: float, step_s: float
) -> dict[str, float | None]:
    points = int(max(10, min(2000, (end - start) / step_s)))
    result = await store.query(target, [m for m, _ in COMPARED], start, end, points, "avg", min_step_s=step_s)
    window = Window(start, end, result.series)
    return {metric: window.mean(metric) for metric, _ in COMPARED}


async def compare(
    store: SqlStore, target: str, change_id: int, ts: float, window_s: float, step_s: float
) -> Comparison:
    # The poll in the second of the change belongs to neither side.
    before = await window_means(store, target, ts - window_s, ts - step_s, step_s)
    after = await window_means(store, target, ts + step_s, ts + window_s, step_s)
    metrics = []
    for metric, label in COMPARED:
        b, a = before[metric], after[metric]
        change = (a - b) / b if a is not None and b not in (None, 0) else None
        metrics.append(MetricChange(metric=metric, label=label, before=b, after=a, change=change))
    return Comparison(
        change_id=change_id,
        ts=ts,
        window_s=window_s,
        before_from=ts - window_s,
        after_to=ts + window_s,
        complete=time.time() >= ts + window_s,
        metrics=metrics,
    )
