"""Variable changes inside a snapshot's window, from the audit log of one-click apply."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from poolscope.actions.audit import AuditLog
from poolscope.snapshots.document import VariableChange


async def variable_changes_in_window(
    engine: AsyncEngine, target: str, window_from: float, window_to: float
) -> list[VariableChange]:
    """Applies, reverts and guard reverts of that target in the window, failed ones included."""
    return [
        VariableChange(
            at=entry.ts,
            variable=entry.variable,
            old_value=entry.old_value,
            new_value=entry.new_value,
            by=entry.user,
            extra={
                "action": entry.action,
                "result": entry.result,
                "detail": entry.detail,
                "recommendation_id": entry.recommendation_id,
                "guard_status": entry.guard_status,
            },
        )
        for entry in await AuditLog(engine).in_window(target, window_from, window_to)
    ]
