"""Without ix_samples_ts (migration 0010), maintenance reads samples per series through the primary
key (store/rollup.py), on SQLite and a real PostgreSQL: roll-ups, retention and the oldest raw mark
come out exactly as the old reads by time alone give them, on several targets' series with gaps;
no read of samples by time is a full scan of the table; 0010 downgrades and upgrades."""

import asyncio
import math

from alembic import command
from sqlalchemy import inspect, text
from sqlalchemy.engine import make_url

from poolscope.schemas import Sample, TargetInfo
from poolscope.store.head import readable_samples_sql
from poolscope.store.ingest import Poll
from poolscope.store.migrate import alembic_config
from poolscope.store.rollup import MAX_ROLLUP_SLICES, read_marks
from poolscope.store.sql import SqlStore
from poolscope_bench.maintbench import T_END, StatementLog, sample_rows, samples_scans, write_rows

T0 = 1_800_000_000.0
STEP = 60
RAW_RETENTION_S = 1200


def poll_samples(target: str, second: int) -> list[Sample]:
    """A few series per target, with the gaps a fleet has: a target down for five minutes, one
    added late, a metric read every other second, a non-finite value stored as a gap."""
    if target == "db2" and 600 <= second < 900:
        return []
    if target == "db3" and second < 1300:
        return []
    out = [
        Sample(metric="qps", value=round(1000 + 37.3 * math.sin(second / 47) + second % 7 * 0.1, 3)),
        Sample(metric="threads_running", value=float(second % 9)),
    ]
    for group in ("0", "1"):
        out.append(
            Sample(metric="tp_group_queue_length", labels={"group": group}, value=float((second * 3) % 5))
        )
    if second % 2 == 0:
        out.append(Sample(metric="trx_longest_age_s", value=float("nan") if second % 10 == 0 else second / 8))
    return out


async def write_seconds(store: SqlStore, start: int, end: int) -> None:
    polls = []
    for second in range(start, end):
        for target in ("db1", "db2", "db3"):
            samples = poll_samples(target, second)
            if samples:
                info = TargetInfo(name=target, status="up", poll_interval_s=1.0)
                polls.append(Poll(info, None, samples, T0 + second + 0.5))
    for i in range(0, len(polls), 600):
        await store.write_polls(polls[i : i + 600])


async def rows(conn, sql: str, **params) -> list[tuple]:
    return [tuple(r) for r in await conn.execute(text(sql), params)]


async def old_reads(store: SqlStore, now: float) -> dict:
    """What maintain() is expected to do, by the reads by time alone it used with ix_samples_ts."""
    async with store.engine.connect() as conn:
        raw = readable_samples_sql(conn.dialect.name)  # SQLite: samples and the head
        marks = await read_marks(conn, STEP)
        hwm = marks.tiers[0].hwm
        if hwm is None:
            first = (await conn.execute(text(f"SELECT min(ts) FROM {raw}"))).scalar()
            hwm = math.floor(first / STEP) * STEP
        done = math.floor(now / STEP) * STEP
        rolled = await rows(
            conn,
            f"SELECT series_id, floor(ts / {STEP}.0) * {STEP}, count(value), sum(value), min(value),"
            f" max(value) FROM {raw} WHERE ts >= :lo AND ts < :hi GROUP BY series_id, floor(ts / {STEP}.0)",
            lo=hwm,
            hi=done,
        )
        cutoff = min(now - RAW_RETENTION_S, max(done, hwm))
        kept = await rows(conn, f"SELECT series_id, ts, value FROM {raw} WHERE ts >= :c", c=cutoff)
        gone = (await conn.execute(text(f"SELECT count(*) FROM {raw} WHERE ts < :c"), {"c": cutoff})).scalar()
        rollups = await rows(conn, "SELECT series_id, ts, count, sum, min, max FROM rollups")
    return {
        "rollups": sorted(rollups + [(r[0], float(r[1]), *r[2:]) for r in rolled]),
        "kept": sorted(kept),
        "gone": gone,
    }


def same_rollups(got: list[tuple], expected: list[tuple]) -> bool:
    """Equal rows; a sum may differ in its last bits: SQL leaves the order in which a group's
    values are added to the plan (a sort before grouping reorders equal keys), old reads or new."""
    return len(got) == len(expected) and all(
        g[:3] == e[:3] and g[4:] == e[4:] and (g[3] == e[3] or abs(g[3] - e[3]) <= 1e-9 * abs(e[3]))
        for g, e in zip(got, expected, strict=True)
    )


async def test_maintenance_matches_the_reads_by_time_alone(store_url):
    store = SqlStore(store_url, raw_retention_s=RAW_RETENTION_S, rollup_retention_s=86400, rollup_step_s=STEP)
    try:
        await write_seconds(store, 0, 2400)
        # The first pass rolls everything up from the oldest sample; then passes 30 s apart
        # (the poller's interval) with new polls between them, retention deleting as it goes.
        for k, now in enumerate([T0 + 2400 + 30 * i for i in range(6)]):
            if k:
                await write_seconds(store, int(now - T0) - 30, int(now - T0))
            expected = await old_reads(store, now)
            counts = await store.maintain(now=now)
            async with store.engine.connect() as conn:
                raw = readable_samples_sql(conn.dialect.name)
                got_rollups = await rows(conn, "SELECT series_id, ts, count, sum, min, max FROM rollups")
                got_kept = await rows(conn, f"SELECT series_id, ts, value FROM {raw}")
                oldest = (await conn.execute(text(f"SELECT min(ts) FROM {raw}"))).scalar()
            assert same_rollups(sorted(got_rollups), expected["rollups"]), k
            assert sorted(got_kept) == expected["kept"], k
            assert counts["raw_deleted"] == expected["gone"], k
            assert store._marks is not None and store._marks.oldest_raw == oldest
            # Another process (an API node) reads the mark maintain() left in store_meta.
            other = SqlStore(
                store_url, raw_retention_s=RAW_RETENTION_S, rollup_retention_s=86400, rollup_step_s=STEP
            )
            async with other.engine.connect() as conn:
                assert (await read_marks(conn, STEP)).oldest_raw == oldest
            await other.close()
        assert expected["gone"] > 0 and len({r[0] for r in got_rollups}) == 15
        out = await store.query("db2", ["qps"], T0 + 1300, T0 + 2580, points=50)
        assert out.resolution == "rollup" and out.series[0].points
    finally:
        await store.close()


async def test_no_read_of_samples_by_time_scans_the_whole_table(store_url):
    """EXPLAIN every statement of a maintenance pass and of read_marks that reads samples, on a
    store of 300 series with 40 minutes of samples: each reads them by series_id (a primary-key
    range or probe per series), none scans the table. With ix_samples_ts gone, reads by ts alone
    would show up here as "Seq Scan"/"SCAN samples"."""
    url = make_url(store_url)
    path = url.database if url.get_backend_name() == "sqlite" else None
    store = SqlStore(store_url, raw_retention_s=2400 - 300, rollup_retention_s=86400, rollup_step_s=STEP)
    try:
        await write_rows(store, path, sample_rows(300, T_END - 2400, T_END), 300)
        # The first pass rolls up all 40 minutes; then the passes of a running poller, 30 s apart.
        await store.maintain(now=T_END)
        log = StatementLog(store)
        async with store.engine.connect() as conn:
            await conn.execute(text("DELETE FROM store_meta WHERE key = 'raw_oldest'"))
            await conn.commit()
            await read_marks(conn, STEP)  # no mark left by maintain(): it probes every series
        for p in range(1, 3):
            await write_rows(store, path, sample_rows(300, T_END + 30 * (p - 1), T_END + 30 * p))
            await store.maintain(now=T_END + 30 * p)
        statements = log.stop()
        kinds = {s.split()[0] for s, _ in statements}
        assert {"SELECT", "INSERT", "DELETE"} <= kinds
        async with store.engine.connect() as conn:
            for statement, parameters in statements:
                if "samples_head" in statement:
                    continue  # SQLite's head (store/head.py): a few seconds of samples, read whole
                scans = await samples_scans(conn, statement, parameters)
                assert scans, statement
                for scan in scans:
                    if scan.startswith("ModifyTable"):
                        continue
                    assert "series_id" in scan and not scan.startswith(("Seq Scan", "SCAN")), (
                        scan,
                        statement,
                    )
    finally:
        await store.close()


async def _samples_indexes(url: str) -> set[str]:
    store = SqlStore(url, raw_retention_s=60, rollup_retention_s=60)
    try:
        async with store.engine.connect() as conn:
            found = await conn.run_sync(lambda c: inspect(c).get_indexes("samples"))
        return {i["name"] for i in found}
    finally:
        await store.close()


async def test_migration_0010_downgrades_and_upgrades(store_url):
    config = alembic_config(store_url)
    assert "ix_samples_ts" not in await _samples_indexes(store_url)
    await asyncio.to_thread(command.downgrade, config, "0009")
    assert "ix_samples_ts" in await _samples_indexes(store_url)
    await asyncio.to_thread(command.upgrade, config, "head")
    assert "ix_samples_ts" not in await _samples_indexes(store_url)


async def test_a_far_off_first_sample_widens_the_roll_up_slices(store_url):
    """A first pass from a sample a month old (a wrong clock) rolls everything up in at most
    MAX_ROLLUP_SLICES statements per tier instead of one per 10 steps (4,320 here)."""
    store = SqlStore(store_url, raw_retention_s=40 * 86400, rollup_retention_s=40 * 86400, rollup_step_s=STEP)
    try:
        info = TargetInfo(name="db1", status="up", poll_interval_s=1.0)
        old = T0 - 30 * 86400
        polls = [Poll(info, None, [Sample(metric="qps", value=1.5)], old + 0.5)]
        polls += [Poll(info, None, [Sample(metric="qps", value=float(i))], T0 + i + 0.5) for i in range(120)]
        await store.write_polls(polls)
        log = StatementLog(store)
        counts = await store.maintain(now=T0 + 120)
        roll_ups = [s for s, _ in log.stop() if s.startswith("INSERT INTO rollups ")]
        assert len(roll_ups) <= 1000 == MAX_ROLLUP_SLICES  # one per 10 steps would be 4,320
        assert counts["rolled_up"] == 3  # the old minute and the two new ones
        async with store.engine.connect() as conn:
            got = await rows(conn, "SELECT ts, count, sum FROM rollups ORDER BY ts")
        assert got == [
            (old, 1, 1.5),
            (T0, 60, float(sum(range(60)))),
            (T0 + 60, 60, float(sum(range(60, 120)))),
        ]
    finally:
        await store.close()
