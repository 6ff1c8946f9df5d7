"""SQLite's poll writes on a connection kept for them (store/sql.py _write_transaction): a write
that fails rolls back, gives up that connection and leaves the next write working; close()
returns it."""

import asyncio
import math

from poolscope.schemas import Sample, TargetInfo
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import WAL_AUTOCHECKPOINT_PAGES
from tests.store.test_ingest import T0, make_store, stored_rows


def poll(ts: float, value: float) -> Poll:
    info = TargetInfo(name="db", status="up", poll_interval_s=1.0, last_poll_at=ts)
    return Poll(info, None, [Sample(metric="qps", value=value)], ts)


async def test_a_failed_write_leaves_the_next_one_working(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path}/store.db"
    await asyncio.to_thread(upgrade_to_head, url)
    store = make_store(url)
    pool = store.engine.pool
    try:
        await store.write_polls([poll(T0, 1.0)])
        assert pool.checkedout() == 1  # kept for the next write
        kept = store._write_conn
        try:
            await store.write_polls([poll(T0 + 1, 2.0), poll(T0, 3.0)])  # (series, ts) stored already
        except Exception:
            pass
        else:
            raise AssertionError("a duplicate sample must fail the batch")
        assert store._write_conn is None and kept.closed and pool.checkedout() == 0
        await store.write_polls([poll(T0 + 2, math.inf)])
        assert [(r[3], r[4]) for r in await stored_rows(store)] == [(T0, 1.0), (T0 + 2, None)]
        assert (await store.latest_rows.get("db")).info.last_poll_at == T0 + 2
    finally:
        await store.close()
    assert pool.checkedout() == 0


async def test_every_sqlite_connection_is_tuned(tmp_path):
    """WAL, synchronous=NORMAL and the longer checkpoint interval (store/sql.py _sqlite_tuning) on
    the kept write connection and on the pool's other connections alike: the PRAGMAs are per
    connection, and a connection without them would checkpoint every 1,000 pages."""
    url = f"sqlite+aiosqlite:///{tmp_path}/store.db"
    await asyncio.to_thread(upgrade_to_head, url)
    store = make_store(url)
    try:
        await store.write_polls([poll(T0, 1.0)])
        async with store.engine.connect() as reader, store._write_transaction() as writer:
            assert reader is not writer
            for conn in (reader, writer):
                got = [
                    (await conn.exec_driver_sql(f"PRAGMA {name}")).scalar()
                    for name in ("journal_mode", "synchronous", "wal_autocheckpoint")
                ]
                assert got == ["wal", 1, WAL_AUTOCHECKPOINT_PAGES] and WAL_AUTOCHECKPOINT_PAGES > 1000
    finally:
        await store.close()
