"""SQLite's samples head (store/head.py): polls are stored in samples_head and moved into samples
every ~10 s. Every read sees rows still in the head (charts, the recommender's raw read, roll-ups,
the oldest mark); a move keeps every row exactly once; two stores on one file writing and moving
at once lose and duplicate nothing; a killed process's rows stay readable and are moved later;
raw reads are primary-key ranges on both tables. PostgreSQL keeps writing to samples directly."""

import asyncio
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import event, text

from poolscope.schemas import Sample, TargetInfo
from poolscope.store import sql
from poolscope.store.head import MOVE_INTERVAL_S, readable_samples_sql
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from tests import stores
from tests.stores import make_store

T0 = 1_800_000_000.0
BACKEND = str(Path(__file__).resolve().parents[2])
METRICS = ("qps", "threads_running")


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    url = stores.sqlite_url(tmp_path)
    upgrade_to_head(url)
    return url


def stored(target: str, seconds: range) -> list[tuple]:
    """What every_sample() gives for the target's polls (poll()) of these seconds."""
    return sorted(
        (target, m, T0 + i, v)
        for i in seconds
        for m, v in (
            ("qps", float(i)),
            ("threads_running", float(i % 7)),
            ("tp_group_queue_length", float(i % 3)),
        )
    )


def poll(target: str, i: int) -> Poll:
    info = TargetInfo(name=target, status="up", poll_interval_s=1.0)
    samples = [
        Sample(metric="qps", value=float(i)),
        Sample(metric="threads_running", value=float(i % 7)),
        Sample(metric="tp_group_queue_length", labels={"group": "0"}, value=float(i % 3)),
    ]
    return Poll(info, None, samples, T0 + i)


async def counts(store: SqlStore) -> tuple[int, int]:
    """Rows in (samples, samples_head)."""
    async with store.engine.connect() as conn:
        main = (await conn.execute(text("SELECT count(*) FROM samples"))).scalar()
        head = (await conn.execute(text("SELECT count(*) FROM samples_head"))).scalar()
    return int(main or 0), int(head or 0)


async def every_sample(store: SqlStore) -> list[tuple]:
    async with store.engine.connect() as conn:
        raw = readable_samples_sql(conn.dialect.name)
        rows = await conn.execute(
            text(f"SELECT r.target, r.metric, s.ts, s.value FROM {raw} s JOIN series r ON r.id = s.series_id")
        )
        return sorted(tuple(r) for r in rows)


async def test_reads_see_samples_still_in_the_head(sqlite_url):
    url = sqlite_url
    store = make_store(url)
    try:
        await store.write_polls([poll("db-a", i) for i in range(120)])
        assert await counts(store) == (0, 360)  # nothing moved yet: all in the head
        chart = await store.query("db-a", ["qps"], T0, T0 + 119, points=120)
        assert [v for _, v in chart.series[0].points] == [float(i) for i in range(120)]
        read = await store.raw_history_to_latest(
            "db-a", METRICS, T0 + 10, T0 + 19, start=T0, step=1.0, count=(T0 + 10, T0 + 19)
        )
        assert read is not None and read.series is not None and read.latest == T0 + 119
        series_rows, raw = read.series, read.rows
        assert {m for _, m, _ in series_rows} == set(METRICS)
        assert read.count == 20
        assert len(raw) == 20 and all(T0 + 10 <= ts <= T0 + 19 for _, ts, _ in raw)
        assert [tuple(r[1:]) for r in raw][:2] == [(T0 + 10, 10.0), (T0 + 11, 11.0)]
        # Half moved, half not: the same answers, each sample once.
        assert await store.move_head() == 360
        await store.write_polls([poll("db-a", i) for i in range(120, 180)])
        assert await counts(store) == (360, 180)
        chart = await store.query("db-a", ["qps"], T0, T0 + 179, points=180)
        assert [v for _, v in chart.series[0].points] == [float(i) for i in range(180)]
        # Roll-ups include the head's rows: maintain() moves it first, in its own transaction.
        await store.maintain(now=T0 + 240)
        assert await counts(store) == (540, 0)
        async with store.engine.connect() as conn:
            rolled = (await conn.execute(text("SELECT sum(count) FROM rollups"))).scalar()
        assert rolled == 540
    finally:
        await store.close()


async def test_retention_and_the_oldest_mark_cover_the_head(sqlite_url):
    url = sqlite_url
    store = make_store(url, raw_retention_s=60)
    try:
        await store.write_polls([poll("db-a", i) for i in range(0, 60)])
        await store.move_head()
        await store.write_polls([poll("db-a", i) for i in range(60, 240)])
        # A store that never saw a pass probes for the oldest sample: in samples here.
        other = make_store(url)
        assert (await other.query("db-a", ["qps"], T0, T0 + 1, points=2)).series[0].points[0][1] == 0.0
        await other.close()
        counts_ = await store.maintain(now=T0 + 240)
        assert counts_["raw_deleted"] == 540  # 180 s of 3 series; 60 s kept
        assert await every_sample(store) == stored("db-a", range(180, 240))
        assert store._marks is not None and store._marks.oldest_raw == T0 + 180
    finally:
        await store.close()


async def test_a_move_keeps_every_row_once_and_a_duplicate_keeps_the_first(sqlite_url):
    url = sqlite_url
    store = make_store(url)
    try:
        await store.write_polls([poll(t, i) for t in ("db-a", "db-b") for i in range(50)])
        before = await every_sample(store)
        assert len(before) == 300 and len(set(before)) == 300
        assert await store.move_head() == 300
        assert await store.move_head() == 0
        assert await counts(store) == (300, 0)
        assert await every_sample(store) == before
        # The same (series, ts) polled again (a clock set back): the head takes it, the move keeps
        # the stored value.
        again = poll("db-a", 3)
        await store.write_polls([Poll(again.info, None, [Sample(metric="qps", value=-1.0)], again.ts)])
        assert await store.move_head() == 0
        assert await every_sample(store) == before
        # Moves are spaced over every process by the stamp in store_meta.
        await store.write_polls([poll("db-a", 100)])
        other = make_store(url)
        try:
            assert await other.move_head(MOVE_INTERVAL_S) is None
            assert await counts(store) == (300, 3)
        finally:
            await other.close()  # a clean shutdown moves what it can
        assert await counts(store) == (303, 0)
    finally:
        await store.close()


async def test_two_stores_writing_and_moving_at_once_lose_and_duplicate_nothing(sqlite_url, monkeypatch):
    url = sqlite_url
    monkeypatch.setattr(sql, "MOVE_SLICE_SERIES", 2)  # 6 series: each move is 3 transactions
    stores = [make_store(url), make_store(url)]

    async def run(store: SqlStore, target: str) -> None:
        for k in range(20):
            await store.write_polls([poll(target, 10 * k + i) for i in range(10)])
            await store.move_head()

    try:
        await asyncio.gather(run(stores[0], "db-a"), run(stores[1], "db-b"))
        await asyncio.gather(*(s.move_head() for s in stores))
        assert await counts(stores[0]) == (1200, 0)
        got = await every_sample(stores[0])
        assert len(got) == len(set(got)) == 1200
        assert got == stored("db-a", range(200)) + stored("db-b", range(200))
    finally:
        for store in stores:
            await store.close()


CHILD = """
import asyncio, os, signal, sys
sys.path[:0] = {paths!r}
from tests.store.test_samples_head import make_store, poll
from tests.stores import make_store

async def main():
    store = make_store({url!r})
    await store.write_polls([poll("db-a", i) for i in range(30)])
    os.kill(os.getpid(), signal.SIGKILL)  # no move, no close

asyncio.run(main())
"""


async def test_a_killed_process_loses_nothing_in_the_head(tmp_path):
    path = tmp_path / "store.db"
    url = f"sqlite+aiosqlite:///{path}"
    await asyncio.to_thread(upgrade_to_head, url)
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", CHILD.format(paths=[BACKEND, *sys.path], url=url)],
        cwd=BACKEND,
        capture_output=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    con = sqlite3.connect(path)
    assert con.execute("SELECT count(*) FROM samples_head").fetchone()[0] == 90
    con.close()
    store = make_store(url)
    try:
        chart = await store.query("db-a", ["qps"], T0, T0 + 29, points=30)
        assert [v for _, v in chart.series[0].points] == [float(i) for i in range(30)]
        assert await store.move_head() == 90
        assert await counts(store) == (90, 0)
    finally:
        await store.close()


async def test_raw_reads_are_primary_key_ranges_on_both_tables(sqlite_url):
    url = sqlite_url
    store = make_store(url)
    try:
        await store.write_polls([poll("db-a", i) for i in range(60)])
        await store.move_head()
        await store.write_polls([poll("db-a", i) for i in range(60, 90)])
        statements: list[tuple[str, tuple]] = []

        def seen(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
            if "samples_head" in statement and "series_id IN" in statement:
                statements.append((statement, tuple(parameters)))

        event.listen(store.engine.sync_engine, "before_cursor_execute", seen)
        try:
            await store.query("db-a", ["qps", "threads_running"], T0, T0 + 89, points=30)
            await store.raw_history_to_latest(
                "db-a", METRICS, T0 + 10, T0 + 89, start=T0, step=1.0, count=(T0 + 10, T0 + 89)
            )
        finally:
            event.remove(store.engine.sync_engine, "before_cursor_execute", seen)
        # The chart's bucketed read, the recommender's raw read and its count.
        assert len(statements) == 3
        async with store.engine.connect() as conn:
            for statement, parameters in statements:
                plan = [
                    str(r[-1])
                    for r in await conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, tuple(parameters))
                ]
                for table in ("samples", "samples_head"):
                    assert any(
                        line.startswith(f"SEARCH {table} USING PRIMARY KEY (series_id=? AND ts>? AND ts<?)")
                        for line in plan
                    ), (table, plan)
                assert not any(line.startswith("SCAN samples") for line in plan), plan
    finally:
        await store.close()


async def test_postgresql_writes_samples_directly(store_url):
    store = make_store(store_url)
    try:
        await store.write_polls([poll("db-a", i) for i in range(10)])
        main, head = await counts(store)
        if store.dialect == "sqlite":
            assert (main, head) == (0, 30)
        else:
            assert (main, head) == (30, 0)
        assert len(await every_sample(store)) == 30
    finally:
        await store.close()


async def test_a_failed_move_keeps_the_batch_stored_and_is_retried(sqlite_url, caplog):
    store = make_store(sqlite_url)
    try:
        async with store.engine.begin() as conn:  # samples refuses every row for now
            await conn.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON samples BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        store._next_move = 0.0  # this batch's move is due
        await store.write_polls([poll("db-a", i) for i in range(10)])  # stored, not raised
        assert store._mover is not None
        await store._mover  # the move runs beside the writes
        assert "moving the samples head failed" in caplog.text
        assert await counts(store) == (0, 30)
        assert len(await every_sample(store)) == 30
        async with store.engine.begin() as conn:
            await conn.exec_driver_sql("DROP TRIGGER refuse")
        assert await store.move_head() == 30
        assert await every_sample(store) == stored("db-a", range(10))
    finally:
        await store.close()
