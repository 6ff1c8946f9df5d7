"""Leases in a real store (SQLite and PostgreSQL): members split the targets by rendezvous hash with
no overlap, a member that stops heartbeating loses its targets to the others within the TTL, and
no target is ever held by two members, even while members come and go.

What waits on time (a TTL running out, rounds every renew interval) runs on a test clock
(tests/clock.py) that both the members and the store's expiry read.
"""

from __future__ import annotations

import asyncio
import os
import random

import pytest
from sqlalchemy import select

from poolscope.fleet.leases import HANDOFF_ROUNDS, DuplicateNodeId, LeaseKeeper, rendezvous_owner
from poolscope.fleet.tables import fleet_members, target_leases
from poolscope.store.sql import SqlStore
from tests.clock import FakeClock

TARGETS = [f"db{i:03d}" for i in range(40)]
TTL_S = 2.5


def keeper(store: SqlStore, node: str, clock: FakeClock | None = None) -> LeaseKeeper:
    """A member on the real clocks (this host's, the store's), or on `clock` for both."""
    if clock is None:
        return LeaseKeeper(store.engine, node, lambda: TARGETS, ttl_s=TTL_S)
    return LeaseKeeper(
        store.engine, node, lambda: TARGETS, ttl_s=TTL_S, clock=clock, store_clock=clock.store_now
    )


async def lease_rows(store: SqlStore) -> dict[str, str]:
    async with store.engine.connect() as conn:
        rows = await conn.execute(select(target_leases.c.target, target_leases.c.owner))
        return {row.target: row.owner for row in rows}


def test_rendezvous_moves_only_what_a_new_member_wins():
    before = {t: rendezvous_owner(t, ["a", "b"]) for t in TARGETS}
    after = {t: rendezvous_owner(t, ["a", "b", "c"]) for t in TARGETS}
    moved = {t for t in TARGETS if before[t] != after[t]}
    assert moved and all(after[t] == "c" for t in moved)
    assert {t for t in TARGETS if after[t] == "c"} == moved
    assert rendezvous_owner("db1", []) is None


async def test_two_members_split_the_targets_by_hash_with_no_overlap(store):
    a, b = keeper(store, "host-a:1"), keeper(store, "host-b:2")
    await a.cycle()
    assert a.held() == set(TARGETS)  # alone: everything
    await b.cycle()  # joins; what it wins is still leased to a
    assert not b.held()
    await a.cycle()  # sees b: gives b's share up
    await b.cycle()  # takes it
    expected_a = {t for t in TARGETS if rendezvous_owner(t, ["host-a:1", "host-b:2"]) == "host-a:1"}
    assert a.held() == expected_a and b.held() == set(TARGETS) - expected_a
    assert a.held() and b.held()
    rows = await lease_rows(store)
    assert {t for t, o in rows.items() if o == "host-a:1"} == expected_a
    assert {t for t, o in rows.items() if o == "host-b:2"} == set(TARGETS) - expected_a
    await a.stop()
    await b.stop()
    assert await lease_rows(store) == {}
    async with store.engine.connect() as conn:
        assert (await conn.execute(select(fleet_members))).all() == []


async def test_a_member_that_stops_heartbeating_loses_its_targets_within_the_ttl(store):
    clock = FakeClock()
    a, b = keeper(store, "host-a:1", clock), keeper(store, "host-b:2", clock)
    for member in (a, b, a, b):
        await member.cycle()
    a_share = a.held()
    assert a_share and b.held() == set(TARGETS) - a_share
    silent_at = clock.monotonic()  # a's last renewal was at this instant
    step = b.renew_s / 4
    for _ in range(int(3 * TTL_S / step)):  # bounded: well past the TTL
        await clock.advance(step)
        await b.cycle()
        assert not (a.held() & b.held()), "a target held by two members"
        if b.held() == set(TARGETS):
            break
    assert b.held() == set(TARGETS), "the silent member's targets never moved"
    # Dead once its heartbeat is more than a TTL old: the survivor's first round after that takes
    # its targets, and not one round before.
    assert clock.monotonic() - silent_at == pytest.approx((int(TTL_S / step) + 1) * step)
    assert not a.held()  # its own deadline passed before the store let b take them
    await b.stop()


async def test_a_lease_is_never_held_by_two_while_members_come_and_go(store):
    clock = FakeClock()
    members = [keeper(store, f"host-{n}:{n}", clock) for n in "abc"]
    running: dict[str, asyncio.Task[None]] = {}
    rng = random.Random(12)
    overlaps: list[set[str]] = []
    ever: dict[str, int] = {}

    def check() -> None:
        held = [m.held() for m in members]
        for i, mine in enumerate(held):
            for other in held[i + 1 :]:
                if mine & other:
                    overlaps.append(mine & other)
            for t in mine:
                ever[t] = ever.get(t, 0) + 1

    async def checked(gained: set[str], lost: set[str]) -> None:
        check()  # the instant a member's leases changed

    async def cycling(member: LeaseKeeper) -> None:
        for _ in range(1000):  # bounded; cancelled by the churn
            await member.cycle()
            await clock.sleep(member.renew_s)

    for member in members:
        member.add_listener(checked)
    end = clock.monotonic() + 4 * TTL_S
    while clock.monotonic() < end:  # bounded in (the test clock's) time
        member = rng.choice(members)
        if member.node_id in running and len(running) > 1:
            # Half stop cleanly, half fall silent (as if killed): both must stay safe.
            task = running.pop(member.node_id)
            task.cancel()
            if rng.random() < 0.5:
                await member.stop()
                member._stopping.clear()
        else:
            running[member.node_id] = task = asyncio.create_task(cycling(member))
            await clock.settle(task)  # its first round is done
        for _ in range(rng.randint(4, 16)):  # 0.2 to 0.8 s, looked at every 50 ms
            await clock.advance(0.05)
            check()
    for task in running.values():
        task.cancel()
    for member in members:
        await member.stop()
    assert not overlaps, overlaps[:3]
    assert len(ever) == len(TARGETS), "some target was never held at all"


class SlowStoreKeeper(LeaseKeeper):
    """A member whose store takes most of a renew interval to answer each heartbeat (SQLite's
    write lock held by a busy poller's batch)."""

    async def _heartbeat(self, conn, now):  # type: ignore[no-untyped-def]
        await self.clock.sleep(self.renew_s * 1.2)
        await super()._heartbeat(conn, now)


async def test_a_slow_store_round_does_not_let_the_leases_lapse(store):
    clock = FakeClock()
    member = SlowStoreKeeper(
        store.engine, "host-a:1", lambda: TARGETS, ttl_s=3.0, clock=clock, store_clock=clock.store_now
    )
    member.start()
    try:
        assert member._task is not None
        await clock.settle(member._task)  # in its first round's slow heartbeat
        await clock.advance(member.renew_s * 1.2)
        assert member.held() == set(TARGETS)
        # Rounds counted from their end came every 2.2 renew intervals, past the deadline
        # (ttl - margin = 2.5 intervals after a round's start) once the round itself was slow.
        lapsed = []
        for _ in range(int(4 * member.ttl_s / 0.05)):
            await clock.advance(0.05)
            if member.held() != set(TARGETS):
                lapsed.append(clock.monotonic())
        assert lapsed == []
    finally:
        await member.stop()


async def test_a_second_process_under_a_live_members_node_id_polls_nothing(store):
    # One shared config with node_id set gives every host the same name: the second process must
    # not take the name's leases as its own (both would poll every target), nor free them at stop.
    first = keeper(store, "poller-1")
    await first.cycle()
    assert first.held() == set(TARGETS)
    twin = keeper(store, "poller-1")
    twin._pid += 1  # another process (same host here; another host or pid in real life)
    with pytest.raises(DuplicateNodeId, match="in use by"):
        await twin.cycle()
    assert not twin.held()
    await twin.stop()
    assert await lease_rows(store) == dict.fromkeys(TARGETS, "poller-1")
    await first.cycle()  # the first keeps its name and its leases
    assert first.held() == set(TARGETS)
    await first.stop()
    assert await lease_rows(store) == {}


async def test_a_dead_processes_node_id_is_taken_over_once_its_heartbeat_is_old(store):
    clock = FakeClock()
    dead = keeper(store, "poller-1", clock)
    await dead.cycle()
    successor = keeper(store, "poller-1", clock)
    successor._pid = os.getppid()  # another process of this host, and a live one
    with pytest.raises(DuplicateNodeId):
        await successor.cycle()  # the dead one's heartbeat is still fresh
    await clock.advance(TTL_S)
    with pytest.raises(DuplicateNodeId):
        await successor.cycle()  # a TTL old, not older: still alive
    await clock.advance(0.25)
    await successor.cycle()
    assert successor.held() == set(TARGETS)
    with pytest.raises(DuplicateNodeId):
        await dead.cycle()  # come back to life: it is the duplicate now, and polls nothing
    await successor.stop()


async def test_a_handoff_is_over_within_a_fraction_of_a_renew_interval(store):
    """While a handoff is under way both members round HANDOFF_ROUNDS times faster: the new owner
    claims what was given up soon after, and the giver sees it taken soon after that, so a store
    failing meanwhile finds few targets in between (fleet/leases.py's docstring). b joins half an
    interval after a's round: at the normal pace its claim would come that much after a's give-up."""
    clock = FakeClock()
    a, b = keeper(store, "a", clock), keeper(store, "b", clock)
    step = 0.01
    a.start()
    try:
        await clock.settle(a._task)  # type: ignore[arg-type]
        assert a.held() == set(TARGETS)
        await clock.advance(a.renew_s / 2)
        b.start()
        share_b = {t for t in TARGETS if rendezvous_owner(t, ["a", "b"]) == "b"}
        released_at = claimed_at = over_at = None
        for _ in range(int(3 * TTL_S / step)):
            await clock.advance(step)
            assert not a.held() & b.held()
            now = clock.monotonic()
            if released_at is None and a.held() != set(TARGETS):
                released_at = now
            if claimed_at is None and b.held() == share_b:
                claimed_at = now
            if over_at is None and claimed_at is not None and not a.handing_over:
                over_at = now
                break
        assert released_at is not None and claimed_at is not None and over_at is not None
        quick = a.renew_s / HANDOFF_ROUNDS
        assert claimed_at - released_at <= quick + 2 * step, (released_at, claimed_at)
        assert over_at - claimed_at <= quick + 2 * step, (claimed_at, over_at)
        assert not b.handing_over
    finally:
        await b.stop()
        await a.stop()
