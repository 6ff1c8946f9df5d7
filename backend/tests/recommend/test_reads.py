"""The connection evaluations read on (recommend/reads.py): while the run loop keeps one on SQLite,
every evaluation reads on it, it holds no read transaction between evaluations (so it sees each new
poll, and never holds back a WAL checkpoint), a failure drops it, and it is closed on the way out."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from pathlib import Path

import pytest

from poolscope.config import Settings, TargetConfig
from poolscope.recommend.engine import Recommender
from poolscope.store.migrate import upgrade_to_head
from tests.recommend.test_history import poll
from tests.stores import make_store


async def test_evaluations_share_the_kept_connection_and_see_each_new_poll(tmp_path: Path) -> None:
    settings = Settings(
        store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
        targets=[TargetConfig(name="db", dsn="mysql://u:p@127.0.0.1:3306/")],
    )
    await asyncio.to_thread(upgrade_to_head, settings.store_url)
    store = make_store(settings.store_url)
    recommender = Recommender(settings, store)
    reads = recommender.reads
    t0 = float(int(time.time())) - 100
    try:
        for i in range(20):
            await store.write_polls([poll(t0 + i, float(i))])
        async with reads.kept():
            await recommender.evaluate("db", now=t0 + 19.5)
            kept = reads._kept
            assert kept is not None
            driver = (await kept.get_raw_connection()).driver_connection
            for i in range(20, 23):
                # Between evaluations: no transaction open on the kept connection (no old snapshot).
                assert not kept.in_transaction() and not driver.in_transaction
                await store.write_polls([poll(t0 + i, float(i))])
                answer = await recommender.evaluate("db", now=t0 + i + 0.5)
                assert reads._kept is kept and answer.evaluated_at == t0 + i + 0.5
                # The window read on it holds the poll just written.
                async with reads.connection() as conn:
                    assert conn is kept
                    read = await store.raw_history_to_latest(
                        "db", ["qps"], t0 + i, t0 + i, start=t0, step=1.0, conn=conn
                    )
                assert read is not None and read.latest == t0 + i and [r[2] for r in read.rows] == [float(i)]
                # Nothing on it holds back a checkpoint of the whole WAL (busy = 0).
                with contextlib.closing(sqlite3.connect(tmp_path / "store.db")) as other:
                    assert other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
            # A read that fails drops the connection; the next evaluation takes a new one.
            with pytest.raises(RuntimeError):
                async with reads.connection():
                    raise RuntimeError("a read failed")
            assert reads._kept is None and kept.closed
            await recommender.evaluate("db", now=t0 + 23.0)
            assert reads._kept is not None and reads._kept is not kept
            last = reads._kept
        assert reads._kept is None and last.closed  # closed on the way out of kept()
        # Outside kept(): a connection of its own per evaluation, none kept.
        await recommender.evaluate("db", now=t0 + 23.5)
        assert reads._kept is None
    finally:
        await store.close()
