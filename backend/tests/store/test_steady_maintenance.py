"""A running poller's maintenance pass (every 30 s) does work bounded by what is due, not by the
store's size: a one-step roll-up neither sorts the samples nor
calls SQLAlchemy's Python floor() per row on SQLite, and a pass with no raw sample due for
retention does not probe every series for the oldest sample; the marks stay exact."""

import asyncio
import math

import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import make_url

from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope_bench.maintbench import T_END, StatementLog, sample_rows, write_rows

STEP = 60
SERIES = 300


def count_floor_calls(store: SqlStore) -> list[int]:
    """Counts the calls of floor() on the store's SQLite connections (SQLAlchemy registers Python's
    math.floor as SQL floor() on each; this wraps it, on connections made from now on)."""
    calls = [0]

    def counted(x):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return math.floor(x)

    def register(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.create_function("floor", 1, counted, deterministic=True)

    event.listen(store.engine.sync_engine, "connect", register)
    return calls


def probes(statements: list[tuple[str, object]]) -> list[str]:
    """The statements that look for the oldest sample (store/rollup.py _oldest): one primary-key
    probe per series."""
    return [s for s, _ in statements if "min(samples.ts)" in s or "min(readable_samples.ts)" in s]


async def oldest_sample(store: SqlStore) -> float:
    async with store.engine.connect() as conn:
        return float((await conn.execute(text("SELECT min(ts) FROM samples"))).scalar())


async def test_a_steady_pass_probes_nothing_until_retention_is_due(store_url):
    url = make_url(store_url)
    path = url.database if url.get_backend_name() == "sqlite" else None
    # 20 minutes of samples, kept for 21: the first raw samples are due one minute in.
    store = SqlStore(store_url, raw_retention_s=1260, rollup_retention_s=86400, rollup_step_s=STEP)
    try:
        await write_rows(store, path, sample_rows(SERIES, T_END - 1200, T_END), SERIES)
        await store.maintain(now=T_END)
        first = await oldest_sample(store)
        log = StatementLog(store)
        for p in (1, 2):  # retention not due yet
            await write_rows(store, path, sample_rows(SERIES, T_END + 30 * (p - 1), T_END + 30 * p))
            counts = await store.maintain(now=T_END + 30 * p)
            assert counts["raw_deleted"] == 0
            assert store._marks is not None and store._marks.oldest_raw == first
        assert probes(log.stop()) == []
        # Retention due: rows go, and the new mark is the exact oldest again (one probe).
        log = StatementLog(store)
        for p in (3, 4, 5):
            await write_rows(store, path, sample_rows(SERIES, T_END + 30 * (p - 1), T_END + 30 * p))
            counts = await store.maintain(now=T_END + 30 * p)
        assert counts["raw_deleted"] > 0
        assert 1 <= len(probes(log.stop())) <= 3
        assert store._marks is not None and store._marks.oldest_raw == await oldest_sample(store) > first
    finally:
        await store.close()


async def test_a_one_step_roll_up_neither_sorts_nor_calls_python(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    await asyncio.to_thread(upgrade_to_head, url)
    store = SqlStore(url, raw_retention_s=86400, rollup_retention_s=86400, rollup_step_s=STEP)
    calls = count_floor_calls(store)
    try:
        # T_END is a whole minute: the first pass rolls up ten minutes (with floor()), the next
        # passes one minute each.
        path = tmp_path / "store.db"
        await write_rows(store, path, sample_rows(SERIES, T_END - 600, T_END), SERIES)
        await store.maintain(now=T_END)
        assert calls[0] > 0  # the wrapper sees floor() where it is still used
        log = StatementLog(store)
        before = calls[0]
        for p in (1, 2, 3, 4):
            await write_rows(store, path, sample_rows(SERIES, T_END + 30 * (p - 1), T_END + 30 * p))
            counts = await store.maintain(now=T_END + 30 * p)
        assert counts["rolled_up"] > 0
        assert calls[0] == before
        rolls = [(s, p) for s, p in log.stop() if s.startswith("INSERT INTO rollups")]
        assert len(rolls) == 2
        async with store.engine.connect() as conn:
            for statement, parameters in rolls:
                plan = await conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, tuple(parameters))
                assert not [row for row in plan if "TEMP B-TREE" in str(row[-1])], statement
            # The minute's rows are exactly its samples' aggregates, one per series that has any.
            got = await conn.execute(
                text("SELECT series_id, count, sum, min, max FROM rollups WHERE ts = :t ORDER BY 1"),
                {"t": T_END},
            )
            want = await conn.execute(
                text(
                    "SELECT series_id, count(value), sum(value), min(value), max(value) FROM samples"
                    " WHERE ts >= :t AND ts < :t + 60 GROUP BY series_id ORDER BY 1"
                ),
                {"t": T_END},
            )
            expected = [tuple(r) for r in want]
            assert [tuple(r) for r in got] == expected and len(expected) > SERIES // 2
    finally:
        await store.close()


async def test_a_retention_pass_that_died_part_way_is_resumed_in_slices(store_url, monkeypatch):
    """The oldest mark moves to the cutoff before the rows go; a pass that dies after its first
    slice leaves older rows below the mark. The next pass (another process) must slice from where
    the dead one started, not delete every leftover in one statement holding the write lock."""
    from poolscope.store import rollup

    url = make_url(store_url)
    path = url.database if url.get_backend_name() == "sqlite" else None
    series = 20
    settings = {"raw_retention_s": 600, "rollup_retention_s": 86400, "rollup_step_s": STEP}
    store = SqlStore(store_url, **settings)
    whole = rollup._delete_before

    async def dies_after_one_slice(engine, table, cutoff, oldest=None):  # type: ignore[no-untyped-def]
        if table is not rollup.samples:
            return await whole(engine, table, cutoff, oldest)
        monkeypatch.setattr(rollup, "MAX_DELETE_BATCHES", 1)
        await whole(engine, table, cutoff, oldest)
        raise RuntimeError("the process died here")

    try:
        await write_rows(store, path, sample_rows(series, T_END - 7200, T_END), series)
        monkeypatch.setattr(rollup, "_delete_before", dies_after_one_slice)
        with pytest.raises(RuntimeError, match="died"):
            await store.maintain(now=T_END)
        left = await oldest_sample(store)
        assert left < T_END - 600 - 3000  # most of what was due is still there
    finally:
        await store.close()
    monkeypatch.setattr(rollup, "_delete_before", whole)
    monkeypatch.setattr(rollup, "MAX_DELETE_BATCHES", 100)
    store = SqlStore(store_url, **settings)
    try:
        log = StatementLog(store)
        counts = await store.maintain(now=T_END + 30)
        deletes = [s for s, _ in log.stop() if s.lstrip().upper().startswith("DELETE FROM SAMPLES")]
        assert counts["raw_deleted"] > 0
        assert len(deletes) >= 5, deletes  # sliced as a pass from `left` is, not one statement
        assert await oldest_sample(store) >= T_END + 30 - 600
        assert store._marks is not None and store._marks.oldest_raw == await oldest_sample(store)
        async with store.engine.connect() as conn:
            unfinished = (
                await conn.execute(text("SELECT value FROM store_meta WHERE key = 'raw_purge_from'"))
            ).scalar()
        assert unfinished is None
    finally:
        await store.close()
