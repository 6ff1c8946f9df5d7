"""Reads the server's own tables once, at the moment of a snapshot, on a separate short-lived connection.

The poll's derived state (with each queued connection's last SQL) comes from the poller; this adds
the raw tables a DBA wants beside it. Plain statement shapes, one table each (docs/FINDINGS.md:
complex information_schema queries create temporary tables). The connection prefers extra_port
like the poller; when extra_max_connections is used up it falls back to the normal port, which
during a stall can be slow: every statement is bounded by capture_timeout_s and failures are
recorded in the snapshot instead of failing it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import time
from typing import Any

from poolscope.config import TargetConfig
from poolscope.poller.connection import TargetConnection, describe_mysql_error
from poolscope.snapshots.document import Row, ServerTables
from poolscope.snapshots.redact import redact_variables

POOL_STATEMENTS = {
    "thread_pool_groups": "SELECT * FROM information_schema.THREAD_POOL_GROUPS",
    "thread_pool_queues": "SELECT * FROM information_schema.THREAD_POOL_QUEUES",
    "thread_pool_stats": "SELECT * FROM information_schema.THREAD_POOL_STATS",
    "thread_pool_waits": "SELECT * FROM information_schema.THREAD_POOL_WAITS",
}
COMMON_STATEMENTS = {
    "innodb_trx": "SELECT * FROM information_schema.INNODB_TRX",
    "innodb_lock_waits": "SELECT * FROM information_schema.INNODB_LOCK_WAITS",
    "processlist": "SELECT ID, USER, HOST, DB, COMMAND, TIME, STATE, INFO FROM information_schema.PROCESSLIST",
    "global_status": "SHOW GLOBAL STATUS",
    "global_variables": "SHOW GLOBAL VARIABLES",
}


def _scalar(value: Any) -> str | int | float | bool | None:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _rows(rows: list[dict[str, Any]] | None) -> list[Row]:
    return [{k: _scalar(v) for k, v in row.items()} for row in rows or []]


def _name_values(rows: list[dict[str, Any]] | None) -> dict[str, str]:
    return {
        str(r["variable_name"]): "" if r["value"] is None else str(_scalar(r["value"])) for r in rows or []
    }


async def capture_server_tables(config: TargetConfig, timeout_s: float) -> ServerTables:
    tables = ServerTables()
    connection = TargetConnection(config)
    try:
        await asyncio.wait_for(connection.connect(), timeout=timeout_s)
        server = connection.server
        assert server is not None
        statements = dict(COMMON_STATEMENTS)
        if set(server.pool_tables) & {"THREAD_POOL_GROUPS"}:
            statements = {**POOL_STATEMENTS, **statements}
        names = list(statements)
        results = await asyncio.wait_for(
            connection.run_batch([statements[n] for n in names]), timeout=timeout_s
        )
        tables.captured_at = time.time()
        tables.port_kind = connection.info.port_kind if connection.info else None
        for name, result in zip(names, results, strict=False):
            if result.error is not None:
                tables.errors[name] = describe_mysql_error(result.error)
            elif name in ("global_status", "global_variables"):
                values = _name_values(result.rows)
                setattr(tables, name, redact_variables(values) if name == "global_variables" else values)
            else:
                setattr(tables, name, _rows(result.rows))
    except TimeoutError:
        tables.errors["connection"] = (
            f"timed out after {timeout_s:g} s (a stalled server answers slowly on its normal port)"
        )
    except Exception as exc:
        # ConnectError / DsnError messages never carry the password (config.redact_dsn).
        tables.errors["connection"] = describe_mysql_error(exc)
    finally:
        await connection.close()
    return tables
