"""One monitoring connection per target: prefers extra_port, detects the server, runs a poll batch.

Why extra_port: on the normal port the monitoring connection waits in the same thread pool
queue it is measuring (REFERENCE.md §3: 9-56 ms per query under load, seconds during a stall,
against 0.3 ms on extra_port).
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import Any

import aiomysql
from pymysql.constants import CLIENT

from poolscope.config import TargetConfig
from poolscope.schemas import ConnectionInfo, ServerInfo

POOL_TABLES = ("THREAD_POOL_GROUPS", "THREAD_POOL_QUEUES", "THREAD_POOL_STATS", "THREAD_POOL_WAITS")
MYSQL_TP_TABLES = ("tp_thread_group_state", "tp_thread_group_stats", "tp_thread_state")

# Server error codes that mean "this credential may not read that".
PRIVILEGE_ERRORS = {1044, 1045, 1142, 1143, 1227, 1370}


class ConnectError(Exception):
    """The target cannot be reached or refused us; the message is shown on the target."""


@dataclass
class StatementResult:
    rows: list[dict[str, Any]] | None
    error: BaseException | None
    duration_ms: float


def describe_mysql_error(exc: BaseException) -> str:
    """A one-line reason without credentials (PyMySQL messages carry user@host but never passwords)."""
    if isinstance(exc, aiomysql.OperationalError | aiomysql.ProgrammingError | aiomysql.InternalError):
        code = exc.args[0] if exc.args else None
        message = exc.args[1] if len(exc.args) > 1 else str(exc)
        return f"MySQL error {code}: {message}"
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return "timed out"
    return f"{type(exc).__name__}: {exc}"


def error_code(exc: BaseException) -> int | None:
    if isinstance(exc, aiomysql.Error) and exc.args and isinstance(exc.args[0], int):
        return exc.args[0]
    return None


def parse_version(version: str) -> tuple[int, int, int]:
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if not match:
        return (0, 0, 0)
    major, minor, patch = (int(x) for x in match.groups())
    return (major, minor, patch)


def detect_flavor(version: str, version_comment: str) -> str:
    text = f"{version} {version_comment}".lower()
    if "mariadb" in text:
        return "mariadb"
    if "percona" in text:
        return "percona"
    if "mysql" in text or re.match(r"\d+\.\d+\.\d+", version):
        return "mysql"
    return "unknown"


class TargetConnection:
    """Owns the aiomysql connection of one target; not shared, so polls never interleave on it."""

    def __init__(self, config: TargetConfig) -> None:
        self.config = config
        self.conn: aiomysql.Connection | None = None
        self.info: ConnectionInfo | None = None
        self.server: ServerInfo | None = None

    async def _open(self, host: str, port: int) -> aiomysql.Connection:
        params = self.config.connection_params()
        return await asyncio.wait_for(
            aiomysql.connect(
                host=host,
                port=port,
                user=params.user,
                password=params.password.get_secret_value(),
                db=params.database,
                connect_timeout=self.config.connect_timeout_s,
                autocommit=True,
                charset="utf8mb4",
                # All collectors' statements go in one round trip (REFERENCE.md §4).
                client_flag=CLIENT.MULTI_STATEMENTS,
            ),
            timeout=self.config.connect_timeout_s + 1,
        )

    async def connect(self) -> None:
        """Connect, preferring extra_port, then detect what the server is."""
        await self.close()
        params = self.config.connection_params()
        configured_extra = self.config.extra_port
        note: str | None = None
        if configured_extra:
            try:
                self.conn = await self._open(params.host, configured_extra)
                self.info = ConnectionInfo(host=params.host, port=configured_extra, port_kind="extra_port")
            except Exception as exc:
                note = f"extra_port {configured_extra} unusable ({describe_mysql_error(exc)}); using port"
        if self.conn is None:
            try:
                self.conn = await self._open(params.host, params.port)
            except Exception as exc:
                raise ConnectError(
                    f"cannot connect to {params.host}:{params.port}: {describe_mysql_error(exc)}"
                ) from None
            self.info = ConnectionInfo(host=params.host, port=params.port, port_kind="port", note=note)
        self.server = await self._discover()
        if (
            self.info
            and self.info.port_kind == "port"
            and configured_extra is None
            and self.server.extra_port
        ):
            await self._move_to_extra_port(params.host, self.server.extra_port)

    async def _move_to_extra_port(self, host: str, extra_port: int) -> None:
        try:
            extra = await self._open(host, extra_port)
        except Exception as exc:
            # extra_max_connections defaults to 1: another admin tool may hold the only slot.
            assert self.info is not None
            self.info.note = f"extra_port {extra_port} refused ({describe_mysql_error(exc)}); using port"
            return
        assert self.conn is not None
        self.conn.close()
        self.conn = extra
        self.info = ConnectionInfo(host=host, port=extra_port, port_kind="extra_port")

    async def _discover(self) -> ServerInfo:
        from poolscope.poller.collectors.global_variables import NAMES as POLLED_VARIABLES

        wanted = ("version_comment", *POLLED_VARIABLES)
        names = ", ".join(f"'{n}'" for n in wanted)
        tables = ", ".join(f"'{t}'" for t in (*POOL_TABLES, *MYSQL_TP_TABLES))
        results = await self.run_batch(
            [
                f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})",
                "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
                f" WHERE TABLE_NAME IN ({tables}) AND TABLE_SCHEMA IN ('information_schema', 'performance_schema')",
            ]
        )
        for result in results:
            if result.error is not None:
                raise ConnectError(f"cannot read server variables: {describe_mysql_error(result.error)}")
        variables = {str(r["variable_name"]): str(r["value"]) for r in results[0].rows or []}
        version = variables.get("version", "")
        thread_handling = variables.get("thread_handling", "one-thread-per-connection")
        exact = variables.get("thread_pool_exact_stats")
        exact_stats = None if exact is None else exact.upper() == "ON"
        pool_enabled = thread_handling == "pool-of-threads" or bool(
            {r["table_name"] for r in results[1].rows or []} & set(MYSQL_TP_TABLES)
        )
        return ServerInfo(
            flavor=detect_flavor(version, variables.get("version_comment", "")),  # type: ignore[arg-type]
            version=version,
            version_tuple=parse_version(version),
            thread_handling=thread_handling,
            pool_enabled=pool_enabled,
            pool_tables=sorted({str(r["table_name"]) for r in results[1].rows or []}),
            exact_stats=exact_stats,
            queue_time_mode=None if exact_stats is None else ("exact" if exact_stats else "coarse"),
            extra_port=int(variables.get("extra_port", "0") or 0),
            known_variables=[n for n in POLLED_VARIABLES if n in variables],
        )

    async def run_batch(self, statements: list[str]) -> list[StatementResult]:
        """Run statements in as few round trips as possible, isolating each statement's failure.

        The server stops a multi-statement at the first error, so the statements after a failed
        one are sent again as a new batch: a missing privilege costs one extra round trip, not
        the whole poll.
        """
        if self.conn is None:
            raise ConnectError("not connected")
        results: list[StatementResult] = []
        pending = list(statements)
        # Bounded: each round either finishes the batch or consumes at least one statement.
        for _ in range(len(statements) + 1):
            if not pending:
                break
            done = await self._run_multi(pending)
            results.extend(done)
            pending = pending[len(done) :]
        return results

    async def _run_multi(self, statements: list[str]) -> list[StatementResult]:
        assert self.conn is not None
        results: list[StatementResult] = []
        started = time.perf_counter()
        async with self.conn.cursor() as cursor:
            try:
                await cursor.execute(";\n".join(statements))
            except aiomysql.Error as exc:
                if error_code(exc) is None:
                    raise  # the connection itself broke
                return [StatementResult(None, exc, (time.perf_counter() - started) * 1000)]
            for index in range(len(statements)):
                if index > 0:
                    started = time.perf_counter()
                    try:
                        more = await cursor.nextset()
                    except aiomysql.Error as exc:
                        if error_code(exc) is None:
                            raise
                        results.append(StatementResult(None, exc, (time.perf_counter() - started) * 1000))
                        return results
                    if not more:
                        break
                names = [d[0].lower() for d in cursor.description or ()]
                rows = [dict(zip(names, row, strict=True)) for row in await cursor.fetchall()]
                results.append(StatementResult(rows, None, (time.perf_counter() - started) * 1000))
        return results

    async def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
