"""The recommender's kept history (recommend/history.py) gives the rules exactly the Window a full
store query gives, on real polls of the real MariaDB written by a real poller, on SQLite and
PostgreSQL: at windows sliding by less than their length (only the new part read), with buckets
holding two polls, on a whole-second grid and off it."""

from __future__ import annotations

import asyncio
import time

from poolscope.auth import AuthService
from poolscope.config import Settings, TargetConfig
from poolscope.recommend.history import History
from poolscope.recommend.rules import ALL_RULES
from poolscope.recommend.window import Window
from poolscope.services import run_services
from poolscope.store.sql import SqlStore

METRICS = sorted({m for rule in ALL_RULES for m in rule.metrics})
POLL_S = 0.2
WINDOW_S = 3.0


async def full_window(store: SqlStore, start: float, end: float, points: int, min_step_s: float) -> Window:
    history = await store.query("db", METRICS, start, end, points, "avg", min_step_s=min_step_s)
    return Window(start, end, history.series)


def same(kept: Window, full: Window) -> None:
    """Everything a rule can ask of a Window is the same: its span, and every metric's per-poll
    totals (in order: the buckets, their averages, rounding and sums across label sets)."""
    assert (kept.start, kept.end, kept.seconds) == (full.start, full.end, full.seconds)
    for metric in METRICS:
        assert kept.totals(metric) == full.totals(metric), metric
        assert (kept.count(metric), kept.mean(metric), kept.peak(metric), kept.quantile(metric, 0.9)) == (
            full.count(metric),
            full.mean(metric),
            full.peak(metric),
            full.quantile(metric, 0.9),
        )


async def test_the_kept_window_is_the_full_querys_window_on_real_polls(
    store_url: str, monitor_dsn: str
) -> None:
    settings = Settings(
        poll_interval_s=POLL_S,
        store_url=store_url,
        targets=[TargetConfig(name="db", dsn=monitor_dsn)],
    )
    async with run_services(settings, AuthService(settings)) as services:
        store = services.store
        await asyncio.sleep(WINDOW_S + 1)
        # Polls every 0.2 s in buckets of 0.45 s (most hold two) and of 1 s on a whole-second grid.
        grids = [(1.7 * WINDOW_S, 0.45), (WINDOW_S, 1.0)]
        kept = {grid: History(store, METRICS, WINDOW_S * 1.5, overlap_s=0.5) for grid in grids}
        incremental = shared = 0
        for round_no in range(8):
            now = time.time()
            for (window_s, step), history in kept.items():
                end = float(int(now)) if step == 1.0 else now
                start, points = end - window_s, int(window_s / step)
                before = history._kept.get("db")
                got = await history.window("db", start, end, points, step)
                incremental += before is not None and history._kept["db"].full_at < end
                same(got, await full_window(store, start, end, points, step))
                assert got.count("qps") >= points / 2, "too few polls to compare"
                shared += got.count("qps") < len(history._kept["db"].ts)  # a bucket held two polls
            await asyncio.sleep(0.6 if round_no % 2 else 1.1)
        assert incremental >= 6  # most rounds read only what was new
        # Past its size limit a target's window is not kept, and is read in full each time.
        capped = History(store, METRICS, WINDOW_S * 1.5, overlap_s=0.5, max_values=10)
        for _ in range(2):
            end = time.time()
            got = await capped.window("db", end - WINDOW_S, end, int(WINDOW_S / 0.45), 0.45)
            same(got, await full_window(store, end - WINDOW_S, end, int(WINDOW_S / 0.45), 0.45))
            assert capped.targets() == set()
        assert shared >= 8
