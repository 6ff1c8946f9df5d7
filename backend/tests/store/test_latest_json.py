"""The latest row's JSON (store/latest_json.py) is model_dump_json's, byte for byte: for real
polls of the live MariaDB and of replayed servers of every flavor, as stored by write_polls, and
for the values where a kept text or a float's repr could go wrong."""

from __future__ import annotations

import asyncio
import math

import pytest
from pydantic import TypeAdapter
from sqlalchemy import text

from poolscope.schemas import (
    CollectorStatus,
    PoolSummary,
    Sample,
    TargetInfo,
    TargetState,
    Threads,
    Transactions,
    WaitReason,
)
from poolscope.schemas.target import ServerInfo, TargetSummary
from poolscope.store.ingest import Poll
from poolscope.store.latest_json import LatestJson, Spliced, overview_fields_json
from poolscope.store.migrate import upgrade_to_head
from tests.poller.helpers import group_state, poller_for
from tests.store.test_sql_store import T0, make_store

SAMPLES = TypeAdapter(list[Sample])
FIXTURE_TARGETS = ("percona/8.4.10", "mysql-enterprise/8.4", "mariadb/10.11")


def assert_same(encoder: LatestJson, info: TargetInfo, state: TargetState | None, samples: list[Sample]):
    assert encoder.info_state(info, state) == (
        info.model_dump_json(),
        state.model_dump_json() if state is not None else None,
    )
    assert encoder.overview(info) == overview_fields_json(info)
    assert encoder.samples(info.name, samples) == SAMPLES.dump_json(samples).decode()


async def real_polls(dsn: str, name: str, rounds: int) -> list:
    poller = poller_for(dsn, name=name)
    try:
        return [await poller.poll_once() for _ in range(rounds)]
    finally:
        await poller.close()


async def test_real_polls_encode_as_model_dump_json(monitor_dsn, tmp_path):
    results = await real_polls(monitor_dsn, "live", 4)
    for fixture in FIXTURE_TARGETS:
        results += await real_polls(f"fixture://{fixture}", fixture.replace("/", "-"), 3)
    encoder = LatestJson()
    for result in results:
        assert result.info.status == "up", result.info.reason
        assert_same(encoder, result.info, result.state, result.samples)
    # A down poll, and the same polls again (every text now a kept one).
    down = results[0].info.model_copy(update={"status": "down", "reason": 'refused "x"', "collectors": []})
    assert_same(encoder, down, None, [Sample(metric="target_up", value=0.0)])
    for result in results:
        assert_same(encoder, result.info, result.state, result.samples)

    # Stored by write_polls: each column is the model's JSON.
    store = make_store(f"sqlite+aiosqlite:///{tmp_path}/store.db")
    await asyncio.to_thread(upgrade_to_head, store.url)
    try:
        last = {r.info.name: r for r in results}
        for i, result in enumerate(results):
            await store.write_polls([Poll(result.info, result.state, result.samples, T0 + i)])
        async with store.engine.connect() as conn:
            rows = {
                r.target: r
                for r in await conn.execute(
                    text("SELECT target, info, state, samples, overview FROM target_latest")
                )
            }
    finally:
        await store.close()
    assert set(rows) == set(last)
    for name, result in last.items():
        row = rows[name]
        assert row.info == result.info.model_dump_json()
        assert row.state == result.state.model_dump_json()
        assert row.samples == SAMPLES.dump_json(result.samples).decode()
        assert row.overview == overview_fields_json(result.info)


def base_info(**update) -> TargetInfo:
    info = TargetInfo(
        name="db",
        tags={"collectors": '","missing_privileges":[]', "missing_privileges": "x"},
        status="up",
        reason='collectors failing: a ,"missing_privileges":["q"] "b" "qps":null "last_poll_at":null',
        server=ServerInfo(
            flavor="mariadb", version="10.11", thread_handling="pool-of-threads", pool_enabled=True
        ),
        poll_interval_s=1.0,
        last_poll_at=T0,
        collectors=[
            CollectorStatus(name="global_status", ok=True, duration_ms=0.25),
            CollectorStatus(name="waits", ok=True, every_s=5.0, carried_s=2.0, note='last "2 s" ago'),
        ],
        missing_privileges=['PROCESS ,"summary":{}'],
        summary=TargetSummary(groups=4, stalled_groups=0, queue_length=0, longest_wait_ms=None, qps=12.5),
    )
    return info.model_copy(update=update)


ODD_FLOATS = [
    0.0,
    -0.0,
    1e-4,
    9.99e-5,
    3.5e-5,
    1e-7,
    2.5e-9,
    1e-20,
    1e15,
    1e16,
    1.2345678e17,
    math.inf,
    -math.inf,
    math.nan,
]


@pytest.mark.parametrize("value", ODD_FLOATS)
def test_floats_are_written_as_pydantic_writes_them(value):
    encoder = LatestJson()
    for info in (
        base_info(last_poll_at=value),
        base_info(summary=TargetSummary(groups=4, qps=value, longest_wait_ms=value)),
        base_info(poll_duration_ms=value),
    ):
        state = TargetState(target="db", ts=value, status="up", collectors=info.collectors)
        assert_same(encoder, info, state, [Sample(metric="qps", value=value)])


def test_kept_texts_follow_every_change():
    encoder = LatestJson()
    info = base_info()
    statuses = list(info.collectors)
    state = TargetState(target="db", ts=T0, status="up", collectors=statuses)
    assert_same(encoder, info, state, [Sample(metric="a", value=1.0)])
    changes = [
        {"status": "down", "reason": None},
        {"reason": "another"},
        {"server": None},
        {"summary": TargetSummary(groups=5, stalled_groups=1, queue_length=2, qps=12.5)},
        # The same figures as other types (model_copy does not validate): written as such.
        {
            "summary": TargetSummary(groups=4, stalled_groups=0, queue_length=0, qps=12.5).model_copy(
                update={"stalled_groups": False}
            )
        },
        {"last_poll_at": 5},
        {"collectors": [statuses[1], CollectorStatus(name="global_status", ok=False, error="gone")]},
        {"tags": {"role": "primary"}},
    ]
    for update in changes:
        changed = base_info(**update)
        assert_same(encoder, changed, state, [Sample(metric="a", value=2.0)])
    # The state's statuses apart from the info's (not the same list): each its own.
    other = TargetState(target="db", ts=T0, status="up", collectors=[CollectorStatus(name="x", ok=True)])
    assert_same(encoder, info, other, [])


def test_a_target_keeps_only_its_own_texts():
    encoder = LatestJson()
    shared = Sample(metric="m", value=1.0)
    for i in range(6):
        for target in ("a", "b"):
            # Same length, the shared object at another place for b, a new value at the end.
            one = [shared, Sample(metric="n", value=float(i))]
            samples = one if target == "a" else one[::-1]
            assert encoder.samples(target, samples) == SAMPLES.dump_json(samples).decode()


def _state(collectors: list[CollectorStatus], **parts) -> TargetState:
    state = TargetState(target="db", ts=T0, status="up", **parts)
    state.collectors = collectors  # the info's own list, as a poll's (cut from the info's text)
    return state


def test_kept_state_parts_follow_every_change():
    """The state's parts kept per target (Spliced): the same objects keep their text; a new
    object, another wait at one place, other variables or None are encoded again; a target
    forgotten and polled again starts afresh; each target keeps its own."""
    encoder = LatestJson()
    info = base_info()
    statuses = info.collectors
    threads = Threads(connected=3, running=1)
    transactions = Transactions(count=1, longest_age_s=2.5, items=[])
    pool = PoolSummary(kind="mariadb", size=4, stall_limit_raw='500 ",\\"sessions\\":"')
    waits = [WaitReason(reason="NET", count=3, per_s=0.5), WaitReason(reason="SYNC", count=0)]
    variables = {"thread_pool_size": "4", "version": '10.11 ","pool":'}
    parts = dict(threads=threads, transactions=transactions, pool=pool, waits=waits, variables=variables)
    steps = [
        parts,
        # The same objects in new lists and an equal new dict: kept texts.
        {**parts, "waits": list(waits), "variables": dict(variables)},
        {**parts, "threads": Threads(connected=4, running=1)},
        {**parts, "waits": [waits[0], WaitReason(reason="SYNC", count=1, per_s=0.25)]},
        {**parts, "waits": waits[:1]},
        {**parts, "variables": {**variables, "thread_pool_size": "8"}},
        # Equal values in another order encode differently: not kept.
        {**parts, "variables": dict(reversed(variables.items()))},
        {**parts, "pool": None, "transactions": None},
        {**parts, "pool": PoolSummary(kind="mariadb", size=8), "transactions": Transactions()},
        {**parts, "groups": [group_state(queue_length=2)]},
        parts,
    ]
    for step in steps:
        assert_same(encoder, info, _state(statuses, **step), [])
    # Forgotten (another member polls it now): nothing is kept for it; back with other parts.
    encoder.forget("db")
    assert "db" not in encoder._state._last
    assert_same(encoder, info, _state(statuses, **{**parts, "threads": Threads(connected=9)}), [])
    # Each target its own: the same objects under another name, then other ones under the first.
    other = base_info(name="db2")
    assert_same(encoder, other, _state(other.collectors, **parts).model_copy(update={"target": "db2"}), [])
    assert set(encoder._state._last) == {"db", "db2"}
    assert_same(encoder, info, _state(statuses, **{**parts, "pool": None}), [])


def test_a_kept_field_needs_a_field_after_it():
    with pytest.raises(ValueError, match="after it"):
        Spliced(TargetState, {"missing_privileges": lambda last, value: last is value})
