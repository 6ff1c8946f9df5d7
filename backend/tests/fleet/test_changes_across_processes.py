"""Changes across the processes of a fleet, on the private PostgreSQL and on SQLite: an apply and a
revert of one target from two processes do not interleave, and a process starting interrupts only
the guards of a process that is gone.

Two processes are two Appliers (or Presences), each with its own engine and so its own database
sessions: what tells processes apart to an advisory lock or a file lock. The admin credential
reaches the real MariaDB sandbox through a StallRelay, which holds one SET back for 2 s.
"""

from __future__ import annotations

import asyncio
import sys

from poolscope.actions.apply import Actor, Applier
from poolscope.actions.audit import AuditLog
from poolscope.actions.fleet import Presence
from poolscope.api.errors import status_of
from poolscope.errors import DomainError
from tests.actions.live import set_global
from tests.actions.test_apply_lock import VARIABLE, applier_for, relay, settings_for  # noqa: F401
from tests.stores import migrated_store

ALICE = Actor("alice", "127.0.0.1")
BOB = Actor("bob", "127.0.0.2")


async def test_an_apply_and_a_revert_from_two_processes_do_not_interleave(
    relay,  # noqa: F811
    mariadb,
    monitor_dsn,
    store,
):
    settings = settings_for(relay, monitor_dsn, store.url)
    async with migrated_store(store.url) as other_store:
        one = applier_for(settings, store)
        other = Applier(settings, other_store, AuditLog(other_store.engine))
        set_global(mariadb, **{VARIABLE: 3})
        first = await one.apply("db1", VARIABLE, "4", ALICE)  # 3 → 4
        relay.hold(b"SET GLOBAL", 2.0)  # the next SET (4 → 5) holds the target 2 s
        apply_5 = asyncio.create_task(one.apply("db1", VARIABLE, "5", ALICE))
        assert await asyncio.to_thread(relay.triggered.wait, 10)
        # The other process reverts 3 → 4 meanwhile: it must wait, then see 5 and refuse.
        outcome = await asyncio.gather(apply_5, other.revert("db1", first.id, BOB), return_exceptions=True)
    applied, reverted = outcome
    assert not isinstance(applied, BaseException) and applied.result == "applied"
    assert isinstance(reverted, DomainError), f"the revert clobbered the newer change: {reverted}"
    assert status_of(reverted) == 409 and f"{VARIABLE} is 5 now, not the 4" in reverted.detail


async def test_a_starting_process_interrupts_only_the_guards_of_a_process_that_is_gone(store):
    audit = AuditLog(store.engine)
    row = {"target": "db1", "action": "apply", "variable": VARIABLE, "old_value": "3", "new_value": "4"}
    watching = {"result": "applied", "user": "alice", "guarded": True, "guard_status": "watching"}
    postgres = store.engine.dialect.name == "postgresql"
    async with migrated_store(store.url) as other_store:
        # A process running a guard: on SQLite this one (a live pid); on PostgreSQL one holding its lock.
        running = Presence(other_store.engine, owner="running-process" if postgres else None)
        await running.start()
        kept = await audit.add(ts=1.0, **row, **watching, guard_owner=running.owner)
        # A process that died: on SQLite a pid that no longer runs; on PostgreSQL an owner whose
        # lock nobody holds.
        ended = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
        await ended.wait()
        dead_owner = f"{running.owner.split(':')[0]}:{ended.pid}:0"
        orphan = await audit.add(ts=2.0, **row, **watching, guard_owner=dead_owner)
        legacy = await audit.add(ts=3.0, **row, **watching)  # from a Poolscope that named no owner

        starting = Presence(store.engine, owner="starting-process")
        await starting.start()
        try:
            assert await audit.interrupt_watches(starting.alive) == 2
            statuses = {e.id: e.guard_status for e in await audit.list("db1")}
            assert statuses == {kept.id: "watching", orphan.id: "interrupted", legacy.id: "interrupted"}
            # The running process stops: the next process to start interrupts its guard.
            await running.stop()
            if postgres:
                assert await audit.interrupt_watches(starting.alive) == 1
                assert (await audit.get(kept.id)).guard_status == "interrupted"  # type: ignore[union-attr]
        finally:
            await starting.stop()
