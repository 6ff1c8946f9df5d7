"""A fleet of two pollers while the store fails (store/writer.py, fleet/leases.py's grace), on a
real PostgreSQL and the test clock: stopped for three minutes, every target goes on being polled
by the poller that holds it, a stall is alerted (and its notifier told) during the outage, and
once the store is back every poll made is stored, once. One poller cut off from the store alone
(a partition): during the grace nobody takes its targets; past it, it stops before the other
starts, so no target is ever polled by two pollers at once (docs/decisions/0301-store-outage-grace.md)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator

import pytest
from sqlalchemy.engine import make_url

from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings
from poolscope.fleet.leases import rendezvous_owner
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.writer import RETRY_S
from poolscope_dev.pgsandbox import PostgresSandbox
from tests.clock import FakeClock
from tests.fleet import stalls
from tests.fleet.members import TTL_S, Member, run
from tests.fleet.proxy import Partition
from tests.stores import migrated_store
from tests.waiting import await_for

_databases = itertools.count()
INTERVAL_S = 1.0


def names_of(owner: str, count: int) -> list[str]:
    """Target names rendezvous hashing gives to `owner` among members a and b."""
    names = (f"t{i}" for i in itertools.count())
    return list(itertools.islice((n for n in names if rendezvous_owner(n, ["a", "b"]) == owner), count))


@contextlib.asynccontextmanager
async def fleet(
    server: PostgresSandbox, grace_s: float, stall: tuple[float, float] | None = None
) -> AsyncIterator[tuple[FakeClock, Member, Member, Partition, list[str]]]:
    """Members a (its store behind a Partition) and b on a fresh database, two targets each,
    leases settled; a's first target stalls during `stall` (seconds from now)."""
    url = server.create_database(f"poolscope_fleet_outage_{next(_databases)}")
    await asyncio.to_thread(upgrade_to_head, url)
    clock = FakeClock()
    script = stalls.use(stalls.StallScript(clock))
    names = names_of("a", 2) + names_of("b", 2)
    if stall is not None:
        script.stall(clock.monotonic() + stall[0], clock.monotonic() + stall[1])
    settings = Settings(
        poll_interval_s=INTERVAL_S,
        targets=[stalls.target(n) for n in names],
        alerts={"resolve_after_s": 2.0},
        store_outage_grace_s=grace_s,
    )
    partition = await Partition(server.host, server.port).start()
    a_url = make_url(url).set(port=partition.listen_port).render_as_string(hide_password=False)
    async with migrated_store(a_url) as a_store, migrated_store(url) as b_store:
        a, b = Member("a", a_store, clock, settings), Member("b", b_store, clock, settings)
        try:
            await a.start()
            await a.keeper.cycle()
            await b.start()
            await b.keeper.cycle()
            await a.keeper.cycle()  # gives b its share
            await b.keeper.cycle()
            assert set(a.scheduler.polling()) == set(names[:2]) and set(b.scheduler.polling()) == set(
                names[2:]
            )
            for member in (a, b):
                await clock.settle(*member.scheduler._tasks.values())
            yield clock, a, b, partition, names
        finally:
            for member in (a, b):
                with contextlib.suppress(Exception):
                    await member.close()
            await partition.close()
            if server.proc is None:
                await asyncio.to_thread(server.start)


async def written(clock: FakeClock, members: list[Member]) -> None:
    """Until every member wrote what it held (its retries come on the test clock)."""

    async def done() -> bool:
        if any(m.store.writer.holding or m.store.writer._unwritten for m in members):
            await run(clock, members, RETRY_S)
            return False
        return True

    await await_for(done, 120, "a poller never wrote what it held", every_s=0.05)


async def stored(member: Member, name: str) -> list[float]:
    return await stalls.poll_times(member.store, name)


def within(times: list[float], start: float, end: float) -> list[float]:
    return [t for t in times if start <= t < end]


async def test_a_three_minute_outage_loses_no_poll_and_polls_none_twice_and_alerts_during_it(
    stoppable_postgres,
):
    async with fleet(stoppable_postgres, grace_s=300, stall=(70, 80)) as (clock, a, b, _, names):
        await run(clock, [a, b], 10)
        down_at = clock.time()
        await asyncio.to_thread(stoppable_postgres.stop)
        await run(clock, [a, b], 180)
        up_at = clock.time()
        # During the outage: both know the store fails, and the stall was alerted and its
        # notifier told, from memory.
        assert a.store.health.failing and b.store.health.failing
        # (The recorded stall shows on every stalling target: each of a's fired, group by group.)
        fired = {(x.target, x.group) for x in a.recorder.notified if x.status == "firing"}
        assert fired == {(n, g) for n in names[:2] for g in ("0", "1")}, a.recorder.sent
        assert all(down_at < (x.fired_at or 0) < up_at for x in a.recorder.notified)
        for member, mine in ((a, names[:2]), (b, names[2:])):
            for name in mine:
                assert len(within(member.polls_of[name], down_at, up_at)) >= 179, name

        await asyncio.to_thread(stoppable_postgres.start)
        await run(clock, [a, b], 10)
        await written(clock, [a, b])
        assert not a.store.health.failing and not b.store.health.failing
        for name in names:
            made = sorted(a.polls_of[name] + b.polls_of[name])
            assert await stored(b, name) == made, f"{name}: a poll lost or stored twice"
            assert not (a.polls_of[name] and b.polls_of[name]), f"{name} polled by both"
            kept = within(made, down_at, up_at)
            assert len(kept) / (up_at - down_at) >= 0.99, (name, len(kept))
        stored_alerts = await AlertRepository(b.store.engine).history(target=names[0])
        assert sorted((x.group, x.status) for x in stored_alerts) == [("0", "resolved"), ("1", "resolved")]
        assert all(x.fired_at is not None and down_at < x.fired_at < up_at for x in stored_alerts)


async def test_a_poller_cut_off_keeps_its_targets_during_the_grace_and_nobody_takes_them(
    stoppable_postgres,
):
    async with fleet(stoppable_postgres, grace_s=300) as (clock, a, b, partition, names):
        await run(clock, [a, b], 5)
        cut_at = clock.time()
        partition.cut()
        await run(clock, [a, b], 100)
        mended_at = clock.time()
        assert a.store.health.failing and not b.store.health.failing
        assert "a" not in b.keeper.members, "b should see a as silent"
        for name in names[:2]:
            assert not b.polls_of[name], f"b polled {name} while a, cut off, still did"
            assert len(within(a.polls_of[name], cut_at, mended_at)) >= 99
        partition.mend()
        await run(clock, [a, b], 5)
        await written(clock, [a, b])
        assert "a" in b.keeper.members and set(a.scheduler.polling()) == set(names[:2])
        for name in names:
            assert await stored(b, name) == sorted(a.polls_of[name] + b.polls_of[name])


async def test_past_the_grace_the_cut_off_poller_stops_before_another_takes_its_targets(
    stoppable_postgres,
):
    grace_s = 30.0
    async with fleet(stoppable_postgres, grace_s=grace_s) as (clock, a, b, partition, names):
        await run(clock, [a, b], 5)
        cut_at = clock.time()
        partition.cut()
        await run(clock, [a, b], 80)
        for name in names[:2]:
            last_by_a, first_by_b = max(a.polls_of[name]), min(b.polls_of[name])
            assert last_by_a < first_by_b, f"{name} polled by both at once"
            # The blind stretch is the lease's expiry, not more: b takes it as soon as it may.
            assert first_by_b - last_by_a <= TTL_S + 2 * INTERVAL_S + TTL_S / 3, (last_by_a, first_by_b)
            print(
                f"{name}: a's last poll {last_by_a - cut_at:.1f} s after the cut, b's first {first_by_b - cut_at:.1f} s"
            )
        partition.mend()
        await run(clock, [a, b], 10)
        await written(clock, [a, b])
        # What a polled while cut off is written once it is back: nothing lost, nothing twice.
        for name in names:
            assert await stored(b, name) == sorted(a.polls_of[name] + b.polls_of[name])


@pytest.fixture(autouse=True)
def _restarted(stoppable_postgres):  # type: ignore[no-untyped-def]
    """Whatever a test did to the server, the next finds it running."""
    yield
    if stoppable_postgres.proc is None:
        stoppable_postgres.start()
