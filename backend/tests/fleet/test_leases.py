"""Leases in a real store (SQLite and PostgreSQL): members split the targets by rendezvous hash with
no overlap, a member that stops heartbeating loses its targets to the others within the TTL, and
no target is ever held by two members, even while members come and go."""

from __future__ import annotations

import asyncio
import random
import time

import pytest
from sqlalchemy import select

from poolscope.fleet.leases import DuplicateNodeId, LeaseKeeper, rendezvous_owner
from poolscope.fleet.tables import fleet_members, target_leases
from poolscope.store.sql import SqlStore

TARGETS = [f"db{i:03d}" for i in range(40)]
TTL_S = 2.5


def keeper(store: SqlStore, node: str, targets: list[str] = TARGETS) -> LeaseKeeper:
    return LeaseKeeper(store.engine, node, lambda: targets, ttl_s=TTL_S)


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
    a, b = keeper(store, "host-a:1"), keeper(store, "host-b:2")
    for member in (a, b, a, b):
        await member.cycle()
    a_share = a.held()
    assert a_share and b.held() == set(TARGETS) - a_share
    silent_at = time.monotonic()  # a's last renewal was just before this
    taken_at = None
    while time.monotonic() - silent_at < 3 * TTL_S:  # bounded: well past the TTL
        await b.cycle()
        assert not (a.held() & b.held()), "a target held by two members"
        if b.held() == set(TARGETS):
            taken_at = time.monotonic()
            break
        await asyncio.sleep(b.renew_s / 4)
    assert taken_at is not None, "the silent member's targets never moved"
    # It is dead once its heartbeat is a TTL old; a round later the survivor holds its targets.
    assert taken_at - silent_at <= TTL_S + b.renew_s
    assert not a.held()  # its own deadline passed before the store let b take them
    await b.stop()


async def test_a_lease_is_never_held_by_two_while_members_come_and_go(store):
    members = [keeper(store, f"host-{n}:{n}") for n in "abc"]
    running: dict[str, asyncio.Task[None]] = {}
    rng = random.Random(12)
    overlaps: list[set[str]] = []
    ever: dict[str, int] = {}

    async def churn() -> None:
        end = time.monotonic() + 4 * TTL_S
        while time.monotonic() < end:  # bounded in time
            member = rng.choice(members)
            if member.node_id in running and len(running) > 1:
                # Half stop cleanly, half fall silent (as if killed): both must stay safe.
                task = running.pop(member.node_id)
                task.cancel()
                if rng.random() < 0.5:
                    await member.stop()
                    member._stopping.clear()
            else:
                running[member.node_id] = asyncio.create_task(cycling(member))
            await asyncio.sleep(rng.uniform(0.2, 0.8))

    async def cycling(member: LeaseKeeper) -> None:
        for _ in range(1000):  # bounded; cancelled by churn
            await member.cycle()
            await asyncio.sleep(member.renew_s)

    async def watch() -> None:
        for _ in range(10_000):
            held = [m.held() for m in members]
            for i, mine in enumerate(held):
                for other in held[i + 1 :]:
                    if mine & other:
                        overlaps.append(mine & other)
                for t in mine:
                    ever[t] = ever.get(t, 0) + 1
            await asyncio.sleep(0.01)

    watcher = asyncio.create_task(watch())
    await churn()
    watcher.cancel()
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
        await asyncio.sleep(self.renew_s * 1.2)
        await super()._heartbeat(conn, now)


async def test_a_slow_store_round_does_not_let_the_leases_lapse(store):
    member = SlowStoreKeeper(store.engine, "host-a:1", lambda: TARGETS, ttl_s=3.0)
    member.start()
    try:
        for _ in range(600):  # bounded (30 s): the first round on a loaded machine
            if member.held():
                break
            await asyncio.sleep(0.05)
        assert member.held() == set(TARGETS)
        # Rounds counted from their end came every 2.2 renew intervals, past the deadline
        # (ttl - margin = 2.5 intervals after a round's start) once the round itself was slow.
        lapsed = 0
        watch_until = time.monotonic() + 4 * member.ttl_s
        while time.monotonic() < watch_until:
            lapsed += member.held() != set(TARGETS)
            await asyncio.sleep(0.05)
        assert lapsed == 0
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
    dead = keeper(store, "poller-1")
    await dead.cycle()
    successor = keeper(store, "poller-1")
    successor._pid += 1
    with pytest.raises(DuplicateNodeId):
        await successor.cycle()  # the dead one's heartbeat is still fresh
    for _ in range(int(3 * TTL_S / 0.25)):  # bounded: well past the TTL
        await asyncio.sleep(0.25)
        try:
            await successor.cycle()
            break
        except DuplicateNodeId:
            continue
    assert successor.held() == set(TARGETS)
    with pytest.raises(DuplicateNodeId):
        await dead.cycle()  # come back to life: it is the duplicate now, and polls nothing
    await successor.stop()
