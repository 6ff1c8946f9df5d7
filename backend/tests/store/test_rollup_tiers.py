"""Rollup tiers (store/rollup.py, store/query.py) on SQLite and a real PostgreSQL: a chart reads the
tier that fits its step and gets the same averages, maxima and minima as the raw samples."""

import asyncio
import math

import pytest
from alembic import command
from sqlalchemy import delete, update

from poolscope.schemas import Sample, TargetInfo
from poolscope.store.ingest import Poll
from poolscope.store.migrate import alembic_config
from poolscope.store.query import plan
from poolscope.store.rollup import RAW_CUT_KEY, read_marks
from poolscope.store.sql import SqlStore
from poolscope.store.tables import store_meta

T0 = 1_800_000_000.0  # a multiple of every tier step below
STEP = 10  # rollup step: tiers of 10, 30 and 100 s
SECONDS = 3000


def value(i: int) -> float:
    return float((i * 7) % 13) + i / 100


@pytest.fixture
async def store(store_url):
    store = SqlStore(store_url, raw_retention_s=10 * SECONDS, rollup_retention_s=86400, rollup_step_s=STEP)
    info = TargetInfo(name="db1", status="up", poll_interval_s=1.0)
    polls = [
        Poll(
            info, None, [Sample(metric="qps", value=value(i)), Sample(metric="tps", value=-value(i))], T0 + i
        )
        for i in range(SECONDS)
    ]
    for n in range(0, SECONDS, 500):
        await store.write_polls(polls[n : n + 500])
    counts = await store.maintain(now=T0 + SECONDS)
    assert counts["rolled_up"] == 2 * SECONDS // STEP
    assert counts["raw_deleted"] == 0  # raw kept, so raw and rollups can be compared
    yield store
    await store.close()


def raw_buckets(start: float, step: float, agg) -> dict[float, float]:
    origin = math.floor(start / step) * step
    groups: dict[float, list[float]] = {}
    for i in range(SECONDS):
        ts = T0 + i
        if ts >= origin:
            groups.setdefault(origin + math.floor((ts - origin) / step) * step, []).append(value(i))
    return {t: agg(vs) for t, vs in groups.items()}


@pytest.mark.parametrize(
    ("points", "tier_table", "step"),
    [
        (250, "rollups", 20.0),  # asked 11.9 s -> two rollup steps per point, from the 10 s tier
        (100, "rollups_x3", 30.0),  # 29.9 s -> the 30 s tier, one row per point
        (120, "rollups_x3", 30.0),  # 24.9 s -> rounded up to 30 s: never more points than asked
        (30, "rollups_x10", 100.0),  # 99.8 s -> the 100 s tier
    ],
)
async def test_chart_reads_the_tier_that_fits_and_matches_raw(store, points, tier_table, step):
    start, end = T0 + 7, T0 + SECONDS - 1
    async with store.engine.connect() as conn:
        marks = await read_marks(conn, STEP)
    p = plan(marks, start, end, (end - start) / points)
    assert p.step == step
    assert p.segments[0][0].table.name == tier_table
    for agg, fold in (("avg", lambda vs: sum(vs) / len(vs)), ("max", max), ("min", min)):
        out = await store.query("db1", ["qps"], start, end, points=points, agg=agg)
        assert out.resolution == "rollup" and out.step_s == step
        assert len(out.series[0].points) <= points
        expected = raw_buckets(start, step, fold)
        got = dict(out.series[0].points)
        assert got.keys() == expected.keys()
        for ts, v in got.items():
            assert v == pytest.approx(expected[ts], abs=1e-6), (agg, ts)


async def test_a_page_reads_every_series_in_one_go(store):
    out = await store.query("db1", ["qps", "tps"], T0, T0 + SECONDS, points=100)
    by_metric = {s.metric: dict(s.points) for s in out.series}
    assert by_metric["qps"].keys() == by_metric["tps"].keys()
    assert all(by_metric["tps"][t] == pytest.approx(-v) for t, v in by_metric["qps"].items())


async def test_short_range_below_the_rollup_step_stays_raw(store):
    out = await store.query("db1", ["qps"], T0 + 100, T0 + 160, points=60)
    assert out.resolution == "raw"
    assert [v for _, v in out.series[0].points] == [round(value(i), 6) for i in range(100, 161)]


def qps_points(out) -> list[tuple[float, float]]:
    return [(t, v) for t, v in out.series[0].points if v is not None]


async def test_a_range_from_before_the_first_sample_reads_raw_when_nothing_was_cut(store):
    """A young store (retention never deleted a sample): a short range that starts before its first
    sample, as a live chart does in a store's first minutes, reads the raw samples, not rollups."""
    out = await store.query("db1", ["qps"], T0 - 60, T0 + 100, points=160)
    assert out.resolution == "raw"
    assert qps_points(out) == [(T0 + i, round(value(i), 6)) for i in range(101)]


async def test_a_store_whose_cut_is_not_known_plans_as_before(store):
    """A store maintained by a version that kept no cut: its oldest sample may mark one, so a range
    starting before it reads rollups; the next pass keeps that as the cut."""
    async with store.engine.begin() as conn:
        await conn.execute(delete(store_meta).where(store_meta.c.key == RAW_CUT_KEY))
    store._marks = None
    out = await store.query("db1", ["qps"], T0 - 60, T0 + 100, points=160)
    assert out.resolution != "raw"
    await store.maintain(now=T0 + SECONDS + STEP)
    async with store.engine.connect() as conn:
        assert (await read_marks(conn, STEP)).raw_cut == T0
    assert (await store.query("db1", ["qps"], T0 - 60, T0 + 100, points=160)).resolution != "raw"
    assert (await store.query("db1", ["qps"], T0, T0 + 100, points=100)).resolution == "raw"


async def test_a_cut_in_the_future_does_not_hide_the_raw_samples(store):
    """A maintainer whose clock ran ahead stored a cut in the future; the samples after the oldest
    are still read raw (the cut counts only up to the oldest sample)."""
    async with store.engine.begin() as conn:
        await conn.execute(
            update(store_meta).where(store_meta.c.key == RAW_CUT_KEY).values(value=repr(T0 + 10 * SECONDS))
        )
    store._marks = None
    out = await store.query("db1", ["qps"], T0 + 100, T0 + 160, points=60)
    assert out.resolution == "raw"
    assert qps_points(out) == [(T0 + i, round(value(i), 6)) for i in range(100, 161)]


async def test_migration_0013_seeds_the_cut_of_a_store_that_rolled_up(store, store_url):
    config = alembic_config(store_url)
    await asyncio.to_thread(command.downgrade, config, "0012")
    async with store.engine.connect() as conn:
        assert (await read_marks(conn, STEP)).raw_cut is None
    await asyncio.to_thread(command.upgrade, config, "head")
    async with store.engine.connect() as conn:
        assert (await read_marks(conn, STEP)).raw_cut == T0  # its oldest sample: it had rolled up
