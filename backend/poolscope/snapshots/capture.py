"""Reads the server's own tables once, at the moment of a snapshot.

The poll's derived state (with each queued connection's last SQL) comes from the poller; this adds
the raw tables a DBA wants beside it. Plain statement shapes, one table each
(docs/decisions/0003-plain-statements-decoded-by-the-poller.md).

They are read on the poller's own connection, between two polls: it is on extra_port, the one
port that answers during a stall, and with MariaDB's default extra_max_connections=1 the only
extra_port connection there is. Only when the poller is not connected does a separate
short-lived connection try (preferring extra_port, else the normal port, which during a stall
can be slow). Every read is bounded by capture_timeout_s; failures are recorded in the snapshot
instead of failing it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import decimal
import time
from typing import Any, Protocol

from poolscope.config import TargetConfig
from poolscope.poller.connection import ConnectError, StatementResult, TargetConnection, describe_mysql_error
from poolscope.schemas import FlightEntry
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


class LivePoller(Protocol):
    """What a capture needs of a target's running poller (poller/target_poller.py's TargetPoller)."""

    @property
    def connection(self) -> TargetConnection: ...

    async def read_between_polls(self, statements: list[str], timeout_s: float) -> list[StatementResult]: ...

    def flight_recorder(self, until: float | None = None) -> list[FlightEntry]: ...


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


def _statements(server_pool_tables: list[str]) -> dict[str, str]:
    statements = dict(COMMON_STATEMENTS)
    if "THREAD_POOL_GROUPS" in server_pool_tables:
        statements = {**POOL_STATEMENTS, **statements}
    return statements


def _fill(tables: ServerTables, names: list[str], results: list[StatementResult]) -> None:
    tables.captured_at = time.time()
    for name, result in zip(names, results, strict=False):
        if result.error is not None:
            tables.errors[name] = describe_mysql_error(result.error)
        elif name in ("global_status", "global_variables"):
            values = _name_values(result.rows)
            setattr(tables, name, redact_variables(values) if name == "global_variables" else values)
        else:
            setattr(tables, name, _rows(result.rows))


async def capture_server_tables(
    config: TargetConfig, timeout_s: float, poller: LivePoller | None = None
) -> ServerTables:
    tables = ServerTables()
    if poller is not None and poller.connection.server is not None:
        statements = _statements(poller.connection.server.pool_tables)
        names = list(statements)
        try:
            results = await poller.read_between_polls([statements[n] for n in names], timeout_s)
        except ConnectError:
            pass  # not connected right now: try a connection of our own below
        except TimeoutError:
            tables.errors["connection"] = f"the server did not answer within {timeout_s:g} s"
            return tables
        except Exception as exc:  # the poll connection broke; the next poll reconnects
            tables.errors["connection"] = describe_mysql_error(exc)
            return tables
        else:
            info = poller.connection.info
            tables.port_kind = info.port_kind if info else None
            _fill(tables, names, results)
            return tables
    return await _capture_on_own_connection(config, timeout_s, tables)


async def _capture_on_own_connection(
    config: TargetConfig, timeout_s: float, tables: ServerTables
) -> ServerTables:
    connection = TargetConnection(config)
    try:
        await asyncio.wait_for(connection.connect(), timeout=timeout_s)
        server = connection.server
        assert server is not None
        statements = _statements(server.pool_tables)
        names = list(statements)
        results = await asyncio.wait_for(
            connection.run_batch([statements[n] for n in names]), timeout=timeout_s
        )
        tables.port_kind = connection.info.port_kind if connection.info else None
        _fill(tables, names, results)
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
