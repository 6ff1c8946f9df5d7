"""Variable changes inside a snapshot's window, from the audit log of one-click apply (issue #4).

The audit table is built on another branch; until it is merged this hook honestly has nothing
to report. Replace the body with a read of the audit_* table (target, time range) when it lands.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from poolscope.snapshots.document import VariableChange


async def variable_changes_in_window(
    engine: AsyncEngine, target: str, window_from: float, window_to: float
) -> list[VariableChange]:
    del engine, target, window_from, window_to
    return []
