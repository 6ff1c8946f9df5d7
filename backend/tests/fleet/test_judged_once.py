"""Every stalled poll is judged exactly once, by the poller that made it (poller/scheduler.py,
alerts/engine.py): two poller processes on one store and one test clock, a recorded stall
(tests/fleet/stalls.py), and the target's lease moved in the middle of it. The poll in flight
while the lease moves is judged by the poller that made it; the new owner continues the alert
from the store's open alerts; so each stalled group fires once, never twice, never zero times.
Cases: a poller joining (at start-up while leases settle, and later), a poller leaving, a poller
killed (failover), and a config reload; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings
from poolscope.schemas import Alert
from poolscope.store.sql import SqlStore
from tests.clock import FakeClock
from tests.fleet import stalls
from tests.fleet.members import TTL_S, Member, run, stalling_name
from tests.stores import migrated_store
from tests.waiting import await_for

INTERVAL_S = 0.5
# Polls of the stalling target start on this grid (both schedulers are made at the clock's start).
SLOW_S = 0.3  # the poll in flight while the lease moves answers this long after it started


@contextlib.asynccontextmanager
async def fleet(
    store: SqlStore,
    name: str,
    stall: list[tuple[float, float]],
    slow_at: float | None = None,
) -> AsyncIterator[tuple[FakeClock, Member, Member]]:
    """Members a and b on `store` and a test clock; target `name` stalls during `stall` (from,
    to), and its poll at `slow_at` is in flight for SLOW_S: seconds from the clock's start."""
    clock = FakeClock()
    t0 = clock.monotonic()
    script = stalls.use(stalls.StallScript(clock))
    for start, end in stall:
        script.stall(t0 + start, t0 + end)
    if slow_at is not None:
        script.slow_at(t0 + slow_at, SLOW_S)
    settings = Settings(
        poll_interval_s=INTERVAL_S,
        targets=[stalls.target(name)],
        alerts={"resolve_after_s": 1.0},
        # A killed member is one this host cannot see dead (tests/fleet/test_store_outage.py has
        # the grace): its targets move once its lease expires.
        store_outage_grace_s=0,
    )
    async with migrated_store(store.url) as other:
        a, b = Member("a", store, clock, settings), Member("b", other, clock, settings)
        try:
            yield clock, a, b
        finally:
            for member in (a, b):
                with contextlib.suppress(Exception):
                    await member.close()


async def stopping_loop(member: Member, name: str) -> None:
    """Until the member's scheduler is stopping the target's loop (which waits for its poll)."""
    await await_for(lambda: name not in member.scheduler._tasks, 10, f"{member.node} never stopped {name}")


async def judged(store: SqlStore, target: str) -> list[Alert]:
    alerts = await AlertRepository(store.engine).history(target=target)
    return sorted(alerts, key=lambda a: (a.group or "", a.fired_at or 0))


async def assert_each_stall_fired_once(store: SqlStore, target: str, a: Member, b: Member) -> list[Alert]:
    """One group_stalled alert per stalled group, resolved; every stalled poll stored is covered
    by it; and no poll was made twice: one member's polls all come before the other's."""
    alerts = await judged(store, target)
    stalled = await stalls.stalled_polls(store, target)
    assert stalled, "the recorded stall was never seen: the scenario proves nothing"
    groups = sorted({group for _, group in stalled})
    assert [(x.rule, x.group) for x in alerts] == [("group_stalled", g) for g in groups], (a.polls, b.polls)
    for ts, group in stalled:
        (alert,) = [x for x in alerts if x.group == group]
        assert alert.fired_at is not None and alert.fired_at <= ts
        assert alert.resolved_at is None or ts <= alert.resolved_at, (ts, alert)
    assert all(x.status == "resolved" for x in alerts), (
        alerts,
        a.polls,
        b.polls,
        a.recorder.sent,
        b.recorder.sent,
        b.engine.current(),
    )
    # Pages: one firing and one resolution per group, whichever member sent them.
    sent = sorted(a.recorder.sent + b.recorder.sent)
    assert sent == sorted([(g, "firing") for g in groups] + [(g, "resolved") for g in groups]), sent
    stored = await stalls.poll_times(store, target)
    made = sorted(a.polls + b.polls)
    assert made == stored, "a poll made was not stored once, or one stored was made by no one"
    first, then = (
        (a.polls, b.polls) if a.polls and (not b.polls or a.polls[0] < b.polls[0]) else (b.polls, a.polls)
    )
    assert not then or max(first) < min(then), "two members polled the target in the same stretch"
    return alerts


@pytest.mark.parametrize("join_at", [1.0, 2.5], ids=["at-start-up", "later"])
@pytest.mark.parametrize("stall_s", [0.3, 2.0], ids=["only-in-flight", "straddling"])
async def test_a_joining_poller_takes_the_target_while_its_stalled_poll_is_in_flight(store, join_at, stall_s):
    """b joins while a's poll of the target is in flight and that poll shows the stall: a judges
    it (and fires), frees the lease, and b continues the alert and resolves it. `only-in-flight`:
    the stall shows in that poll alone (the issue's case: no alert at all before)."""
    name = stalling_name("b")
    stall = [(join_at - 0.4, join_at - 0.4 + stall_s)]
    async with fleet(store, name, stall, slow_at=join_at) as (clock, a, b):
        await a.start()
        await a.keeper.cycle()
        await clock.settle(*a.scheduler._tasks.values())
        await clock.advance(join_at)  # a's poll at join_at is in flight now
        assert a.polls and max(a.polls) < clock.time()

        await b.start()
        await b.keeper.cycle()  # b joins; a still holds the target
        handing = asyncio.create_task(a.keeper.cycle())  # a gives the target up: its loop stops first
        await stopping_loop(a, name)
        assert not handing.done(), "a freed the lease with its poll still in flight"
        await clock.advance(SLOW_S)  # the poll answers: a judges it, stores it, its loop ends
        await handing
        assert name not in a.keeper.held()
        fired = await judged(store, name)
        assert fired and {x.fired_at for x in fired} == {clock.time() - SLOW_S}, fired  # by a, at once

        await b.keeper.cycle()
        assert name in b.keeper.held()
        await clock.settle(*b.scheduler._tasks.values())
        await run(clock, [a, b], 6.0)
        await assert_each_stall_fired_once(store, name, a, b)
        assert {g for g, s in a.recorder.sent if s == "firing"} == {x.group for x in fired}


async def test_a_leaving_poller_judges_its_poll_in_flight_before_its_leases_are_free(store):
    name = stalling_name("a")
    async with fleet(store, name, [(1.6, 3.0)], slow_at=2.0) as (clock, a, b):
        await b.start()
        await b.keeper.cycle()  # alone: b holds every target
        await a.start()
        await clock.settle(*b.scheduler._tasks.values())
        await clock.advance(2.0)
        stopping = asyncio.create_task(b.stop())
        await stopping_loop(b, name)
        await clock.advance(SLOW_S)
        await stopping
        assert not b.keeper.held()
        await a.keeper.cycle()  # the rows are free: a takes the target at once
        assert name in a.keeper.held()
        await run(clock, [a], 6.0)
        await assert_each_stall_fired_once(store, name, a, b)


async def test_failover_continues_the_alert_of_a_killed_poller(store):
    """b fired and is killed mid-stall (its poll in flight dies with it); a takes the target once
    b's lease expires, continues the alert from the store and resolves it."""
    name = stalling_name("b")
    async with fleet(store, name, [(1.2, 12.0)], slow_at=2.0) as (clock, a, b):
        await b.start()
        await a.start()
        await b.keeper.cycle()
        await a.keeper.cycle()
        await clock.settle(*b.scheduler._tasks.values())
        await clock.advance(2.0)
        assert await judged(store, name), "b fired before it was killed"
        await b.kill()
        await run(clock, [a], 16.0)
        assert name in a.keeper.held()
        await assert_each_stall_fired_once(store, name, a, b)
        assert {s for _, s in b.recorder.sent} == {"firing"} and {s for _, s in a.recorder.sent} == {
            "resolved"
        }


async def test_a_config_reload_mid_stall_judges_the_poll_in_flight_and_continues_the_alert(store):
    """A changed target restarts with a fresh poller (and no stall memory); the poll in flight is
    judged first, and the alert goes on, not fired again."""
    name = stalling_name("a")
    async with fleet(store, name, [(1.6, 4.0)], slow_at=2.0) as (clock, a, b):
        await a.start()
        await a.keeper.cycle()
        await clock.settle(*a.scheduler._tasks.values())
        await clock.advance(2.0)
        changed = [stalls.target(name, connect_timeout_s=2.5)]
        reload = asyncio.create_task(a.scheduler.set_targets(changed))
        await stopping_loop(a, name)
        await clock.advance(SLOW_S)
        await reload
        assert a.scheduler.by_name[name].config.connect_timeout_s == 2.5
        await clock.settle(*a.scheduler._tasks.values())
        await run(clock, [a], 6.0)
        await assert_each_stall_fired_once(store, name, a, b)


@contextlib.asynccontextmanager
async def fresh_store(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SqlStore]:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('judged') / 'store.db'}"
    async with migrated_store(url) as store:
        yield store


MOVES = ("join", "leave", "kill", "reload")


# Derandomized, so every run tries the same examples; no shrinking, which took minutes per
# example here: a failure prints its example as generated.
@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.generate],
)
@given(
    windows=st.lists(
        st.tuples(st.floats(0.6, 7.0), st.floats(0.1, 3.0)).map(lambda w: (round(w[0], 2), round(w[1], 2))),
        min_size=1,
        max_size=2,
    ),
    move=st.sampled_from(MOVES),
    move_at=st.integers(2, 12).map(lambda k: k * INTERVAL_S),
    in_flight=st.booleans(),
)
async def test_every_stored_stalled_poll_is_covered_by_a_firing_alert(
    tmp_path_factory, windows, move, move_at, in_flight
):
    """The invariant, over recorded stalls and lease moves of every kind at any poll: for each
    stored poll whose stall verdict alerts, an alert of its group was firing at its time; one
    fingerprint never has two alerts open at once; and every poll made was stored once."""
    name = stalling_name("b" if move == "join" else "a")
    stall = [(start, start + length) for start, length in windows]
    slow_at = move_at if in_flight else None
    async with fresh_store(tmp_path_factory) as store, fleet(store, name, stall, slow_at) as (clock, a, b):
        await a.start()
        await a.keeper.cycle()
        await clock.settle(*a.scheduler._tasks.values())
        if move != "join":
            await b.start()
            await b.keeper.cycle()  # b is a member; the target is a's by the hash, and stays
            await a.keeper.cycle()
        await run(clock, [a, b], move_at)
        assert name in a.keeper.held()
        if move == "join":
            await b.start()
            await b.keeper.cycle()
            action = asyncio.create_task(a.keeper.cycle())
        elif move == "leave":
            action = asyncio.create_task(a.stop())
        elif move == "reload":
            action = asyncio.create_task(
                a.scheduler.set_targets([stalls.target(name, connect_timeout_s=2.5)])
            )
        else:
            await a.kill()
            action = asyncio.create_task(asyncio.sleep(0))
        if in_flight and move != "kill":
            await stopping_loop(a, name)
        await clock.advance(SLOW_S)
        await action
        await run(clock, [a, b], 14.0 + TTL_S)
        alerts = await judged(store, name)
        for ts, group in await stalls.stalled_polls(store, name):
            covering = [x for x in alerts if x.group == group and x.fired_at is not None and x.fired_at <= ts]
            assert any(x.resolved_at is None or ts <= x.resolved_at for x in covering), (ts, group, alerts)
        for group in {x.group for x in alerts}:
            spans = sorted(
                (x.fired_at or 0, x.resolved_at or float("inf")) for x in alerts if x.group == group
            )
            assert all(end < start for (_, end), (start, _) in zip(spans, spans[1:], strict=False)), spans
        assert all(x.status == "resolved" for x in alerts), alerts
        assert sorted(a.polls + b.polls) == await stalls.poll_times(store, name)
