"""The store fails while a fleet's leases are still settling at start-up (fleet/leases.py, issue 34),
on a real PostgreSQL and the test clock: poller a starts alone and takes every target, b joins,
a gives b its share, b claims it. Whichever round the store fails after, every target goes on being
polled through a 30 s outage, by one poller; once the store is back every poll made is stored once,
and no target is polled by both (docs/decisions/0301-store-outage-grace.md).

The one moment with no single answer, b's claim made and not yet seen by a, is asserted for what
it is: nothing lost, both poll b's share until the store is back, one round after it only b."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from poolscope.config import Settings
from poolscope.poller.scheduler import MAINTENANCE_LEASE
from poolscope.store.migrate import upgrade_to_head
from poolscope_dev.pgsandbox import PostgresSandbox
from tests.clock import FakeClock
from tests.fleet import stalls
from tests.fleet.members import Member, run
from tests.fleet.test_store_outage import INTERVAL_S, _databases, names_of, stored, within, written
from tests.stores import migrated_store

OUTAGE_S = 30.0


@contextlib.asynccontextmanager
async def starting(server: PostgresSandbox) -> AsyncIterator[tuple[FakeClock, Member, Member, list[str]]]:
    """Members a and b started on a fresh database, no lease round run yet; two targets each by
    the hash (names[:2] a's, names[2:] b's)."""
    url = server.create_database(f"poolscope_fleet_startup_{next(_databases)}")
    await asyncio.to_thread(upgrade_to_head, url)
    clock = FakeClock()
    stalls.use(stalls.StallScript(clock))
    names = names_of("a", 2) + names_of("b", 2)
    settings = Settings(
        poll_interval_s=INTERVAL_S,
        targets=[stalls.target(n) for n in names],
        store_outage_grace_s=300,
    )
    async with migrated_store(url) as a_store, migrated_store(url) as b_store:
        a, b = Member("a", a_store, clock, settings), Member("b", b_store, clock, settings)
        try:
            await a.start()
            await b.start()
            yield clock, a, b, names
        finally:
            for member in (a, b):
                with contextlib.suppress(Exception):
                    await member.close()
            if server.proc is None:
                await asyncio.to_thread(server.start)


def both(a: Member, b: Member, name: str, start: float, end: float) -> bool:
    return bool(within(a.polls_of[name], start, end) and within(b.polls_of[name], start, end))


# The lease rounds run before the store fails: a alone; b joined (a still holds all); a gave b
# its share (b not told yet); b claimed it (a not told yet).
SETTLING = {
    "a took every target": "a",
    "b joined": "ab",
    "a gave b its share": "aba",
    "b claimed its share": "abab",
}


@pytest.mark.parametrize("rounds", SETTLING.values(), ids=SETTLING.keys())
async def test_the_store_failing_while_leases_settle_loses_no_target(stoppable_postgres, rounds):
    async with starting(stoppable_postgres) as (clock, a, b, names):
        members = {"a": a, "b": b}
        for member in rounds:
            await members[member].keeper.cycle()
            for m in (a, b):
                await clock.settle(*m.scheduler._tasks.values())
        down_at = clock.time()
        await asyncio.to_thread(stoppable_postgres.stop)
        await run(clock, [a, b], OUTAGE_S)
        up_at = clock.time()
        assert a.store.health.failing and b.store.health.failing
        for name in names:
            polls = sorted(within(a.polls_of[name] + b.polls_of[name], down_at, up_at))
            assert len(set(polls)) >= 0.9 * OUTAGE_S / INTERVAL_S, (rounds, name, len(polls))
            if rounds != "abab":
                assert not both(a, b, name, down_at, up_at), f"{name} polled by both during the outage"
        if rounds == "abab":
            # b holds its share and polls it; a gave it up and never saw b take it, so polls it too.
            assert all(both(a, b, name, down_at, up_at) for name in names[2:])

        await asyncio.to_thread(stoppable_postgres.start)
        # One lease round of each after the store is back settles who polls what.
        await run(clock, [a, b], 3)
        settled_at = clock.time()
        await run(clock, [a, b], 10)
        await written(clock, [a, b])
        assert set(a.scheduler.polling()) == set(names[:2]) and set(b.scheduler.polling()) == set(names[2:])
        for name in names:
            assert not both(a, b, name, settled_at, clock.time()), f"{name} polled by both after the outage"
            made = sorted(a.polls_of[name] + b.polls_of[name])
            assert len(made) == len(set(made))
            assert await stored(b, name) == made, f"{name}: a poll lost or stored twice"


async def test_a_handoff_rounds_again_at_once_until_it_is_over(stoppable_postgres):
    """The moment above (b's claim not yet seen by a) lasts a fraction of a renew interval: both
    members round HANDOFF_ROUNDS times faster while a handoff is under way, and no longer after."""
    async with starting(stoppable_postgres) as (_clock, a, b, names):
        await a.keeper.cycle()
        assert not a.keeper.handing_over
        await b.keeper.cycle()
        assert b.keeper.handing_over, "b's share is still a's"
        await a.keeper.cycle()
        assert a.keeper.handing_over, "b has not taken its share yet"
        await b.keeper.cycle()
        assert not b.keeper.handing_over and b.keeper.held() - {MAINTENANCE_LEASE} == set(names[2:])
        await a.keeper.cycle()
        assert not a.keeper.handing_over and a.keeper.held() - {MAINTENANCE_LEASE} == set(names[:2])


@pytest.fixture(autouse=True)
def _restarted(stoppable_postgres):  # type: ignore[no-untyped-def]
    yield
    if stoppable_postgres.proc is None:
        stoppable_postgres.start()
