"""The audit log on every store backend (SQLite, MariaDB, PostgreSQL): appended, listed, updated, survives a restart."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.actions.audit import AuditLog
from poolscope.snapshots.audit_hook import variable_changes_in_window
from tests.store.test_sql_store import store_url  # noqa: F401  (the parametrised fixture)

ROW = {
    "target": "db1",
    "action": "apply",
    "variable": "thread_pool_stall_limit",
    "old_value": "500",
    "new_value": "30",
    "user": "alice",
    "address": "127.0.0.1",
    "recommendation_id": "db1:thread_pool_stall_limit",
    "port_kind": "extra_port",
}


async def gone(owner: str | None) -> bool:
    """No watcher is alive any more (the backend restarted)."""
    return False


async def test_audit_log_round_trip(store_url):  # noqa: F811
    engine = create_async_engine(store_url)
    audit = AuditLog(engine)
    first = await audit.add(
        ts=100.0, result="applied", guarded=True, guard_status="watching", guard_until=160.0, **ROW
    )
    failed = await audit.add(
        ts=101.0, result="failed", detail="MySQL error 1227: Access denied", guarded=False, **ROW
    )
    other = await audit.add(ts=102.0, result="applied", guarded=False, **{**ROW, "target": "db2"})
    assert first.guard_status == "watching" and first.user == "alice" and first.guarded
    assert [e.id for e in await audit.list("db1")] == [failed.id, first.id]  # newest first
    assert [e.id for e in await audit.list()][:1] == [other.id]
    await audit.update(first.id, reverted_by_id=failed.id)
    await engine.dispose()

    # A restarted backend finds everything, and says guards were interrupted.
    engine = create_async_engine(store_url)
    audit = AuditLog(engine)
    assert await audit.interrupt_watches(gone) == 1
    again = await audit.get(first.id)
    assert again is not None and again.reverted_by_id == failed.id
    assert again.guard_status == "interrupted" and "stopped" in (again.guard_note or "")
    assert (await audit.get(failed.id)).detail == "MySQL error 1227: Access denied"  # type: ignore[union-attr]
    await engine.dispose()


async def test_a_snapshot_window_lists_that_targets_changes_in_it(store_url):  # noqa: F811
    engine = create_async_engine(store_url)
    audit = AuditLog(engine)
    await audit.add(ts=50.0, result="applied", guarded=False, **ROW)  # before the window
    inside = await audit.add(ts=100.0, result="applied", guarded=False, **ROW)
    failed = await audit.add(ts=110.0, result="failed", detail="MySQL error 1227", guarded=False, **ROW)
    await audit.add(ts=105.0, result="applied", guarded=False, **{**ROW, "target": "db2"})  # another target
    changes = await variable_changes_in_window(engine, "db1", 90.0, 120.0)
    await engine.dispose()
    assert [(c.at, c.variable, c.old_value, c.new_value, c.by) for c in changes] == [
        (100.0, "thread_pool_stall_limit", "500", "30", "alice"),
        (110.0, "thread_pool_stall_limit", "500", "30", "alice"),
    ]
    assert changes[0].extra["result"] == "applied" and changes[1].extra["detail"] == "MySQL error 1227"
    assert inside.id != failed.id
