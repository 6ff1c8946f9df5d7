"""The store fails and comes back (store/writer.py, store/backlog.py, store/health.py), on a real
SQLite whose disk fills up and a real PostgreSQL that is stopped: polls and alert changes offered
meanwhile are held in order, in memory and then in a spool file, bounded in bytes; once the store
takes writes again every one is written once, in order, and the latest row is the newest poll; a
write whose commit was not answered is not written twice; what the bounds refuse is counted; a
spool left by a killed process is written by the next one. One log line says the store failed
and one that it is back. Retries run on the test clock."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from poolscope.alerts.repository import AlertRepository
from poolscope.schemas import Alert, Sample, TargetInfo, TargetState
from poolscope.store.backlog import Holding
from poolscope.store.head import readable_samples_sql
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope.store.writer import RETRY_S
from poolscope_dev.pgsandbox import PostgresSandbox
from tests.clock import FakeClock
from tests.store.outage import FailingStore, small_disk
from tests.waiting import await_for

_databases = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def failing(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FailingStore]:
    if request.param == "postgresql":
        server: PostgresSandbox = request.getfixturevalue("stoppable_postgres")
        url = server.create_database(f"poolscope_outage_{next(_databases)}")
        upgrade_to_head(url)
        store = FailingStore(url, "postgresql", server=server)
        try:
            yield store
        finally:
            if server.proc is None:
                server.start()
        return
    with small_disk(tmp_path / "disk") as disk:
        url = f"sqlite+aiosqlite:///{disk / 'store.db'}"
        upgrade_to_head(url)
        yield FailingStore(url, "sqlite", disk=disk)


def poll(target: str, ts: float, value: float) -> tuple[TargetInfo, TargetState, list[Sample], float]:
    info = TargetInfo(name=target, status="up", poll_interval_s=1.0, last_poll_at=ts)
    samples = [
        Sample(metric="target_up", value=1.0),
        Sample(metric="threads_running", value=value),
        Sample(metric="tp_group_queue_length", labels={"group": "0"}, value=value * 2),
    ]
    return info, TargetState(target=target, ts=ts, status="up"), samples, ts


@contextlib.asynccontextmanager
async def opened(url: str, tmp_path: Path, clock: FakeClock, **holding: object) -> AsyncIterator[SqlStore]:
    spool = tmp_path / "spool"  # local disk, not the full one
    config = {"node": "test", "memory_bytes": 64 * 2**20, "spool_bytes": 64 * 2**20, "spool_dir": spool}
    store = SqlStore(
        url,
        raw_retention_s=86400,
        rollup_retention_s=86400,
        holding=Holding(**{**config, **holding}),  # type: ignore[arg-type]
        clock=clock,
    )
    store.writer.max_delay_s = 0.01
    try:
        yield store
    finally:
        await store.close()


async def stored_values(store: SqlStore, target: str) -> list[tuple[float, float]]:
    """(ts, threads_running) of every stored sample of the target, in time order (duplicates kept)."""
    async with store.engine.connect() as conn:
        rows = await conn.execute(
            text(
                f"SELECT s.ts, s.value FROM {readable_samples_sql(store.dialect)} s"
                " JOIN series ON series.id = s.series_id"
                " WHERE series.target = :t AND series.metric = 'threads_running' ORDER BY s.ts"
            ),
            {"t": target},
        )
        return [(float(r.ts), float(r.value)) for r in rows]


async def break_and_offer(store: SqlStore, failing: FailingStore, clock: FakeClock, polls: range) -> None:
    """Fail the store, offer `polls` (ts = clock start + i) while it fails, and let the writer try."""
    await asyncio.to_thread(failing.fail)
    t0 = clock.time()
    for i in polls:
        store.writer.offer(*poll("db1", t0 + i, float(i)))
        await store.writer.flush()
    await clock.advance(RETRY_S)  # a retry, which fails too
    await store.writer.flush()


async def caught_up(store: SqlStore, clock: FakeClock) -> None:
    """Mended: until the writer wrote everything it held (its retries come on the test clock)."""

    async def done() -> bool:
        if store.writer.holding:
            await clock.advance(RETRY_S)
            return False
        return True

    await await_for(done, 60, "the writer never wrote what it held", every_s=0.05)


async def test_polls_held_while_the_store_fails_are_written_once_in_order_when_it_is_back(
    failing, tmp_path, caplog
):
    clock = FakeClock()
    caplog.set_level(logging.INFO, logger="poolscope.store")
    async with opened(failing.url, tmp_path, clock) as store:
        t0 = clock.time()
        for i in range(3):
            store.writer.offer(*poll("db1", t0 + i, float(i)))
        await store.writer.flush()
        assert [v for _, v in await stored_values(store, "db1")] == [0.0, 1.0, 2.0]

        await break_and_offer(store, failing, clock, range(3, 33))
        assert store.health.failing and store.writer.buffered_polls == 30
        status = store.health.status()
        assert status.status == "failing" and status.error and status.buffered_samples == 90
        # An alert that fired meanwhile is held in order too.
        repo = AlertRepository(store.engine)
        store.writer.handle("alert", lambda p: repo.upsert(Alert.model_validate(p)))
        alert = Alert(
            fingerprint="f1",
            target="db1",
            rule="group_stalled",
            severity="critical",
            status="firing",
            summary="s",
            description="d",
            started_at=t0 + 20,
            fired_at=t0 + 20,
            last_active_at=t0 + 20,
        )
        ids: list[int | None] = []
        assert await store.writer.write_op("alert", "f1", alert.model_dump(mode="json"), ids.append) is None

        await asyncio.to_thread(failing.mend)
        await caught_up(store, clock)
        assert not store.health.failing
        assert await stored_values(store, "db1") == [(t0 + i, float(i)) for i in range(33)]
        latest = await store.latest("db1")
        assert latest is not None and latest[0].last_poll_at == t0 + 32
        (row,) = await repo.history(target="db1")
        assert ids == [row.id] and row.fired_at == t0 + 20
    failed = [r for r in caplog.records if "store unreachable" in r.getMessage()]
    back = [r for r in caplog.records if "store back after" in r.getMessage()]
    assert len(failed) == 1 and failed[0].levelno == logging.WARNING, [r.getMessage() for r in failed]
    assert len(back) == 1 and back[0].levelno == logging.INFO


async def test_a_write_whose_commit_was_not_answered_is_not_written_twice(failing, tmp_path):
    clock = FakeClock()
    async with opened(failing.url, tmp_path, clock) as store:
        t0 = clock.time()
        await break_and_offer(store, failing, clock, range(10))
        await asyncio.to_thread(failing.mend)
        real = store.write_polls
        lost = 0

        async def committed_but_unanswered(polls, **kw):  # type: ignore[no-untyped-def]
            nonlocal lost
            await real(polls, **kw)
            if not lost:
                lost += 1
                raise ConnectionResetError("the connection dropped before the commit was answered")

        store.write_polls = committed_but_unanswered  # type: ignore[method-assign]
        await caught_up(store, clock)
        assert lost == 1
        assert await stored_values(store, "db1") == [(t0 + i, float(i)) for i in range(10)]


async def test_past_both_bounds_polls_are_dropped_and_counted_never_silently(failing, tmp_path, caplog):
    clock = FakeClock()
    async with opened(failing.url, tmp_path, clock, memory_bytes=4000, spool_bytes=6000) as store:
        t0 = clock.time()
        await break_and_offer(store, failing, clock, range(100))
        writer = store.writer
        assert writer.backlog.in_spool > 0, "the spool was never used"
        assert writer.dropped_polls > 0 and writer.buffered_polls + writer.dropped_polls == 100
        assert writer.backlog.size <= 4000 + 6000
        status = store.health.status()
        assert (
            status.dropped_polls == writer.dropped_polls
            and status.dropped_samples == 3 * writer.dropped_polls
        )
        kept = writer.buffered_polls
        await asyncio.to_thread(failing.mend)
        await caught_up(store, clock)
        # The oldest are kept (in memory, then the spool), the newest dropped: in order, none twice.
        assert await stored_values(store, "db1") == [(t0 + i, float(i)) for i in range(kept)]
        assert store.health.status().dropped_polls == 100 - kept


async def test_a_spool_left_by_a_killed_process_is_written_by_the_next_one(failing, tmp_path):
    """A poller killed during an outage (its polls in the spool file) is started again: the new
    process takes the file and writes it once the store is back."""
    gone = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await gone.wait()
    dead_pid = gone.pid  # a process of this host that is gone
    clock = FakeClock()
    t0 = clock.time()
    async with opened(failing.url, tmp_path, clock, memory_bytes=1000, pid=dead_pid) as first:
        await break_and_offer(first, failing, clock, range(20))
        assert first.writer.buffered_polls == 20 and first.writer.backlog.in_spool > 0
    # Closed while the store fails: what was in memory went to the spool too.
    spools = list((tmp_path / "spool").glob("spool-*.jsonl"))
    assert len(spools) == 1 and str(dead_pid) in spools[0].name
    await asyncio.to_thread(failing.mend)
    async with opened(failing.url, tmp_path, clock) as second:
        await caught_up(second, clock)
        assert await stored_values(second, "db1") == [(t0 + i, float(i)) for i in range(20)]
    assert not list((tmp_path / "spool").glob("*.jsonl")), "the adopted spool was left behind"
