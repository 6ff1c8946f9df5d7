"""The SQL store on SQLite, MariaDB and PostgreSQL: ingest, downsampled queries, rollups, retention, restart."""

import asyncio
import math

import pytest
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.schemas import Sample, TargetInfo, TargetState
from poolscope.store.migrate import alembic_config
from poolscope.store.rollup import read_marks
from tests.stores import make_store, migrated_database

T0 = 1_800_000_000.0  # a fixed, minute-aligned epoch second


@pytest.fixture(params=["sqlite", "mariadb", "postgresql"])
def store_url(request, tmp_path):
    """Every store test runs on SQLite (the default), a real MariaDB and a real PostgreSQL."""
    return migrated_database(request, request.param, tmp_path)


def info(name="db1", status="up"):
    return TargetInfo(name=name, status=status, poll_interval_s=1.0)


async def write_series(store, start, seconds, value_of, metric="tp_group_queue_length", group="0"):
    for i in range(seconds):
        ts = start + i
        sample = Sample(metric=metric, labels={"group": group}, value=value_of(i))
        await store.write_poll(info(), TargetState(target="db1", ts=ts, status="up"), [sample], ts=ts)


async def test_raw_query_returns_what_was_written(store_url):
    store = make_store(store_url)
    await write_series(store, T0, 30, lambda i: float(i))
    out = await store.query("db1", ["tp_group_queue_length"], T0, T0 + 29, points=600)
    assert out.resolution == "raw"
    assert len(out.series) == 1
    assert out.series[0].labels == {"group": "0"}
    assert [v for _, v in out.series[0].points] == [float(i) for i in range(30)]
    await store.close()


async def test_query_never_returns_more_points_than_asked(store_url):
    store = make_store(store_url)
    await write_series(store, T0, 300, lambda i: float(i % 10))
    out = await store.query("db1", ["tp_group_queue_length"], T0, T0 + 300, points=30, agg="max")
    points = out.series[0].points
    assert len(points) <= 31
    assert out.step_s == 10
    assert all(v == 9.0 for _, v in points[:-1])  # max over each 10 s bucket
    await store.close()


async def test_unknown_metric_gives_empty_series(store_url):
    store = make_store(store_url)
    await write_series(store, T0, 3, float)
    out = await store.query("db1", ["nope"], T0, T0 + 10, points=100)
    assert out.series == []
    await store.close()


async def test_rollups_serve_old_ranges_and_raw_fills_the_newest_part(store_url):
    store = make_store(store_url, raw_retention_s=600, rollup_step_s=60)
    await write_series(store, T0, 1200, lambda i: 1.0 if i < 600 else 3.0)
    counts = await store.maintain(now=T0 + 1200)
    assert counts["rolled_up"] == 20  # twenty completed minutes of one series
    assert counts["raw_deleted"] == 600  # raw older than 10 min dropped, already rolled up
    # A range reaching back past raw retention is answered from rollups + raw, with no gap.
    out = await store.query("db1", ["tp_group_queue_length"], T0, T0 + 1200, points=20)
    values = [v for _, v in out.series[0].points]
    assert len(values) == 20
    assert values[:10] == [1.0] * 10 and values[10:] == [3.0] * 10
    await store.close()


async def test_rollup_then_raw_after_high_water_mark(store_url, monkeypatch):
    store = make_store(store_url, raw_retention_s=600, rollup_step_s=60)
    await write_series(store, T0, 1230, float)
    await store.maintain(now=T0 + 1230)
    # Pretend "now" is far enough on that the query must use rollups.
    monkeypatch.setattr("poolscope.store.sql.time.time", lambda: T0 + 1230)
    out = await store.query("db1", ["tp_group_queue_length"], T0, T0 + 1230, points=1230)
    assert out.resolution == "rollup"
    assert out.rollup_step_s == 60
    last_ts, last_value = out.series[0].points[-1]
    assert last_value == 1229.0  # the newest second, not yet rolled up, is there
    await store.close()


async def test_the_cut_stays_where_retention_deleted_raw_samples(store_url, monkeypatch):
    """Retention's cut is kept (store/rollup.py RAW_CUT_KEY): a longer retention set later, or a
    store migrated from before the cut was kept, still reads rollups where raw samples are gone."""
    store = make_store(store_url, raw_retention_s=600, rollup_step_s=60)
    await write_series(store, T0, 1230, float)
    assert (await store.maintain(now=T0 + 1230))["raw_deleted"] == 630
    await store.close()
    monkeypatch.setattr("poolscope.store.sql.time.time", lambda: T0 + 1290)

    async def fine_chart_from_the_start() -> str:
        store = make_store(store_url, raw_retention_s=3600, rollup_step_s=60)
        try:
            await store.maintain(now=T0 + 1290)  # the cutoff now before T0: the cut stays
            out = await store.query("db1", ["tp_group_queue_length"], T0, T0 + 1230, points=1230)
            return out.resolution
        finally:
            await store.close()

    assert await fine_chart_from_the_start() == "rollup"
    config = alembic_config(store_url)
    await asyncio.to_thread(command.downgrade, config, "0012")  # a store from before the cut
    await asyncio.to_thread(command.upgrade, config, "head")  # seeded from its oldest sample
    engine = create_async_engine(store_url)
    try:
        async with engine.connect() as conn:
            assert (await read_marks(conn, 60)).raw_cut == T0 + 630
    finally:
        await engine.dispose()
    assert await fine_chart_from_the_start() == "rollup"


async def test_retention_drops_old_rollups(store_url):
    store = make_store(store_url, raw_retention_s=60, rollup_retention_s=600, rollup_step_s=60)
    await write_series(store, T0, 120, float)
    await store.maintain(now=T0 + 120)
    counts = await store.maintain(now=T0 + 120 + 3600)
    assert counts["rollups_deleted"] == 2
    await store.close()


async def test_state_and_samples_survive_a_restart(store_url):
    store = make_store(store_url)
    await write_series(store, T0, 5, float)
    await store.close()
    reopened = make_store(store_url)
    latest = await reopened.latest("db1")
    assert latest is not None
    assert latest[1].ts == T0 + 4  # the latest row is rewritten every poll
    out = await reopened.query("db1", ["tp_group_queue_length"], T0, T0 + 10, points=100)
    assert len(out.series[0].points) == 5
    await reopened.close()


async def test_down_poll_keeps_the_last_good_state(store_url):
    store = make_store(store_url)
    await write_series(store, T0, 2, float)
    await store.write_poll(info(status="down"), None, [Sample(metric="target_up", value=0.0)], ts=T0 + 5)
    target_info, state = await store.latest("db1")
    assert target_info.status == "down"
    assert state is not None and state.ts == T0 + 1
    reopened = make_store(store_url)
    target_info, state = await reopened.latest("db1")
    assert target_info.status == "down" and state.ts == T0 + 1
    await store.close()
    await reopened.close()


async def test_latest_row_keeps_the_last_good_state_when_the_target_goes_down(store_url):
    store = make_store(store_url)
    await write_series(store, T0, 7, float)
    await store.write_poll(info(status="down"), None, [], ts=T0 + 7)
    reopened = make_store(store_url)
    target_info, state = await reopened.latest("db1")
    assert target_info.status == "down"
    assert state.ts == T0 + 6  # the last good state, persisted with the status change
    assert (await store.latest("db1"))[1].ts == T0 + 6
    await store.close()
    await reopened.close()


async def test_non_finite_values_are_stored_as_gaps(store_url):
    store = make_store(store_url)
    await write_series(store, T0, 3, lambda i: [1.0, math.nan, math.inf][i])
    out = await store.query("db1", ["tp_group_queue_length"], T0, T0 + 3, points=100)
    assert [v for _, v in out.series[0].points] == [1.0]
    await store.close()
