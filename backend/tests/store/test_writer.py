"""The batch writer (store/writer.py) on SQLite and a real PostgreSQL: many targets' polls share a
commit, a failing poll loses only itself, and stop() stores everything it accepted."""

import asyncio

from poolscope.schemas import Sample, TargetInfo, TargetState
from tests.stores import make_store
from tests.waiting import await_for

T0 = 1_800_000_000.0


def poll_args(target, ts, value):
    info = TargetInfo(name=target, status="up", poll_interval_s=1.0)
    state = TargetState(target=target, ts=ts, status="up")
    samples = [
        Sample(metric="threads_running", value=value),
        Sample(metric="tp_group_queue_length", labels={"group": "0"}, value=value * 2),
    ]
    return info, state, samples, ts


async def stored(store, target, metric="threads_running"):
    out = await store.query(target, [metric], T0 - 10, T0 + 100, points=1000)
    return [v for s in out.series for _, v in s.points]


async def test_many_targets_polls_land_in_one_batch(store_url):
    store = make_store(store_url)
    store.writer.max_delay_s = 0.5  # time enough for every submit to join the first batch
    names = [f"db{i}" for i in range(30)]
    await asyncio.gather(*(store.writer.submit(*poll_args(n, T0, float(i))) for i, n in enumerate(names)))
    assert store.writer.batches_written == 1
    for i, name in enumerate(names):
        assert await stored(store, name) == [float(i)]
        assert await stored(store, name, "tp_group_queue_length") == [float(i) * 2]
        assert (await store.latest(name))[1].ts == T0
    await store.close()


async def test_a_failing_poll_loses_only_itself(store_url):
    store = make_store(store_url)
    await store.writer.submit(*poll_args("db0", T0, 1.0))
    store.writer.max_delay_s = 0.5
    # db0 again at the same second: its samples collide with the stored ones, failing the batch.
    results = await asyncio.gather(
        store.writer.submit(*poll_args("db0", T0, 9.0)),
        *(store.writer.submit(*poll_args(f"db{i}", T0, float(i))) for i in range(1, 6)),
        return_exceptions=True,
    )
    assert isinstance(results[0], Exception)
    assert results[1:] == [None] * 5
    for i in range(1, 6):
        assert await stored(store, f"db{i}") == [float(i)]
    assert await stored(store, "db0") == [1.0]  # the first poll, unchanged
    # The writer goes on: the next batch lands.
    await store.writer.submit(*poll_args("db0", T0 + 1, 2.0))
    assert await stored(store, "db0") == [1.0, 2.0]
    await store.close()


async def test_stop_stores_everything_accepted(store_url):
    store = make_store(store_url)
    store.writer.max_delay_s = 30.0  # nothing would be flushed by time during this test
    tasks = [asyncio.create_task(store.writer.submit(*poll_args(f"db{i}", T0, float(i)))) for i in range(10)]
    # Every poll queued (two samples each), none written: the delay is far off.
    await await_for(
        lambda: store.writer._pending_rows, 5, "not every poll queued", until=lambda rows: rows == 20
    )
    assert not any(t.done() for t in tasks)
    tasks[0].cancel()  # a caller that gave up (the scheduler stopping) still gets its poll stored
    await store.close()
    assert all(t.done() for t in tasks)
    reopened = make_store(store_url)
    for i in range(10):
        assert await stored(reopened, f"db{i}") == [float(i)]
    await reopened.close()


async def test_submit_after_stop_writes_at_once(store_url):
    store = make_store(store_url)
    await store.writer.stop()
    await store.writer.submit(*poll_args("db1", T0, 4.0))
    assert await stored(store, "db1") == [4.0]
    await store.close()


async def test_a_full_batch_does_not_wait_for_its_delay(store_url):
    store = make_store(store_url)
    store.writer.max_delay_s = 600.0  # only the row cap can flush these batches in time
    store.writer.max_rows = 4  # two polls of two samples
    submits = [store.writer.submit(*poll_args(f"db{i}", T0, float(i))) for i in range(6)]
    await asyncio.wait_for(asyncio.gather(*submits), timeout=60)
    assert store.writer.batches_written == 3
    for i in range(6):
        assert await stored(store, f"db{i}") == [float(i)]
    await store.close()
