"""Sample ingest (store/ingest.py): PostgreSQL's COPY stores exactly what SQLite's executemany
stores, and the series-id cache maps each (target, metric, labels) to one series however the
labels are ordered, across store instances."""

import asyncio
import math

from sqlalchemy import select

from poolscope.schemas import Sample, TargetInfo
from poolscope.store.head import readable_samples
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.tables import series
from tests.stores import make_store

T0 = 1_800_000_000.0


def polls():
    """Three targets' polls: unlabeled and labeled samples, one metric both ways, label orders
    that differ from poll to poll, and values that are whole, fractional, missing or not finite."""
    out = []
    for k, target in enumerate(("db-a", "db-b", "db-c")):
        info = TargetInfo(name=target, status="up", poll_interval_s=1.0)
        for i in range(4):
            groups = [{"group": str(g), "kind": "pool"} for g in range(3)]
            if i % 2:  # the same label sets, built in the other order
                groups = [{"kind": "pool", "group": str(g)} for g in range(3)]
            odd = [None, math.nan, math.inf, -math.inf][i]
            batch = [
                Sample(metric="threads_running", value=float(i + k)),
                Sample(metric="qps", value=1234.5678 * (i + 1)),
                Sample(metric="tp_group_queue_length", value=odd),
                *(
                    Sample(metric="tp_group_queue_length", labels=labels, value=float(10 * g + i))
                    for g, labels in enumerate(groups)
                ),
                Sample(metric="tp_group_stalled", labels={"group": "0"}, value=-0.25 * i),
            ]
            out.append(Poll(info, None, batch, T0 + i + 0.5))
    return out


async def stored_rows(store):
    """Every stored sample as (target, metric, labels JSON, ts, value), sorted."""
    async with store.engine.connect() as conn:
        src = readable_samples(conn.dialect)  # SQLite: samples and the head (store/head.py)
        stmt = select(series.c.target, series.c.metric, series.c.labels, src.c.ts, src.c.value).join(
            series, series.c.id == src.c.series_id
        )
        return sorted(tuple(r) for r in await conn.execute(stmt))


async def test_postgres_copy_stores_what_sqlite_stores(tmp_path, postgres):
    sqlite_url = f"sqlite+aiosqlite:///{tmp_path}/store.db"
    pg_url = postgres.create_database("poolscope_ingest_same")
    results = []
    for url in (sqlite_url, pg_url):
        await asyncio.to_thread(upgrade_to_head, url)
        store = make_store(url)
        await store.write_polls(polls()[:6])  # new series: inserted, then the samples
        await store.write_polls(polls()[6:])  # known series: all from the cache
        results.append(await stored_rows(store))
        await store.close()
    on_sqlite, on_pg = results
    assert on_pg == on_sqlite
    assert len(on_sqlite) == 12 * 7  # every sample of every poll, once
    by_target_metric = {(r[0], r[1], r[2]) for r in on_sqlite}
    # Unlabeled and labeled tp_group_queue_length are apart; label order made no second series.
    assert len(by_target_metric) == 3 * 7
    unlabeled_queue = [
        r[4] for r in on_sqlite if r[0] == "db-a" and r[1:3] == ("tp_group_queue_length", "{}")
    ]
    assert unlabeled_queue == [None, None, None, None]  # missing and non-finite values are gaps
    group2 = [r[4] for r in on_sqlite if r[0] == "db-b" and r[2] == '{"group":"2","kind":"pool"}']
    assert group2 == [20.0, 21.0, 22.0, 23.0]
    assert [r[4] for r in on_sqlite if r[0] == "db-c" and r[1] == "qps"] == [
        1234.5678 * n for n in (1, 2, 3, 4)
    ]


async def test_a_new_store_finds_the_series_already_stored(store_url):
    first = make_store(store_url)
    await first.write_polls(polls()[:4])
    await first.close()
    # Another process (or a restart): an empty cache, the same series rows.
    second = make_store(store_url)
    await second.write_polls(polls()[4:])
    async with second.engine.connect() as conn:
        series_rows = list(await conn.execute(select(series.c.id)))
    rows = await stored_rows(second)
    await second.close()
    assert len(series_rows) == 3 * 7
    assert len(rows) == 12 * 7
