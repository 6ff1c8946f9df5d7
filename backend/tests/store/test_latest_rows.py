"""The latest rows a batch writes (one statement for all its targets) and the overview fields
they carry, on SQLite, MariaDB and PostgreSQL, read back by another process's store."""

import pytest
from sqlalchemy import text

from poolscope.schemas import Sample, TargetInfo, TargetState
from poolscope.schemas.target import ServerInfo, TargetSummary
from poolscope.store.ingest import Poll
from poolscope.store.latest import overview_fields_json, variables_fingerprint
from tests.store.test_sql_store import T0, make_store, store_url  # noqa: F401 (fixture)


def info(name: str, status: str = "up", queue: int | None = None, ts: float = T0) -> TargetInfo:
    return TargetInfo(
        name=name,
        status=status,
        reason=None if status == "up" else "connection refused",
        poll_interval_s=1.0,
        last_poll_at=ts,
        summary=TargetSummary(groups=4, stalled_groups=1, queue_length=queue, longest_wait_ms=12.5, qps=3.25),
    )


def poll(name: str, ts: float, up: bool = True, queue: int | None = 2) -> Poll:
    state = TargetState(target=name, ts=ts, status="up") if up else None
    samples = [Sample(metric="target_up", value=1.0 if up else 0.0)]
    return Poll(info(name, "up" if up else "down", queue, ts), state, samples, ts)


async def stored_rows(store) -> dict[str, tuple[int, str | None, str]]:
    async with store.engine.connect() as conn:
        result = await conn.execute(text("SELECT target, seq, overview, status FROM target_latest"))
        return {r.target: (int(r.seq), r.overview, r.status) for r in result}


async def test_a_batch_writes_every_target_in_commit_order_and_a_reader_sees_it(store_url):  # noqa: F811
    writer, reader = make_store(store_url), make_store(store_url)
    try:
        await writer.write_polls([poll("a", T0), poll("b", T0), poll("c", T0, up=False)])
        first = await stored_rows(reader)
        assert sorted(first) == ["a", "b", "c"]
        await writer.write_polls([poll("b", T0 + 1, queue=7)])
        second = await stored_rows(reader)
        # Only b's row is new, and it sorts after every row of the earlier commit.
        assert second["a"] == first["a"] and second["c"] == first["c"]
        assert second["b"][0] > max(seq for seq, _, _ in first.values())
        latest = await reader.latest_rows.get("b")
        assert latest is not None and latest.info.summary.queue_length == 7 and latest.state.ts == T0 + 1
        assert (await reader.latest_rows.get("c")).state is None
    finally:
        await writer.close()
        await reader.close()


async def test_a_target_polled_twice_in_one_batch_keeps_its_newest_poll_and_last_good_state(store_url):  # noqa: F811
    writer, reader = make_store(store_url), make_store(store_url)
    try:
        await writer.write_polls([poll("a", T0)])
        await writer.write_polls([poll("a", T0 + 1), poll("a", T0 + 2, up=False)])
        for store in (writer, reader):  # the writer from memory, the reader from the row
            latest = await store.latest_rows.get("a")
            assert latest.info.status == "down" and latest.info.last_poll_at == T0 + 2
            assert latest.state is not None and latest.state.ts == T0 + 1
        async with reader.engine.connect() as conn:
            (row,) = await reader.latest_rows.rows_for(conn, ["a"])
        assert not row.state_fresh and row.ts == T0 + 2
        # A later down poll leaves the stored state alone too.
        await writer.write_polls([poll("a", T0 + 3, up=False)])
        assert (await reader.latest_rows.get("a")).state.ts == T0 + 1
    finally:
        await writer.close()
        await reader.close()


async def test_the_overview_fields_are_stored_with_each_poll(store_url):  # noqa: F811
    writer, reader = make_store(store_url), make_store(store_url)
    try:
        await writer.write_polls([poll("a", T0, queue=3), poll("b", T0, up=False)])
        await writer.write_polls([poll("a", T0 + 1, queue=5)])
        stored = await reader.latest_rows.overview_json(["a", "b", "never"])
        assert set(stored) == {"a", "b"}
        assert stored == {name: overview for name, (_, overview, _) in (await stored_rows(reader)).items()}
        assert stored["a"] == overview_fields_json(info("a", "up", 5, T0 + 1))
        # The process that wrote them answers from memory, the same text.
        assert await writer.latest_rows.overview_json(["a", "b"]) == stored
    finally:
        await writer.close()
        await reader.close()


async def test_a_row_from_before_the_overview_column_is_answered_from_its_info(store_url):  # noqa: F811
    writer, reader = make_store(store_url), make_store(store_url)
    try:
        await writer.write_polls([poll("a", T0, queue=9)])
        async with writer.engine.begin() as conn:
            await conn.execute(text("UPDATE target_latest SET overview = NULL"))
        assert (await reader.latest_rows.overview_json(["a"]))["a"] == overview_fields_json(
            info("a", "up", 9, T0)
        )
    finally:
        await writer.close()
        await reader.close()


def test_overview_fields_are_the_overview_rows_poll_part():
    full = info("a", "down", 4)
    full.server = ServerInfo(
        flavor="mariadb", version="10.11.6", thread_handling="pool-of-threads", pool_enabled=True
    )
    fields = overview_fields_json(full)
    assert fields.startswith('{"status":"down","reason":"connection refused","last_poll_at":')
    assert '"pool_enabled":true,"groups":4,"stalled_groups":1,"queue_length":4' in fields
    assert fields.endswith('"qps":3.25}')


@pytest.mark.parametrize("status", ["up", "down"])
def test_overview_fields_of_a_target_without_summary(status):
    assert '"groups":null' in overview_fields_json(TargetInfo(name="x", status=status, poll_interval_s=1.0))


async def test_the_variables_fingerprint_follows_a_change_and_is_kept_while_down(store_url):  # noqa: F811
    # A reader (an API process) sees the variables change without decoding the state (recommend/engine.py).
    writer, reader = make_store(store_url), make_store(store_url)

    def with_vars(ts: float, pool_size: str | None) -> Poll:
        if pool_size is None:
            return poll("a", ts, up=False)
        state = TargetState(target="a", ts=ts, status="up", variables={"thread_pool_size": pool_size})
        return Poll(info("a", ts=ts), state, [], ts)

    try:
        assert await reader.latest_rows.variables_fps(["a"]) == {}
        await writer.write_polls([with_vars(T0, "4")])
        first = await reader.latest_rows.variables_fps(["a", "b"])
        assert first == {"a": variables_fingerprint({"thread_pool_size": "4"})}
        await writer.write_polls([with_vars(T0 + 1, "4"), with_vars(T0 + 2, None)])
        assert await reader.latest_rows.variables_fps(["a"]) == first  # unchanged, then down: kept
        await writer.write_polls([with_vars(T0 + 3, "8")])
        changed = await reader.latest_rows.variables_fps(["a"])
        assert changed == {"a": variables_fingerprint({"thread_pool_size": "8"})} != first
        assert await writer.latest_rows.variables_fps(["a"]) == changed  # the writer's own, from memory
    finally:
        await writer.close()
        await reader.close()
