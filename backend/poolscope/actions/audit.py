"""The audit log in the store's database: append a change, list them, mark reverts and guard outcomes."""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import false, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from poolscope.actions.models import AuditEntry
from poolscope.actions.tables import audit_changes


class AuditLog:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def add(self, **values: Any) -> AuditEntry:
        async with self.engine.begin() as conn:
            result = await conn.execute(insert(audit_changes).values(**values))
            key = result.inserted_primary_key
            assert key is not None
            new_id = int(key[0])
        entry = await self.get(new_id)
        assert entry is not None
        return entry

    async def get(self, change_id: int) -> AuditEntry | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(audit_changes).where(audit_changes.c.id == change_id))).first()
        return _entry(row._mapping) if row else None

    async def list(self, target: str | None = None, limit: int = 200) -> list[AuditEntry]:
        stmt = select(audit_changes).order_by(audit_changes.c.id.desc()).limit(limit)
        if target is not None:
            stmt = stmt.where(audit_changes.c.target == target)
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).all()
        return [_entry(r._mapping) for r in rows]

    async def in_window(self, target: str, ts_from: float, ts_to: float) -> builtins.list[AuditEntry]:
        """Changes to one target between two times, oldest first (an incident snapshot's window)."""
        stmt = (
            select(audit_changes)
            .where(
                audit_changes.c.target == target, audit_changes.c.ts >= ts_from, audit_changes.c.ts <= ts_to
            )
            .order_by(audit_changes.c.ts, audit_changes.c.id)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(stmt)).all()
        return [_entry(r._mapping) for r in rows]

    async def update(self, change_id: int, **values: Any) -> None:
        async with self.engine.begin() as conn:
            await conn.execute(update(audit_changes).where(audit_changes.c.id == change_id).values(**values))

    async def end_watch(self, change_id: int, status: str, note: str) -> bool:
        """Record a guard's verdict, unless the watch already ended (superseded, reverted): False then."""
        async with self.engine.begin() as conn:
            result = await conn.execute(
                update(audit_changes)
                .where(audit_changes.c.id == change_id, audit_changes.c.guard_status == "watching")
                .values(guard_status=status, guard_note=note)
            )
        return bool(result.rowcount)

    async def supersede_watches(self, entry: AuditEntry, keep: int | None = None) -> int:
        """Only the newest change of a variable is guarded: older watches on it end as superseded."""
        stmt = update(audit_changes).where(
            audit_changes.c.target == entry.target,
            audit_changes.c.variable == entry.variable,
            audit_changes.c.guard_status == "watching",
            audit_changes.c.id != entry.id,
        )
        if keep is not None:
            stmt = stmt.where(audit_changes.c.id != keep)
        note = f"superseded by #{entry.id}, a newer change of {entry.variable}: only the newest change is guarded"
        async with self.engine.begin() as conn:
            result = await conn.execute(stmt.values(guard_status="superseded", guard_note=note))
        return int(result.rowcount or 0)

    async def interrupt_watches(self, alive: Callable[[str | None], Awaitable[bool]]) -> int:
        """Guards cannot outlive the process that watched: those whose process is gone (`alive`
        says) are interrupted instead of left 'watching'; another live process's are left alone."""
        async with self.engine.connect() as conn:
            owners = set(
                (
                    await conn.execute(
                        select(audit_changes.c.guard_owner).where(audit_changes.c.guard_status == "watching")
                    )
                ).scalars()
            )
        gone = [owner for owner in owners if not await alive(owner)]
        if not gone:
            return 0
        named = [owner for owner in gone if owner is not None]
        whose = or_(
            audit_changes.c.guard_owner.in_(named),
            audit_changes.c.guard_owner.is_(None) if None in gone else false(),
        )
        async with self.engine.begin() as conn:
            result = await conn.execute(
                update(audit_changes)
                .where(audit_changes.c.guard_status == "watching", whose)
                .values(
                    guard_status="interrupted",
                    guard_note="the Poolscope process that watched it stopped before the guard window"
                    " ended; the change was kept",
                )
            )
        return int(result.rowcount or 0)


def _entry(row: Any) -> AuditEntry:
    return AuditEntry(
        id=row["id"],
        ts=row["ts"],
        target=row["target"],
        action=row["action"],
        variable=row["variable"],
        old_value=row["old_value"],
        new_value=row["new_value"],
        result=row["result"],
        detail=row["detail"],
        user=row["user"],
        recommendation_id=row["recommendation_id"],
        # Derived, not stored: every apply without a recommendation is an operator's own.
        manual=row["action"] == "apply" and row["recommendation_id"] is None,
        reverts_id=row["reverts_id"],
        reverted_by_id=row["reverted_by_id"],
        port_kind=row["port_kind"],
        guarded=bool(row["guarded"]),
        guard_status=row["guard_status"],
        guard_until=row["guard_until"],
        guard_note=row["guard_note"],
    )
