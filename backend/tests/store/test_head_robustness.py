"""The samples head (store/head.py) when things go wrong: a (series, ts) stored twice is read twice
until the move drops the second and says how many it dropped; close() and maintenance say when a move fails and go on,
and a pass whose move fails still rolls up and drops expired samples without losing a head row."""

import logging
import sqlite3

import pytest
from sqlalchemy import text

from poolscope.schemas import Sample
from poolscope.store import sql
from poolscope.store.head import move_head_or_hold
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from tests.store.test_samples_head import T0, counts, every_sample, make_store, poll, stored

REFUSE = "CREATE TRIGGER refuse BEFORE INSERT ON samples BEGIN SELECT RAISE(ABORT, 'refused'); END"


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path}/store.db"
    upgrade_to_head(url)
    return url


def again(target: str, i: int, value: float) -> Poll:
    """Poll i of the target once more, its qps now `value` (its other series not sent)."""
    first = poll(target, i)
    return Poll(first.info, None, [Sample(metric="qps", value=value)], first.ts)


async def qps_read(store: sql.SqlStore, i: int) -> tuple[float, int]:
    """What readers see of qps at poll i: the chart's value there and the recommender's count."""
    chart = await store.query("db-a", ["qps"], T0, T0 + 9, points=10)
    read = await store.raw_history_to_latest(
        "db-a", ["qps"], T0 + i, T0 + i, start=T0, step=1.0, count=(T0 + i, T0 + i)
    )
    assert read is not None and read.count is not None
    return dict(chart.series[0].points)[T0 + i], read.count


def dropped_warnings(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "dropped" in r.getMessage() and r.name == "poolscope.store.head"]


async def test_a_duplicate_is_read_twice_until_the_move_drops_it_and_counts_it_once(
    sqlite_url, caplog, monkeypatch
):
    monkeypatch.setattr(sql, "MOVE_SLICE_SERIES", 1)  # 3 series: the move is 3 transactions
    store = make_store(sqlite_url)
    try:
        await store.write_polls([poll("db-a", i) for i in range(10)])
        assert await store.move_head() == 30
        assert dropped_warnings(caplog) == []
        # (series, ts) already in samples: the head's key cannot see them, so it takes them.
        await store.write_polls([again("db-a", 3, 100.0)])
        dup = poll("db-a", 5)
        await store.write_polls(
            [Poll(dup.info, None, [Sample(metric="threads_running", value=-1.0)], dup.ts)]
        )
        assert await counts(store) == (30, 2)
        # Until the move, readers see both rows: the chart averages them, the count counts both.
        assert await qps_read(store, 3) == ((3.0 + 100.0) / 2, 2)
        caplog.set_level(logging.WARNING)
        assert await store.move_head() == 0
        # The first value stays; one warning for the whole move (two slices dropped one each),
        # with the count and no value.
        assert await qps_read(store, 3) == (3.0, 1)
        assert await counts(store) == (30, 0)
        assert await every_sample(store) == stored("db-a", range(10))
        warned = dropped_warnings(caplog)
        assert [(r.levelno, r.getMessage().split(" samples whose")[0]) for r in warned] == [
            (logging.WARNING, "moving the samples head dropped 2")
        ]
        assert "100" not in warned[0].getMessage() and "store.db" not in warned[0].getMessage()
        # A move with nothing dropped says nothing.
        await store.write_polls([poll("db-a", 10)])
        assert await store.move_head() == 3
        assert len(dropped_warnings(caplog)) == 1
    finally:
        await store.close()


async def test_close_says_when_its_move_fails_and_closes_everything(sqlite_url, tmp_path, caplog):
    store = make_store(sqlite_url)
    await store.write_polls([poll("db-a", i) for i in range(10)])
    async with store.engine.begin() as conn:
        await conn.exec_driver_sql(REFUSE)
    await store.close()
    failed = [r for r in caplog.records if "at close failed" in r.getMessage()]
    assert len(failed) == 1 and failed[0].levelno == logging.WARNING
    assert failed[0].exc_info is not None and "refused" in str(failed[0].exc_info[1])
    assert store._write_conn is None
    # Nothing of the store holds the file: another connection takes the write lock at once.
    con = sqlite3.connect(tmp_path / "store.db", timeout=0.5)
    try:
        con.execute("BEGIN IMMEDIATE")
        assert con.execute("SELECT count(*) FROM samples_head").fetchone()[0] == 30
        con.execute("DROP TRIGGER refuse")
        con.commit()
    finally:
        con.close()
    reopened = make_store(sqlite_url)
    try:
        assert await every_sample(reopened) == stored("db-a", range(10))
        assert await reopened.move_head() == 30
    finally:
        await reopened.close()


async def test_a_pass_whose_move_fails_still_rolls_up_and_drops_expired_samples(sqlite_url, caplog):
    store = make_store(sqlite_url, raw_retention_s=120)
    try:
        await store.write_polls([poll("db-a", i) for i in range(180)])
        assert await store.move_head() == 540
        await store.write_polls([poll("db-a", i) for i in range(180, 240)])
        async with store.engine.begin() as conn:
            await conn.exec_driver_sql(REFUSE)
        done = await store.maintain(now=T0 + 240)
        # Both moves failed (the sliced one and the roll-up's own) and said so.
        assert "moving the samples head before maintenance failed" in caplog.text
        assert "maintenance rolls up what samples hold" in caplog.text
        # The roll-up stopped before the head's oldest row (T0 + 180), retention at the roll-up's
        # mark: the 3 minutes in samples rolled up, the 2 past retention dropped, the head kept.
        assert done["rolled_up"] == 9
        assert done["raw_deleted"] == 360
        assert await counts(store) == (180, 180)
        assert await every_sample(store) == stored("db-a", range(120, 240))
        async with store.engine.begin() as conn:
            await conn.exec_driver_sql("DROP TRIGGER refuse")
        # The next pass moves the head and rolls up its minute: every sample counted once.
        done = await store.maintain(now=T0 + 300)
        assert done["rolled_up"] == 3
        async with store.engine.connect() as conn:
            rolled = (await conn.execute(text("SELECT sum(count), count(*) FROM rollups"))).one()
        assert tuple(rolled) == (720, 12)
        assert await counts(store) == (180, 0)
    finally:
        await store.close()


async def test_the_roll_ups_move_commits_or_rolls_back_with_its_transaction(sqlite_url):
    store = make_store(sqlite_url)
    try:
        await store.write_polls([poll("db-a", i) for i in range(10)])
        # Its savepoint must not be the transaction itself (RELEASE would commit the move alone).
        with pytest.raises(RuntimeError, match="roll-up failed"):
            async with store.engine.begin() as conn:
                assert await move_head_or_hold(conn, T0 + 20) is None
                assert (await conn.exec_driver_sql("SELECT count(*) FROM samples")).scalar() == 30
                raise RuntimeError("roll-up failed")
        assert await counts(store) == (0, 30)
        async with store.engine.begin() as conn:
            assert await move_head_or_hold(conn, T0 + 20) is None
        assert await counts(store) == (30, 0)
    finally:
        await store.close()
