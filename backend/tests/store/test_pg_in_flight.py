"""Batches in flight on PostgreSQL (store/writer.py): two batches are written at once, but a
batch's latest rows and its commit wait for the batch before it, so a target's latest row never
goes back to an older poll, submitters are answered in batch order, a batch is all or nothing
with its samples inserted first, and the same poll in two batches cannot deadlock them.
Also migration 0009: the latest rows' JSON is stored lz4-compressed on PostgreSQL."""

import asyncio

import pytest
from alembic import command
from sqlalchemy import func, select, text

from poolscope.store.ingest import Poll
from poolscope.store.latest import target_latest
from poolscope.store.migrate import alembic_config, upgrade_to_head
from poolscope.store.sql import SqlStore
from poolscope.store.tables import samples
from tests.store.test_writer import T0, make_store, poll_args, stored
from tests.waiting import await_for

NAMES = [f"db{i}" for i in range(20)]


class SlowFirstBatch(SqlStore):
    """The real store; its first batch starts late (a slow series lookup, a busy connection
    pool), so the second batch runs ahead of it."""

    def __init__(self, url):
        super().__init__(url, raw_retention_s=3600, rollup_retention_s=86400)
        self.calls = 0

    async def write_polls(self, polls, **kw):
        self.calls += 1
        if self.calls == 1:
            await asyncio.sleep(0.6)  # the behaviour: a batch that starts late
        await super().write_polls(polls, **kw)


@pytest.fixture
def pg_url(postgres, request):
    url = postgres.create_database(f"poolscope_inflight_{request.node.name[:40].lower()}")
    upgrade_to_head(url)
    return url


async def _two_batches(store, second_ts, order):
    """Round one (T0) in one batch, round two (`second_ts`) in the next, while the first is slow."""

    async def submit(name, ts, value, tag):
        await store.writer.submit(*poll_args(name, ts, value))
        order.append(tag)

    store.writer.max_delay_s = 0.05
    first = [asyncio.create_task(submit(n, T0, 1.0, 1)) for n in NAMES]
    # The writer took round one and is in its slow start.
    await await_for(lambda: store.calls, 10, "round one was never written")
    second = [asyncio.create_task(submit(n, second_ts, 2.0, 2)) for n in NAMES]
    return await asyncio.wait_for(asyncio.gather(*first, *second, return_exceptions=True), 30)


async def test_latest_rows_keep_batch_order_while_batches_overlap(pg_url):
    store = SlowFirstBatch(pg_url)
    assert store.writer.in_flight == 2
    order: list[int] = []
    results = await _two_batches(store, T0 + 1, order)
    assert results == [None] * (2 * len(NAMES))
    assert store.writer.batches_written == 2
    # Every poll of the first batch was answered before any of the second.
    assert order == [1] * len(NAMES) + [2] * len(NAMES)
    # Another process reads the stored rows: each target's latest row is its newest poll (the
    # second batch's, written after the first committed) and holds one row per target.
    reader = make_store(pg_url)
    for name in NAMES:
        info, state = await reader.latest(name)
        assert state.ts == T0 + 1
        assert await stored(reader, name) == [1.0, 2.0]
    async with reader.engine.connect() as conn:
        seqs = (await conn.execute(select(target_latest.c.target, target_latest.c.seq))).all()
    assert len(seqs) == len(NAMES)
    await reader.close()
    await store.close()


async def test_the_same_poll_in_two_batches_in_flight_does_not_deadlock(pg_url):
    store = SlowFirstBatch(pg_url)
    order: list[int] = []
    # Round two repeats round one's polls: its samples collide with the first batch's.
    results = await _two_batches(store, T0, order)
    assert results[: len(NAMES)] == [None] * len(NAMES)
    assert all(isinstance(r, Exception) for r in results[len(NAMES) :])
    for name in NAMES:
        assert await stored(store, name) == [1.0]
    # The writer goes on.
    await store.writer.submit(*poll_args("db0", T0 + 5, 3.0))
    assert await stored(store, "db0") == [1.0, 3.0]
    await store.close()


async def test_a_batch_that_fails_after_its_samples_stores_nothing(pg_url):
    store = make_store(pg_url)
    polls = [Poll(*poll_args(name, T0, 1.0)) for name in NAMES]
    failed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    failed.set_exception(RuntimeError("the batch before gave up"))
    # The samples are copied first, then the batch waits for its turn, which fails here.
    with pytest.raises(RuntimeError):
        await store.write_polls(polls, after=failed)
    async with store.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(samples))).scalar() == 0
        assert (await conn.execute(select(func.count()).select_from(target_latest))).scalar() == 0
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    done.set_result(None)
    await store.write_polls(polls, after=done)
    for name in NAMES:
        assert await stored(store, name) == [1.0]
    await store.close()


async def test_latest_row_json_is_lz4_compressed_on_postgres(pg_url):
    store = make_store(pg_url)
    info, state, samples_, ts = poll_args("db0", T0, 1.0)
    # Large enough to be compressed (PostgreSQL compresses values over ~2 kB).
    state = state.model_copy(update={"variables": {f"var_{i}": "ON " * 10 for i in range(300)}})
    await store.write_polls([Poll(info, state, samples_, ts)])
    async with store.engine.connect() as conn:
        method = (await conn.execute(text("SELECT pg_column_compression(state) FROM target_latest"))).scalar()
    assert method == "lz4"
    await store.close()


async def _compression(url):
    store = make_store(url)
    try:
        async with store.engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT attname, attcompression::text FROM pg_attribute "
                    "WHERE attrelid = 'target_latest'::regclass AND attname IN ('info', 'state')"
                )
            )
            return dict(rows.all())
    finally:
        await store.close()


async def test_migration_0009_downgrades_and_upgrades(store_url):
    config = alembic_config(store_url)
    postgres = store_url.startswith("postgresql")
    if postgres:
        assert await _compression(store_url) == {"info": "l", "state": "l"}
    await asyncio.to_thread(command.downgrade, config, "0008")
    if postgres:
        assert await _compression(store_url) == {"info": "p", "state": "p"}
    await asyncio.to_thread(command.upgrade, config, "head")
    if postgres:
        assert await _compression(store_url) == {"info": "l", "state": "l"}
