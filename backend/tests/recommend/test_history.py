"""The recommender's kept history (recommend/history.py) gives the rules exactly the Window a full
store query gives, on real polls of the real MariaDB written by a real poller, on SQLite and
PostgreSQL: at windows sliding by less than their length (only the new part read), with buckets
holding two polls, on a whole-second grid and off it; and on polls written by the test in the
orders that make a read after the last one's mark miss something (a poll committed after a read
up to its time, a latest row gone back, a sample committed behind the mark, a series appearing)."""

from __future__ import annotations

import asyncio
import math
import time

from sqlalchemy import text

from poolscope.auth import AuthService
from poolscope.config import Settings, TargetConfig
from poolscope.recommend.history import History
from poolscope.recommend.rules import ALL_RULES
from poolscope.recommend.window import Window
from poolscope.schemas import Sample, ServerInfo, TargetInfo, TargetState
from poolscope.services import run_services
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from tests.stores import make_store

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
        await asyncio.sleep(WINDOW_S + 1)  # the behaviour: a window's worth of real polls
        # Polls every 0.2 s in buckets of 0.45 s (most hold two) and of 1 s on a whole-second grid.
        grids = [(1.7 * WINDOW_S, 0.45), (WINDOW_S, 1.0)]
        kept = {grid: History(store, METRICS, WINDOW_S * 1.5) for grid in grids}
        incremental = shared = 0
        for round_no in range(8):
            now = time.time()
            for (window_s, step), history in kept.items():
                # A second back: every poll up to `end` is committed before either read (polls up to
                # the latest row are, so the kept read may end a poll earlier than a later full query).
                end = float(int(now) - 1) if step == 1.0 else now - 1.0
                start, points = end - window_s, int(window_s / step)
                full_reads = history.full_reads
                got = await history.window("db", start, end, points, step)
                incremental += history.full_reads == full_reads
                same(got, await full_window(store, start, end, points, step))
                assert got.count("qps") >= points / 2, "too few polls to compare"
                shared += got.count("qps") < len(history._kept["db"].ts)  # a bucket held two polls
            await asyncio.sleep(0.6 if round_no % 2 else 1.1)  # new polls between reads, unevenly
        assert incremental >= 6  # most rounds read only what was new
        # Past its size limit a target's window is not kept, and is read in full each time.
        capped = History(store, METRICS, WINDOW_S * 1.5, max_values=10)
        for _ in range(2):
            end = time.time()
            got = await capped.window("db", end - WINDOW_S, end, int(WINDOW_S / 0.45), 0.45)
            same(got, await full_window(store, end - WINDOW_S, end, int(WINDOW_S / 0.45), 0.45))
            assert capped.targets() == set()
        assert shared >= 8


SERVER = ServerInfo(
    flavor="mariadb", version="10.11.19-MariaDB", thread_handling="pool-of-threads", pool_enabled=True
)


def poll(ts: float, value: float, groups: int = 2) -> Poll:
    """A poll of target "db": one series of qps, and one of tp_group_queue_length per group."""
    samples = [Sample(metric="qps", value=value)] + [
        Sample(metric="tp_group_queue_length", labels={"group": str(g)}, value=value + g)
        for g in range(groups)
    ]
    info = TargetInfo(name="db", status="up", poll_interval_s=1.0, server=SERVER, last_poll_at=ts)
    return Poll(info, TargetState(target="db", ts=ts, status="up"), samples, ts)


async def test_a_read_after_the_mark_misses_nothing_committed_late(store_url: str) -> None:
    await asyncio.to_thread(upgrade_to_head, store_url)
    store = make_store(store_url)
    t0 = float(int(time.time())) - 100
    window_s, step = 20.0, 1.0
    # Counted against the store once a second of window passed since the last full read or count.
    history = History(store, METRICS, window_s=1.0)

    async def evaluated_at(end: float) -> int:
        """The window at `end` is the full query's; how many full reads it took."""
        full_reads = history.full_reads
        got = await history.window("db", end - window_s, end, int(window_s / step), step)
        same(got, await full_window(store, end - window_s, end, int(window_s / step), step))
        return history.full_reads - full_reads

    try:
        for i in range(30):
            await store.write_polls([poll(t0 + i, float(i))])
        assert await evaluated_at(t0 + 29.5) == 1  # read up to the latest row: t0 + 29
        # A poll taken before that read's end but committed after it (it was being written).
        await store.write_polls([poll(t0 + 29.3, 7.5)])
        await store.write_polls([poll(t0 + 30.3, 8.5)])
        assert await evaluated_at(t0 + 30.4) == 0  # only what came after t0 + 29 was read
        # The target moved to a poller whose clock is behind: its latest row goes back.
        await store.write_polls([poll(t0 + 30.1, 9.5)])
        assert await evaluated_at(t0 + 30.9) == 1
        await store.write_polls([poll(t0 + 31.2, 10.5)])
        assert await evaluated_at(t0 + 31.4) == 0
        # A poll committed behind the mark while the latest row moves on (a poller that lost its
        # lease while writing): only the count made once a (test) window finds it.
        await store.write_polls([poll(t0 + 30.7, 11.5), poll(t0 + 32.2, 12.5)])
        assert await evaluated_at(t0 + 32.5) == 1
        # A series appeared (a thread group).
        await store.write_polls([poll(t0 + 33.2, 13.5, groups=3)])
        assert await evaluated_at(t0 + 33.4) == 1
        await store.write_polls([poll(t0 + 34.2, 14.5, groups=3)])
        assert await evaluated_at(t0 + 34.4) == 0
        # No poll for longer than the window (the mark before its start), then polls again.
        assert await evaluated_at(t0 + 60.0) == 0
        await store.write_polls([poll(t0 + 60.5, 15.5, groups=3)])
        assert await evaluated_at(t0 + 61.0) == 0
        assert history.targets() == {"db"}
    finally:
        await store.close()


async def test_a_poll_committed_behind_the_mark_is_found_at_the_next_read(store_url: str) -> None:
    """The latest row went back (a poller whose clock is behind, or one that lost its lease while
    writing) and moved past the mark again before the next evaluation: the next read still finds
    it, not only the once-per-window count (here the window never comes round)."""
    await asyncio.to_thread(upgrade_to_head, store_url)
    store = make_store(store_url)
    t0 = float(int(time.time())) - 100
    window_s, step = 20.0, 1.0
    history = History(store, METRICS, window_s=3600.0)
    try:
        for i in range(30):
            await store.write_polls([poll(t0 + i, float(i))])
        await history.window("db", t0 + 9.5, t0 + 29.5, int(window_s / step), step)
        # Behind the mark (t0 + 29) by 13 s, then the latest row moves on before the next read.
        await store.write_polls([poll(t0 + 15.7, 99.0)])
        await store.write_polls([poll(t0 + 30.2, 30.0)])
        full_reads = history.full_reads
        end = t0 + 30.5
        got = await history.window("db", end - window_s, end, int(window_s / step), step)
        same(got, await full_window(store, end - window_s, end, int(window_s / step), step))
        assert history.full_reads == full_reads + 1
    finally:
        await store.close()


def gappy_poll(ts: float, i: int) -> Poll:
    """A poll of "db" whose values are sometimes missing: qps NULL every 4th poll (a non-finite
    value is stored as NULL too: every 7th), group 1's queue absent every 3rd poll, and a series
    (threads_running) NULL at every poll, as a server without it reports it."""
    qps: float | None = None if i % 4 == 0 else (math.nan if i % 7 == 0 else float(i))
    samples = [Sample(metric="qps", value=qps), Sample(metric="threads_running", value=None)]
    samples += [
        Sample(metric="tp_group_queue_length", labels={"group": str(g)}, value=float(i % 5 + g))
        for g in range(2)
        if not (g == 1 and i % 3 == 0)
    ]
    info = TargetInfo(name="db", status="up", poll_interval_s=1.0, server=SERVER, last_poll_at=ts)
    return Poll(info, TargetState(target="db", ts=ts, status="up"), samples, ts)


async def gappy_store(store_url: str, polls: int, every_s: float) -> tuple[SqlStore, float, History]:
    """A store holding `polls` gappy polls `every_s` apart from t0, and a History (never counted)."""
    await asyncio.to_thread(upgrade_to_head, store_url)
    store = make_store(store_url)
    t0 = float(int(time.time())) - 100
    for i in range(polls):
        await store.write_polls([gappy_poll(t0 + i * every_s, i)])
    return store, t0, History(store, METRICS, window_s=3600.0)


async def test_null_values_and_series_missing_at_some_polls_give_the_full_querys_window(
    store_url: str,
) -> None:
    """NULL values (no value: left out of a bucket's average) and a series missing at some
    timestamps, in buckets of two polls or three, read incrementally: the full query's window."""
    store, t0, history = await gappy_store(store_url, 40, 0.7)
    try:
        for end in (t0 + 20.0, t0 + 22.3, t0 + 25.1, t0 + 27.65):
            full_reads = history.full_reads
            got = await history.window("db", end - 12.0, end, 8, 1.5)  # 1.5 s buckets: two polls or three
            same(got, await full_window(store, end - 12.0, end, 8, 1.5))
            assert got.count("qps") > 0 and got.count("threads_running") == 0
            assert history.full_reads == full_reads + (end == t0 + 20.0)  # then only the new rows
            assert history.targets() == {"db"}
    finally:
        await store.close()


async def test_a_nan_stored_reads_the_full_query(store_url: str) -> None:
    """A NaN stored as a value (PostgreSQL keeps one written by hand; SQLite stores NULL, Poolscope
    itself writes NULL for it): a bucket holding it averages to NaN, which only the full query
    answers; NULL values (also read) do not count as NaN."""
    store, t0, history = await gappy_store(store_url, 20, 1.0)
    try:
        end = t0 + 19.5
        same(
            await history.window("db", end - 15, end, 15, 1.0),
            await full_window(store, end - 15, end, 15, 1.0),
        )
        assert history.targets() == {"db"}
        async with store.engine.begin() as conn:
            (sid,) = (
                await conn.execute(
                    text("SELECT id FROM series WHERE target = 'db' AND metric = 'tp_group_queue_length'")
                )
            ).first()  # type: ignore[misc]
            await conn.execute(
                text("INSERT INTO samples (series_id, ts, value) VALUES (:s, :t, :v)"),
                {"s": sid, "t": t0 + 19.8, "v": math.nan},
            )
        await store.write_polls([gappy_poll(t0 + 20, 20)])
        for end in (t0 + 20.5, t0 + 21.0):
            got = await history.window("db", end - 15, end, 15, 1.0)
            same(got, await full_window(store, end - 15, end, 15, 1.0))
            # PostgreSQL: not kept while the NaN is in the window; SQLite read it as NULL.
            assert history.targets() == (set() if store.dialect == "postgresql" else {"db"})
    finally:
        await store.close()
