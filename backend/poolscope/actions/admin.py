"""The admin connection: a short-lived session with the SET GLOBAL credential, every statement bounded.

Apply and revert hold the target's lock while they talk to the server, so no statement may wait
for ever. Each session limits itself on the server (MariaDB `max_statement_time`; MySQL
`max_execution_time`, which stops SELECTs only; `lock_wait_timeout`, `innodb_lock_wait_timeout`)
and the client gives up a little later whatever the statement. At that client deadline the
connection's thread is KILLed from a second connection, so a SET that was only delayed cannot
land after Poolscope stopped waiting and audited something else.
The admin credential is used only here and never appears in an answer or a log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import asyncmy

from poolscope.actions.models import VariableMeta
from poolscope.actions.validate import normalise
from poolscope.config import DsnError, ParsedDsn, Settings, TargetConfig
from poolscope.errors import Conflict, DomainError, InvalidInput, ServerFailed, ServerTimeout
from poolscope.poller.connection import (
    Connection,
    MySQLError,
    describe_mysql_error,
    error_code,
    open_mysql,
    redacted,
)
from poolscope.schemas import ServerInfo
from poolscope.tls import TlsConfig

log = logging.getLogger(__name__)

UNKNOWN_TABLE = 1109
UNKNOWN_THREAD = 1094
#: The client waits this much longer than the server's own limit, so the server's clean error
#: ("max_statement_time exceeded") arrives first wherever the server can stop the statement.
CLIENT_GRACE_S = 1.0


class StatementTimeout(Exception):
    """The server did not answer within the client deadline; the statement's thread was KILLed."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no answer within {seconds:g} s")
        self.seconds = seconds


@dataclass(frozen=True)
class AdminLimits:
    connect_timeout_s: float
    statement_timeout_s: float
    lock_wait_timeout_s: int

    @classmethod
    def of(cls, settings: Settings, target: TargetConfig) -> AdminLimits:
        return cls(
            connect_timeout_s=target.connect_timeout_s,
            statement_timeout_s=settings.admin_statement_timeout_s,
            lock_wait_timeout_s=settings.admin_lock_wait_timeout_s,
        )

    @property
    def deadline_s(self) -> float:
        return self.statement_timeout_s + CLIENT_GRACE_S


def session_limits_sql(server_version: str, limits: AdminLimits) -> str:
    wait = limits.lock_wait_timeout_s
    if "mariadb" in server_version.lower():
        timeout = f"max_statement_time = {limits.statement_timeout_s:g}"
    else:  # MySQL / Percona: milliseconds, SELECT only (the client deadline covers SET)
        timeout = f"max_execution_time = {round(limits.statement_timeout_s * 1000)}"
    return f"SET SESSION {timeout}, lock_wait_timeout = {wait}, innodb_lock_wait_timeout = {wait}"


async def connect_admin(
    params: ParsedDsn, port: int, limits: AdminLimits, tls: tuple[TlsConfig | None, str]
) -> Connection:
    """The one place the admin connection is opened (login bounded by connect_timeout_s, TLS as set)."""
    return await asyncio.wait_for(
        open_mysql(params, port, *tls, limits.connect_timeout_s),
        timeout=limits.connect_timeout_s + CLIENT_GRACE_S,
    )


async def _run(conn: Connection, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    # No `async with` on purpose: a cancelled statement must not wait in the cursor's cleanup.
    cur = conn.cursor()
    try:
        await cur.execute(sql, args)
        rows = list(await cur.fetchall())
    except MySQLError as exc:
        redacted(exc, conn)
        raise
    await cur.close()
    return rows


class AdminSession:
    """One admin connection on one port; `reopen()` replaces it with a fresh one on the same port."""

    def __init__(
        self, opener: Callable[[], Awaitable[Connection]], port_kind: str, limits: AdminLimits
    ) -> None:
        self._opener = opener
        self.port_kind = port_kind
        self.limits = limits
        self.conn: Connection | None = None

    async def _limited_connection(self) -> Connection:
        conn = await self._opener()
        try:
            setup = session_limits_sql(conn.get_server_info(), self.limits)
            await asyncio.wait_for(_run(conn, setup, ()), self.limits.deadline_s)
        except MySQLError as exc:
            # An old server without these variables: the client deadline still bounds every statement.
            log.warning("admin session limits not set: %s", describe_mysql_error(exc))
        except BaseException:
            conn.close()
            raise
        return conn

    async def start(self) -> None:
        self.conn = await self._limited_connection()

    async def reopen(self) -> None:
        """A new connection for the next statements (the current one was lost or killed)."""
        self.close()
        try:
            self.conn = await self._limited_connection()
        except Exception as exc:
            raise ServerFailed(f"cannot reconnect with the admin credential: {describe(exc)}") from None

    async def fetch(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        conn = self.conn
        if conn is None:
            raise asyncmy.errors.OperationalError(2006, "the admin connection is closed")
        try:
            return await asyncio.wait_for(_run(conn, sql, args), self.limits.deadline_s)
        except TimeoutError:
            self.conn = None
            await self._kill(conn)
            raise StatementTimeout(self.limits.deadline_s) from None

    async def _kill(self, conn: Connection) -> None:
        thread_id = conn.thread_id()
        conn.close()
        try:
            helper = await self._limited_connection()
        except Exception as exc:
            log.warning("admin thread %s not killed: cannot connect: %s", thread_id, describe(exc))
            return
        try:
            await asyncio.wait_for(
                _run(helper, f"KILL CONNECTION {int(thread_id)}", ()), self.limits.deadline_s
            )
        except Exception as exc:
            if error_code(exc) != UNKNOWN_THREAD:  # it ended by itself meanwhile
                log.warning("admin thread %s not killed: %s", thread_id, describe(exc))
        finally:
            helper.close()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def describe(exc: BaseException) -> str:
    """A one-line reason for any failure on the admin connection, without credentials."""
    if isinstance(exc, DomainError):
        return exc.detail
    if isinstance(exc, StatementTimeout):
        return str(exc)
    return describe_mysql_error(exc)


async def open_admin(target: TargetConfig, server: ServerInfo | None, limits: AdminLimits) -> AdminSession:
    """A limited admin session, preferring the port outside the pool (it does not queue behind load)."""
    try:
        params = target.admin_connection_params()
    except DsnError as exc:
        raise Conflict(str(exc)) from None
    # The port outside the pool: MariaDB / Percona 5.7 extra_port, MySQL / Percona 8.0.14+ admin_port.
    outside = (server.extra_port or server.admin_port) if server else 0
    extra = target.extra_port if target.extra_port is not None else outside
    candidates = ([(extra, "extra_port")] if extra else []) + [(params.port, "port")]
    last = ""
    for port, kind in candidates:
        session = AdminSession(
            partial(connect_admin, params, port, limits, target.admin_tls_setting()), kind, limits
        )
        try:
            await session.start()
            return session
        except Exception as exc:
            last = describe_mysql_error(exc)
            log.info("target %s: admin login on %s %s failed: %s", target.name, kind, port, last)
    raise ServerFailed(f"cannot connect with the admin credential of {target.name}: {last}")


async def read_meta(session: AdminSession, variable: str) -> VariableMeta:
    try:
        rows = await session.fetch(
            "SELECT VARIABLE_NAME, VARIABLE_TYPE, NUMERIC_MIN_VALUE, NUMERIC_MAX_VALUE, NUMERIC_BLOCK_SIZE,"
            " ENUM_VALUE_LIST, READ_ONLY, VARIABLE_SCOPE"
            " FROM information_schema.SYSTEM_VARIABLES WHERE VARIABLE_NAME = %s",
            (variable.upper(),),
        )
    except MySQLError as exc:
        if error_code(exc) == UNKNOWN_TABLE:
            raise InvalidInput(
                "this server has no information_schema.SYSTEM_VARIABLES to validate against"
            ) from None
        raise ServerFailed(f"cannot read the variable's limits: {describe_mysql_error(exc)}") from None
    except StatementTimeout as exc:
        raise ServerTimeout(f"cannot read the variable's limits: {exc}") from None
    if not rows:
        raise InvalidInput(f"the server has no variable {variable}")
    name, vtype, low, high, block, enum, read_only, scope = rows[0]
    return VariableMeta(
        name=str(name).lower(),
        type=str(vtype or ""),
        min=None if low is None else str(low),
        max=None if high is None else str(high),
        block_size=None if block is None else str(block),
        enum_values=[v for v in str(enum or "").split(",") if v],
        read_only=str(read_only).upper() == "YES",
        scope=None if scope is None else str(scope),
    )


async def read_global(session: AdminSession, meta: VariableMeta) -> str:
    """@@GLOBAL of the variable, spelled as validate() spells it; raises MySQLError or StatementTimeout."""
    # The identifier comes from the allow-list and matched [a-z][a-z0-9_]* (allowlist.refusal).
    rows = await session.fetch(f"SELECT @@GLOBAL.{meta.name}")
    return normalise(meta, rows[0][0])


async def current_value(session: AdminSession, meta: VariableMeta) -> str:
    """read_global() before a change: any failure is a DomainError (nothing was changed yet)."""
    try:
        return await read_global(session, meta)
    except MySQLError as exc:
        raise ServerFailed(f"cannot read {meta.name}: {describe_mysql_error(exc)}") from None
    except StatementTimeout as exc:
        raise ServerTimeout(f"cannot read {meta.name}: {exc}") from None
