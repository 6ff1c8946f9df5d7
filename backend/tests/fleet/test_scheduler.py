"""The scheduler in a fleet, on replayed fixture targets and a real store: set_targets keeps an
unchanged target's poller and poll loop, restarts a changed one, stops a removed one and starts an
added one; with leases it polls exactly the targets whose lease it holds, and stops by itself when
a lease lapses. The scheduler and the lease keepers run on a test clock (tests/clock.py)."""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import text

from poolscope.config import Settings, TargetConfig
from poolscope.fleet.leases import LeaseKeeper
from poolscope.poller.scheduler import MAINTENANCE_LEASE, Scheduler
from poolscope.schemas import PollEvent
from poolscope.store.head import readable_samples_sql
from tests.clock import FakeClock
from tests.fleet.stalls import poll_times

DSN = "fixture://percona/8.4.10"
TTL_S = 8.0


@pytest.fixture
def store(store):  # type: ignore[no-untyped-def]
    """tests/fleet/conftest.py's store, its writer batching for 10 ms (not 150): the polls of one
    instant of the test clock are submitted together anyway, and each instant waits for its batch."""
    store.writer.max_delay_s = 0.01
    return store


def target(name: str, **values: object) -> TargetConfig:
    return TargetConfig(name=name, dsn=DSN, **values)


async def polls_during(store, clock: FakeClock, scheduler: Scheduler, seconds: float) -> Counter[str]:
    """Poll events per target seen on the store's hub while the clock moves `seconds` on."""
    seen: Counter[str] = Counter()
    async with store.hub.subscribe() as queue:
        await clock.settle(*scheduler._tasks.values())  # loops just started: their first poll made
        await clock.advance(seconds)
        await store.writer.flush()  # the store is a consumer that may lag: its writes are done
        while not queue.empty():
            event = queue.get_nowait()
            if isinstance(event, PollEvent):
                seen[event.target] += 1
    return seen


def kept_for(store) -> set[str]:
    """Targets the store keeps anything for, to write their polls (store/ingest.py, store/latest.py)."""
    ingest, latest = store.samples, store.latest_rows
    return set(ingest._ids) | set(latest._mine) | set(latest._mine_json) | set(latest._mine_fp)


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
    clock = FakeClock()
    settings = Settings(poll_interval_s=0.2, targets=[target("a"), target("b"), target("c")])
    scheduler = Scheduler(settings, store, clock=clock)
    scheduler.start()
    try:
        assert await polls_during(store, clock, scheduler, 0.4) == dict.fromkeys("abc", 2)
        poller_a, task_a, poller_b = scheduler.by_name["a"], scheduler._tasks["a"], scheduler.by_name["b"]
        snapshot_view = scheduler.by_name  # what the snapshot service holds

        await scheduler.set_targets([target("a"), target("b", connect_timeout_s=2.0), target("d")])

        assert scheduler.by_name is snapshot_view and list(snapshot_view) == ["a", "b", "d"]
        assert scheduler.by_name["a"] is poller_a and scheduler._tasks["a"] is task_a and not task_a.done()
        assert (
            scheduler.by_name["b"] is not poller_b and scheduler.by_name["b"].config.connect_timeout_s == 2.0
        )
        assert scheduler.polling() == {"a", "b", "d"}
        seen = await polls_during(store, clock, scheduler, 0.4)
        assert set(seen) == {"a", "b", "d"} and min(seen.values()) >= 2, seen
    finally:
        await scheduler.stop()
    assert not scheduler.polling()


async def test_a_target_no_longer_polled_leaves_nothing_kept_for_it_and_is_stored_again_when_back(store):
    clock = FakeClock()
    settings = Settings(poll_interval_s=0.2, targets=[target("a"), target("b")])
    scheduler = Scheduler(settings, store, clock=clock)
    scheduler.start()
    try:
        await polls_during(store, clock, scheduler, 0.4)
        assert kept_for(store) == {"a", "b"}

        await scheduler.set_targets([target("a")])
        assert kept_for(store) == {"a"}
        assert (await store.latest("b")) is not None  # read from the store now, not from memory
        before = await stored_samples(store, "b")

        # Back: its series ids are read from the store again and its polls stored as before.
        await scheduler.set_targets([target("a"), target("b")])
        assert (await polls_during(store, clock, scheduler, 0.4))["b"] >= 2
        assert kept_for(store) == {"a", "b"}
        assert await stored_samples(store, "b") > before
    finally:
        await scheduler.stop()
    assert kept_for(store) == set()


async def test_it_polls_the_targets_whose_lease_it_holds_and_stops_when_a_lease_lapses(store):
    clock = FakeClock()
    names = [f"t{i}" for i in range(6)]
    settings = Settings(poll_interval_s=0.5, targets=[target(n) for n in names])
    a = LeaseKeeper(
        store.engine,
        "a",
        lambda: scheduler.target_names(),
        ttl_s=TTL_S,
        clock=clock,
        store_clock=clock.store_now,
    )
    scheduler = Scheduler(settings, store, ownership=a, clock=clock)
    a.add_listener(scheduler.on_ownership)
    b = LeaseKeeper(
        store.engine,
        "b",
        lambda: [*names, MAINTENANCE_LEASE],
        ttl_s=TTL_S,
        clock=clock,
        store_clock=clock.store_now,
    )
    scheduler.start()
    try:
        assert not scheduler.polling()  # no lease yet: nothing is polled
        await a.cycle()
        assert scheduler.polling() == set(names)
        # b joins: its share is still leased to a; a sees b and gives b's share up (stopping its
        # loops first); b takes it.
        await b.cycle()
        assert not b.held()
        await a.cycle()
        renewed_at = clock.monotonic()
        await b.cycle()
        assert a.held() and b.held() and not a.held() & b.held()
        assert a.held() | b.held() == {*names, MAINTENANCE_LEASE}
        assert scheduler.polling() == a.held() - {MAINTENANCE_LEASE}
        mine = a.held() - {MAINTENANCE_LEASE}
        seen = await polls_during(store, clock, scheduler, 1.0)
        assert set(seen) == mine and min(seen.values()) >= 2, seen
        assert kept_for(store) <= mine  # nothing kept for the targets given up to b

        # a stops renewing (its store unreachable, say): its loops end once the lease's local
        # deadline passes, before the store lets anyone else take the targets.
        left = renewed_at + TTL_S - a.margin_s - clock.monotonic()
        polled = await polls_during(store, clock, scheduler, left - 0.1)
        assert (
            set(polled) == mine
            and scheduler.polling() == mine
            and a.held() == mine | (a.held() & {MAINTENANCE_LEASE})
        )
        await clock.advance(0.1)
        assert not a.held()
        assert not await polls_during(store, clock, scheduler, 1.0)
        assert not scheduler.polling()
    finally:
        await scheduler.stop()
        await a.stop()
        await b.stop()


async def test_two_members_on_one_clock_hand_a_silent_members_targets_over_never_polling_one_twice(store):
    """Both members run as in a poller process (lease rounds and poll loops in the background), on
    one test clock: the instants of every poll, and which member made it, are the same each run."""
    clock = FakeClock()
    names = [f"t{i}" for i in range(6)]
    settings = Settings(poll_interval_s=0.5, targets=[target(n) for n in names])
    polls: list[tuple[float, str, str]] = []  # (instant, member, target)
    keepers: dict[str, LeaseKeeper] = {}
    schedulers: list[Scheduler] = []
    for node in ("a", "b"):
        keeper = keepers[node] = LeaseKeeper(
            store.engine,
            node,
            lambda: [*names, MAINTENANCE_LEASE],
            ttl_s=TTL_S,
            clock=clock,
            store_clock=clock.store_now,
        )
        scheduler = Scheduler(settings, store, ownership=keeper, clock=clock)
        schedulers.append(scheduler)
        keeper.add_listener(scheduler.on_ownership)
        for poller in scheduler.by_name.values():

            async def recorded(poll_once=poller.poll_once, node=node, name=poller.name):  # type: ignore[no-untyped-def]
                polls.append((clock.monotonic(), node, name))
                return await poll_once()

            poller.poll_once = recorded  # type: ignore[method-assign]
        scheduler.start()
        keeper.start()
        assert keeper._task is not None
        await clock.settle(keeper._task)
    a, b = keepers["a"], keepers["b"]
    try:
        await clock.advance(2 * a.renew_s)  # b's share moves to b
        assert a.held() and b.held() and not a.held() & b.held()
        assert a.held() | b.held() == {*names, MAINTENANCE_LEASE}

        # a falls silent (its store unreachable, say): no more rounds, its poll loops go on.
        assert a._task is not None
        a._task.cancel()
        silent_at = clock.monotonic()
        a_share = a.held() - {MAINTENANCE_LEASE}
        await clock.advance(TTL_S + 2 * b.renew_s)
        assert not a.held() and b.held() == {*names, MAINTENANCE_LEASE}
    finally:
        for scheduler in schedulers:
            await scheduler.stop()
        for keeper in keepers.values():
            await keeper.stop()
    # Per target, one member at a time: a's polls of its share, then b's, never interleaved, and
    # b's first within a TTL and a round of a's last renewal.
    for name in a_share:
        by = [(at, node) for at, node, target_name in polls if target_name == name]
        first_b = next(at for at, node in by if node == "b" and at > silent_at)
        assert all(at < first_b for at, node in by if node == "a" and at > silent_at - 2 * a.renew_s)
        assert first_b - silent_at <= TTL_S + b.renew_s + settings.poll_interval_s
    # Every instant, each target polled at most once.
    assert len(polls) == len({(at, name) for at, _, name in polls})


class Judge:
    """Records what it judges; raises on the polls numbered in `failing`."""

    def __init__(self, failing: tuple[int, ...] = ()) -> None:
        self.judged: list[tuple[str, float]] = []
        self.failing = failing

    async def evaluate(self, event: PollEvent) -> None:
        self.judged.append((event.target, event.ts))
        if len(self.judged) in self.failing:
            raise RuntimeError("a rule broke")

    async def take_over(self, targets) -> None:  # type: ignore[no-untyped-def]
        pass

    async def hand_over(self, targets) -> None:  # type: ignore[no-untyped-def]
        pass


async def test_each_poll_reaches_the_live_hub_the_judge_and_the_store_whichever_of_them_fails(store, caplog):
    """Where a poll goes (poller/scheduler.py): to the hub, the judge and the store in turn, from
    the target's loop; one that fails keeps it from no other, and the store failing keeps it
    from neither the live view nor the alert engine."""
    clock = FakeClock()
    settings = Settings(poll_interval_s=0.5, targets=[target("a")])
    judge = Judge(failing=(2,))
    scheduler = Scheduler(settings, store, judge=judge, clock=clock)
    published = store.hub.publish
    told: list[float] = []

    def publish(event) -> None:  # type: ignore[no-untyped-def]
        told.append(event.ts)
        if len(told) == 3:
            raise RuntimeError("a subscriber broke")
        published(event)

    store.hub.publish = publish  # type: ignore[method-assign]
    scheduler.start()
    try:
        await clock.settle(*scheduler._tasks.values())
        await clock.advance(2.0)
        assert len(told) == 5 and [ts for _, ts in judge.judged] == told
        await store.writer.flush()
        assert await poll_times(store, "a") == told
        assert "a rule broke" in caplog.text and "telling live subscribers of the poll failed" in caplog.text

        # The store cannot take writes (a table gone): the polls are still judged and published,
        # and held for the store (store/writer.py).
        async with store.engine.begin() as conn:
            await conn.execute(text("DROP TABLE target_latest"))
        await clock.advance(1.0)
        await store.writer.flush()
        assert len(told) == 7 and len(judge.judged) == 7
        assert store.health.failing and store.writer.buffered_polls == 2
        assert "store unreachable (writing polls)" in caplog.text
    finally:
        await scheduler.stop()
