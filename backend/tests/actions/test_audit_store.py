"""The audit log on every store backend (SQLite, MariaDB, PostgreSQL): appended, listed, updated, survives a restart."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.actions.audit import AuditLog
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
    assert await audit.interrupt_watches() == 1
    again = await audit.get(first.id)
    assert again is not None and again.reverted_by_id == failed.id
    assert again.guard_status == "interrupted" and "restarted" in (again.guard_note or "")
    assert (await audit.get(failed.id)).detail == "MySQL error 1227: Access denied"  # type: ignore[union-attr]
    await engine.dispose()
