"""The scheduler in a fleet, on replayed fixture targets and a real store: set_targets keeps an
unchanged target's poller and poll loop, restarts a changed one, stops a removed one and starts an
added one; with leases it polls exactly the targets whose lease it holds, and stops by itself when
a lease lapses."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from sqlalchemy import text

from poolscope.config import Settings, TargetConfig
from poolscope.fleet.leases import LeaseKeeper
from poolscope.poller.scheduler import MAINTENANCE_LEASE, Scheduler
from poolscope.schemas import PollEvent
from poolscope.store.head import readable_samples_sql

DSN = "fixture://percona/8.4.10"
# Long enough for several lease rounds on a loaded 2-core machine while the targets write to SQLite.
TTL_S = 8.0


def target(name: str, **values: object) -> TargetConfig:
    return TargetConfig(name=name, dsn=DSN, **values)


async def polls_during(store, seconds: float, until: set[str] | None = None) -> Counter[str]:
    """Poll events per target seen on the store's hub within `seconds` (or until each of `until`
    has been seen twice)."""
    seen: Counter[str] = Counter()
    async with store.hub.subscribe() as queue:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0 and not (until and all(seen[t] >= 2 for t in until)):
            try:
                event = await asyncio.wait_for(queue.get(), timeout=left)
            except TimeoutError:
                break
            if isinstance(event, PollEvent):
                seen[event.target] += 1
    return seen


def kept_for(store) -> set[str]:
    """Targets the store keeps anything for, to write their polls (store/ingest.py, store/latest.py)."""
    ingest, latest = store.samples, store.latest_rows
    return (
        set(ingest._layouts)
        | set(ingest._plain)
        | set(ingest._labeled)
        | set(ingest._ids)
        | set(latest._mine)
        | set(latest._mine_json)
        | set(latest._mine_fp)
        | set(latest._json._fingerprints)
        | set(latest._json._samples._last)
    )


async def stored_samples(store, name: str) -> int:
    async with store.engine.connect() as conn:
        result = await conn.execute(
            text(
                f"SELECT count(*) FROM {readable_samples_sql(store.dialect)} s"
                " JOIN series ON series.id = s.series_id WHERE series.target = :t"
            ),
            {"t": name},
        )
        return int(result.scalar() or 0)


async def test_set_targets_keeps_unchanged_targets_polling_and_restarts_only_what_changed(store):
    settings = Settings(poll_interval_s=0.2, targets=[target("a"), target("b"), target("c")])
    scheduler = Scheduler(settings, store)
    scheduler.start()
    try:
        assert set(await polls_during(store, 15, until={"a", "b", "c"})) == {"a", "b", "c"}
        poller_a, task_a, poller_b = scheduler.by_name["a"], scheduler._tasks["a"], scheduler.by_name["b"]
        snapshot_view = scheduler.by_name  # what the snapshot service holds

        await scheduler.set_targets([target("a"), target("b", connect_timeout_s=2.0), target("d")])

        assert scheduler.by_name is snapshot_view and list(snapshot_view) == ["a", "b", "d"]
        assert scheduler.by_name["a"] is poller_a and scheduler._tasks["a"] is task_a and not task_a.done()
        assert (
            scheduler.by_name["b"] is not poller_b and scheduler.by_name["b"].config.connect_timeout_s == 2.0
        )
        assert scheduler.polling() == {"a", "b", "d"}
        seen = await polls_during(store, 15, until={"a", "b", "d"})
        assert set(seen) == {"a", "b", "d"}, seen
    finally:
        await scheduler.stop()
    assert not scheduler.polling()


async def test_a_target_no_longer_polled_leaves_nothing_kept_for_it_and_is_stored_again_when_back(store):
    settings = Settings(poll_interval_s=0.2, targets=[target("a"), target("b")])
    scheduler = Scheduler(settings, store)
    scheduler.start()
    try:
        await polls_during(store, 15, until={"a", "b"})
        assert kept_for(store) == {"a", "b"}

        await scheduler.set_targets([target("a")])
        assert kept_for(store) == {"a"}
        assert (await store.latest("b")) is not None  # read from the store now, not from memory
        before = await stored_samples(store, "b")

        # Back: its series ids are read from the store again and its polls stored as before.
        await scheduler.set_targets([target("a"), target("b")])
        await polls_during(store, 15, until={"a", "b"})
        assert kept_for(store) == {"a", "b"}
        assert await stored_samples(store, "b") > before
    finally:
        await scheduler.stop()
    assert kept_for(store) == set()


async def test_it_polls_the_targets_whose_lease_it_holds_and_stops_when_a_lease_lapses(store):
    names = [f"t{i}" for i in range(6)]
    settings = Settings(poll_interval_s=0.5, targets=[target(n) for n in names])
    a = LeaseKeeper(store.engine, "a", lambda: scheduler.target_names(), ttl_s=TTL_S)
    scheduler = Scheduler(settings, store, ownership=a)
    a.add_listener(scheduler.on_ownership)
    b = LeaseKeeper(store.engine, "b", lambda: [*names, MAINTENANCE_LEASE], ttl_s=TTL_S)
    scheduler.start()
    try:
        assert not scheduler.polling()  # no lease yet: nothing is polled
        await a.cycle()
        assert scheduler.polling() == set(names)
        # b joins: a gives b's share up (stopping its loops first) and b takes it. Rounds repeat
        # until they agree, as the background loop would (bounded: a loaded machine is slow).
        for _ in range(10):
            await b.cycle()
            await a.cycle()
            if a.held() and b.held():
                break
        assert a.held() and b.held() and not a.held() & b.held()
        assert scheduler.polling() == a.held() - {MAINTENANCE_LEASE}
        mine = a.held() - {MAINTENANCE_LEASE}
        seen = await polls_during(store, 10, until=mine)
        assert set(seen) == mine, seen
        assert kept_for(store) <= mine  # nothing kept for the targets given up to b

        # a stops renewing (its store unreachable, say): its loops end before the leases expire.
        await asyncio.sleep(a.ttl_s)
        assert not a.held()
        assert not await polls_during(store, 1.0)
        assert not scheduler.polling()
    finally:
        await scheduler.stop()
        await a.stop()
        await b.stop()
