"""Apply, revert and the guard under one lock, against the real MariaDB sandbox.

The admin credential reaches the server through a StallRelay (tests/actions/relay.py), which
can hold back or cut one statement: that is how a SET that gets no answer, or a read-back
lost after the SET, is made to happen at an exact point. Each variable is read back as root.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from poolscope.actions.admin import AdminLimits, StatementTimeout, open_admin
from poolscope.actions.apply import Actor, Applier
from poolscope.actions.audit import AuditLog
from poolscope.actions.guard import GUARD_USER, Guard
from poolscope.actions.models import AuditEntry
from poolscope.api.errors import status_of
from poolscope.config import Settings, TargetConfig
from poolscope.errors import DomainError
from poolscope.poller.connection import MySQLError, error_code
from poolscope.schemas import Sample, TargetInfo
from poolscope.store.sql import SqlStore
from poolscope_dev.sandbox import ADMIN_PASSWORD, ADMIN_USER, MariaDBSandbox
from tests.actions.live import OPERATOR_PW, global_value, running_app, set_global
from tests.actions.relay import StallRelay, stall_relay
from tests.clock import FakeClock
from tests.served import logged_in
from tests.stores import migrated_store, sqlite_url
from tests.waiting import wait_for

VARIABLE = "thread_pool_oversubscribe"
VERDICT_FIXTURES = Path(__file__).parent.parent / "fixtures" / "verdict"
ALICE = Actor("alice", "127.0.0.1")
LOCK_WAIT_TIMEOUT = 1205


@pytest.fixture
def relay(mariadb: MariaDBSandbox) -> Iterator[StallRelay]:
    before = global_value(mariadb, VARIABLE)
    with stall_relay(mariadb.port) as r:
        yield r
    set_global(mariadb, **{VARIABLE: int(before)})


def settings_for(relay: StallRelay, monitor_dsn: str, store_url: str, **values: object) -> Settings:
    admin = f"mysql://{ADMIN_USER}:{ADMIN_PASSWORD}@127.0.0.1:{relay.port}/"
    target = TargetConfig(name="db1", dsn=monitor_dsn, admin_dsn=admin, extra_port=0)
    return Settings(store_url=store_url, targets=[target], poll_interval_s=0.5, **values)  # type: ignore[arg-type]


@pytest.fixture
async def store(tmp_path) -> AsyncIterator[SqlStore]:
    async with migrated_store(sqlite_url(tmp_path)) as s:
        yield s


def applier_for(settings: Settings, store: SqlStore, clock: FakeClock | None = None) -> Applier:
    if clock is None:
        return Applier(settings, store, AuditLog(store.engine))
    return Applier(settings, store, AuditLog(store.engine), clock)


async def test_a_revert_waits_for_a_running_apply_and_checks_the_value_it_left(
    relay, mariadb, monitor_dsn, store
):
    applier = applier_for(settings_for(relay, monitor_dsn, store.url), store)
    set_global(mariadb, **{VARIABLE: 3})
    first = await applier.apply("db1", VARIABLE, "4", ALICE)  # A → B
    relay.hold(b"SET GLOBAL", 2.0)  # the next SET (B → C) holds the target's lock 2 s
    apply_c = asyncio.create_task(applier.apply("db1", VARIABLE, "5", ALICE))
    assert await asyncio.to_thread(relay.triggered.wait, 10)
    # The revert asks for the lock while B → C is under way: it must check the value only then.
    outcome = await asyncio.gather(apply_c, applier.revert("db1", first.id, ALICE), return_exceptions=True)
    applied_c, reverted = outcome
    assert not isinstance(applied_c, BaseException) and applied_c.result == "applied"
    assert isinstance(reverted, DomainError), f"the revert clobbered the newer change: {reverted}"
    assert status_of(reverted) == 409 and f"{VARIABLE} is 5 now, not the 4" in reverted.detail
    assert global_value(mariadb, VARIABLE) == "5"
    entries = await applier.audit.list("db1")
    assert [(e.action, e.old_value, e.new_value) for e in entries] == [
        ("apply", "4", "5"),
        ("apply", "3", "4"),
    ]
    assert entries[1].reverted_by_id is None

    # Two reverts of one change at once: exactly one goes through.
    both = await asyncio.gather(
        applier.revert("db1", applied_c.id, ALICE),
        applier.revert("db1", applied_c.id, ALICE),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in both) == ["AuditEntry", "Conflict"]
    assert global_value(mariadb, VARIABLE) == "4"


async def seed_throughput_drop(store: SqlStore, at: float) -> None:
    """QPS 100 until `at`, 10 after: a change made just after `at` looks like a regression."""
    for i in range(-24, 25):
        ts = at + i * 0.5
        info = TargetInfo(name="db1", status="up", poll_interval_s=0.5, last_poll_at=ts)
        await store.write_poll(
            info, None, [Sample(metric="qps", labels={}, value=100.0 if i <= 0 else 10.0)], ts
        )


async def test_only_the_newest_change_of_a_variable_is_guarded(relay, mariadb, monitor_dsn, store):
    clock = FakeClock()
    settings = settings_for(relay, monitor_dsn, store.url, guard_window_s=10)
    applier = applier_for(settings, store, clock)
    guard = Guard(settings, store, applier.audit, applier, clock)
    set_global(mariadb, **{VARIABLE: 3})
    await seed_throughput_drop(store, clock.time())
    try:
        first = await applier.apply("db1", VARIABLE, "4", ALICE, guard=True)  # A → B, guarded
        guard.watch(first)
        second = await applier.apply("db1", VARIABLE, "5", ALICE)  # B → C
        third = await applier.apply("db1", VARIABLE, "4", ALICE, guard=True)  # C → B, guarded
        guard.watch(third)
        superseded = await applier.audit.get(first.id)
        assert superseded is not None and superseded.guard_status == "superseded"
        assert f"superseded by #{second.id}" in (superseded.guard_note or "")
        watches = [
            t for t in asyncio.all_tasks() if t.get_name() in (f"guard:{first.id}", f"guard:{third.id}")
        ]
        await clock.settle(*watches)  # each waiting for its window to pass
        await clock.advance(settings.guard_window_s - 0.01)
        assert not any(w.done() for w in watches)  # not judged before the window and a poll passed
        await clock.advance(settings.poll_interval_s + 0.01)
        assert all(w.done() for w in watches)
    finally:
        await guard.stop()
    # The older watch was superseded; the newest change's guard judged it, and the other changes of
    # the target inside its window make the verdict inconclusive (the drop is not credited to any
    # one of them): the change is kept, with the reason in the audit.
    assert global_value(mariadb, VARIABLE) == "4"
    entries = {e.id: e for e in await applier.audit.list("db1")}
    assert not [e for e in entries.values() if e.action == "auto_revert"]
    assert entries[first.id].guard_status == "superseded" and entries[first.id].reverted_by_id is None
    note = entries[third.id].guard_note or ""
    assert entries[third.id].guard_status == "kept", note
    assert note.startswith(f"inconclusive: another change overlaps: #{first.id}"), note


async def seed_recording(store: SqlStore, name: str, at: float) -> None:
    """A recorded run (tests/fixtures/verdict/) stored as if its change had been made at `at`."""
    rec = json.loads((VERDICT_FIXTURES / f"{name}.json").read_text())
    shift = at - rec["changes"][0]["ts"]
    for ts, row in rec["seconds"]:
        info = TargetInfo(name="db1", status="up", poll_interval_s=1.0, last_poll_at=ts + shift)
        samples = [Sample(metric=m, labels={}, value=v) for m, v in row.items()]
        await store.write_poll(info, None, samples, ts + shift)


async def guarded_and_judged(applier: Applier, guard: Guard, clock: FakeClock, value: str) -> AuditEntry:
    """A guarded apply of VARIABLE, and its guard's watch run to its end."""
    entry = await applier.apply("db1", VARIABLE, value, ALICE, guard=True)
    guard.watch(entry)
    await clock.settle(*[t for t in asyncio.all_tasks() if t.get_name() == f"guard:{entry.id}"])
    await clock.advance(applier.settings.guard_window_s + applier.settings.poll_interval_s + 0.01)
    await clock.settle()
    return entry


async def test_the_guard_reverts_on_a_conclusive_worse_only(relay, mariadb, monitor_dsn, store):
    clock = FakeClock()
    settings = settings_for(relay, monitor_dsn, store.url, guard_window_s=60)
    applier = applier_for(settings, store, clock)
    guard = Guard(settings, store, applier.audit, applier, clock)
    set_global(mariadb, **{VARIABLE: 3})
    try:
        # Recorded around thread_pool_size 4 -> 1: the pool served 40 % fewer queries to the same
        # clients, and more of them queued.
        await seed_recording(store, "regression", clock.time())
        worse = await guarded_and_judged(applier, guard, clock, "4")
        # Recorded while the offered load tripled, nothing changed on the server: not the change's.
        await clock.advance(1000)
        await seed_recording(store, "load-shift", clock.time())
        shifted = await guarded_and_judged(applier, guard, clock, "5")
    finally:
        await guard.stop()
    entries = {e.id: e for e in await applier.audit.list("db1")}
    note = entries[worse.id].guard_note or ""
    assert entries[worse.id].guard_status == "reverted", note
    assert "worse: throughput fell" in note and "queued requests" in note and "interval" in note
    auto = entries[entries[worse.id].reverted_by_id or 0]
    assert auto.action == "auto_revert" and auto.user == GUARD_USER and "worse: " in (auto.detail or "")
    kept = entries[shifted.id]
    assert kept.guard_status == "kept" and (kept.guard_note or "").startswith(
        "inconclusive: load changed by +"
    )
    assert global_value(mariadb, VARIABLE) == "5"


async def test_stopping_the_guard_ends_the_watches_still_running(relay, mariadb, monitor_dsn, store):
    settings = settings_for(relay, monitor_dsn, store.url, guard_window_s=600)
    applier = applier_for(settings, store)
    guard = Guard(settings, store, applier.audit, applier)
    set_global(mariadb, **{VARIABLE: 3})
    for value in ("4", "5"):
        guard.watch(await applier.apply("db1", VARIABLE, value, ALICE, guard=True))
    await guard.stop()  # as the app's shutdown does
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("guard:")]


async def test_a_set_that_gets_no_answer_is_killed_and_frees_the_lock(relay, mariadb, monitor_dsn, store):
    applier = applier_for(settings_for(relay, monitor_dsn, store.url, admin_statement_timeout_s=1), store)
    set_global(mariadb, **{VARIABLE: 3})
    relay.hold(b"SET GLOBAL", 8.0)
    with pytest.raises(DomainError) as failed:
        await applier.apply("db1", VARIABLE, "4", ALICE)
    # Given up while the SET was still held back, not when it came through.
    assert not relay.hold_over.is_set()
    assert status_of(failed.value) == 504
    assert "did not answer SET GLOBAL (no answer within 2 s)" in failed.value.detail
    assert f"{VARIABLE} is still 3" in failed.value.detail
    entry = await applier.audit.get(failed.value.audit_id or 0)
    assert entry is not None and entry.result == "failed" and entry.detail == failed.value.detail

    # The lock is free at once: another change goes through while the first SET is still held.
    later = await applier.apply("db1", VARIABLE, "5", ALICE)
    assert later.result == "applied" and later.old_value == "3"
    assert not relay.hold_over.is_set()
    # Its connection was killed, so the held SET never lands once the stall ends.
    assert await asyncio.to_thread(relay.hold_over.wait, 15)
    await asyncio.sleep(0.5)  # an absence: time for the held SET to land, were it still alive
    assert global_value(mariadb, VARIABLE) == "5"


async def test_admin_session_statements_are_bounded_on_the_server_and_by_the_client(mariadb, admin_dsn):
    # The lock wait ends well before the client deadline (statement limit + 1 s), as with the
    # defaults: the LOCK TABLES case below must meet the server's 1205, not the client's KILL.
    limits = AdminLimits(connect_timeout_s=3, statement_timeout_s=2, lock_wait_timeout_s=1)
    target = TargetConfig(name="db1", dsn=admin_dsn, admin_dsn=admin_dsn, extra_port=0)
    blocker = mariadb.admin_connect(autocommit=True)
    with blocker.cursor() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS sbtest.poolscope_locked (id INT PRIMARY KEY)")
        cur.execute(f"GRANT SELECT ON sbtest.poolscope_locked TO {ADMIN_USER}@'127.0.0.1'")
    session = await open_admin(target, None, limits)
    try:
        rows = await session.fetch(
            "SELECT @@SESSION.max_statement_time, @@SESSION.lock_wait_timeout, @@SESSION.innodb_lock_wait_timeout"
        )
        assert [tuple(float(v) for v in rows[0])] == [(2.0, 1.0, 1.0)]
        with blocker.cursor() as cur:
            cur.execute("SELECT GET_LOCK('poolscope-test', 0), CONNECTION_ID()")
            got, blocker_id = cur.fetchone()
        assert got == 1
        # A statement waiting for another session's lock: the server stops it (NULL, not 0 = timed
        # out after its own 30 s).
        assert await session.fetch("SELECT GET_LOCK('poolscope-test', 30)") == [(None,)]

        # Where the server has no statement limit (MySQL's covers SELECT only), lock waits still end...
        await session.fetch("SET SESSION max_statement_time = 0")
        with blocker.cursor() as cur:
            cur.execute("LOCK TABLES sbtest.poolscope_locked WRITE")
        with pytest.raises(MySQLError) as waited:
            await session.fetch("SELECT COUNT(*) FROM sbtest.poolscope_locked")
        assert error_code(waited.value) == LOCK_WAIT_TIMEOUT
        with blocker.cursor() as cur:
            cur.execute("UNLOCK TABLES")

        # ... and any other wait ends at the client deadline, which KILLs the thread.
        assert session.conn is not None
        thread_id = session.conn.thread_id()
        with pytest.raises(StatementTimeout):
            await session.fetch("SELECT GET_LOCK('poolscope-test', 30)")
        assert session.conn is None
        with blocker.cursor() as cur:

            def listed() -> int:
                cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s", (thread_id,))
                return cur.fetchone()[0]

            # KILL returns before the thread has gone: on a loaded machine it is listed a moment more.
            wait_for(listed, 10, "the killed thread is still listed", until=lambda n: n == 0)
            cur.execute("SELECT IS_USED_LOCK('poolscope-test')")
            assert cur.fetchone()[0] == blocker_id
    finally:
        session.close()
        with blocker.cursor() as cur:
            cur.execute("UNLOCK TABLES")
            cur.execute(f"REVOKE SELECT ON sbtest.poolscope_locked FROM {ADMIN_USER}@'127.0.0.1'")
            cur.execute("DROP TABLE sbtest.poolscope_locked")
        blocker.close()


def test_a_read_back_lost_after_the_set_is_unverified_and_can_be_reverted(
    relay, mariadb, monitor_dsn, tmp_path
):
    settings = settings_for(relay, monitor_dsn, f"sqlite+aiosqlite:///{tmp_path / 'api.db'}")
    set_global(mariadb, **{VARIABLE: 3})
    with running_app(settings) as base:
        op = logged_in(base, "op", OPERATOR_PW)
        # The SET is answered, then the connection drops and the server cannot be reached again.
        relay.cut(b"SHOW WARNINGS")
        res = op.post("/api/targets/db1/apply", json={"variable": VARIABLE, "value": "4"})
        assert res.status_code == 200, res.text
        entry = res.json()
        assert entry["result"] == "unverified"
        assert "SET GLOBAL was accepted but reading the value back failed" in entry["detail"]
        assert f"{VARIABLE} is probably 4; a revert puts back 3" in entry["detail"]
        assert global_value(mariadb, VARIABLE) == "4"
        listed = op.get("/api/targets/db1/audit").json()
        assert (listed[0]["id"], listed[0]["result"]) == (entry["id"], "unverified")

        relay.restore()
        revert = op.post(f"/api/targets/db1/audit/{entry['id']}/revert")
        assert revert.status_code == 200, revert.text
        assert (revert.json()["result"], revert.json()["old_value"], revert.json()["new_value"]) == (
            "applied",
            "4",
            "3",
        )
        assert global_value(mariadb, VARIABLE) == "3"
        listed = {e["id"]: e for e in op.get("/api/targets/db1/audit").json()}
        assert listed[entry["id"]]["reverted_by_id"] == revert.json()["id"]
        assert ADMIN_PASSWORD not in res.text + revert.text
