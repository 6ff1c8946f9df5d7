"""Sample rows of polls as they come (store/ingest.py SampleIngest): polls that share Sample
objects between targets, swap a series for another at the same place, change their number of
samples and come back, or carry a non-finite value, store exactly what each sample says."""

import asyncio
import math
import random

from poolscope.poller.collectors.base import sample
from poolscope.schemas import Sample, TargetInfo
from poolscope.store.ingest import Poll, canonical_labels
from tests.fleet.test_scheduler import kept_for
from tests.store.test_ingest import T0, stored_rows
from tests.stores import make_store
from tests.waiting import await_for

TARGETS = ("db-a", "db-b")


def expected(polls: list[Poll]) -> list[tuple]:
    """What the store must hold: every sample of every poll, non-finite values as NULL."""
    rows = []
    for poll in polls:
        for s in poll.samples:
            value = s.value if s.value is not None and math.isfinite(s.value) else None
            rows.append((poll.info.name, s.metric, canonical_labels(s.labels), poll.ts, value))
    return sorted(rows)


def mixed_polls(rounds: int, seed: int) -> list[list[Poll]]:
    """Rounds of both targets' polls: most samples the very objects of the last round (and of the
    other target), some new values, a series swapped for another in place, a slower source's
    samples on some rounds only, reused infinities and fresh NaNs, labels built in either order."""
    rng = random.Random(seed)
    infos = {t: TargetInfo(name=t, status="up", poll_interval_s=1.0) for t in TARGETS}
    base = [sample("threads_running", 1.0), sample("qps", 12.5), sample("tp_queue_wait_max_ms", math.inf)]
    base += [sample("tp_group_queue_length", 0.0, group=str(g), kind="pool") for g in range(3)]
    out = []
    for i in range(rounds):
        polled = []
        for target in TARGETS:
            samples = list(base)
            if rng.random() < 0.5:  # a new value in a new object
                samples[1] = Sample(metric="qps", value=round(rng.uniform(0, 100), 3))
            if rng.random() < 0.3:  # another series in the same place (same number of samples)
                samples[0] = sample("threads_cached", float(i))
            if rng.random() < 0.3:  # labels in the other order: the same series
                samples[4] = Sample(
                    metric="tp_group_queue_length",
                    labels={"kind": "pool", "group": "1"},
                    value=float(rng.randint(0, 2)),
                )
            if rng.random() < 0.4:  # a slower source's samples, on some polls only
                samples += [sample("buffer_pool_pages", 4056.0, pool="0"), sample("sessions_active", 0.0)]
            if rng.random() < 0.2:
                samples.append(Sample(metric="tp_queue_wait_avg_ms", value=math.nan))
            samples.append(Sample(metric="poll_duration_ms", value=round(rng.uniform(1, 3), 3)))
            polled.append(Poll(infos[target], None, samples, T0 + i))
        out.append(polled)
    return out


async def test_polls_reusing_samples_store_what_each_sample_says(store_url):
    store = make_store(store_url)
    rounds = mixed_polls(40, seed=12)
    try:
        for polled in rounds:
            await store.write_polls(polled)
        got = await stored_rows(store)
    finally:
        await store.close()
    want = expected([p for polled in rounds for p in polled])
    assert got == want
    # Polls of several lengths: a slower source's samples on some of them.
    assert len({len(p.samples) for polled in rounds for p in polled}) >= 3


async def test_a_swapped_series_goes_to_its_own_series(store_url):
    store = make_store(store_url)
    info = TargetInfo(name="db-a", status="up", poll_interval_s=1.0)
    shared = sample("qps", 5.0)
    polls = [
        Poll(info, None, [sample("threads_running", 2.0), shared], T0),
        Poll(info, None, [sample("threads_cached", 2.0), shared], T0 + 1),  # same length, same value
        Poll(info, None, [sample("threads_running", 2.0), shared], T0 + 2),
    ]
    try:
        for poll in polls:
            await store.write_polls([poll])
        got = await stored_rows(store)
    finally:
        await store.close()
    assert got == expected(polls)
    assert [r[1] for r in got if r[3] == T0 + 1] == ["qps", "threads_cached"]


async def test_a_target_forgotten_while_its_batch_is_written_is_forgotten_once_it_is_written(store_url):
    """forget() during a write that holds the target's poll (a poll cancelled after its write began)
    takes effect after that write: the write would otherwise put the target's series ids back."""
    store = make_store(store_url)
    try:
        polls = mixed_polls(2, seed=7)
        await store.write_polls(polls[0])
        assert kept_for(store) == set(TARGETS)
        previous: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        writing = asyncio.create_task(store.write_polls(polls[1], after=previous))
        await await_for(
            lambda: store.samples._ids.get("db-a") is not None and not writing.done() and store._writing,
            2,
            "the write never waited for the batch before it",
            0.01,
        )
        store.forget("db-a")
        previous.set_result(None)
        await asyncio.wait_for(writing, 30)
        assert kept_for(store) == {"db-b"}
        assert sorted(await stored_rows(store)) == expected(polls[0] + polls[1])
    finally:
        await store.close()
