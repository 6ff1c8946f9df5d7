"""One monitoring connection per target: prefers extra_port, detects the server, runs a poll batch.

What the server is comes from poller/discovery.py; which connection a DSN gets, from the
scheme registry at the end of this file.

Why extra_port: on the normal port the monitoring connection waits in the same thread pool
queue it is measuring (9-56 ms per query under load, seconds during a stall, against 0.3 ms on
extra_port: docs/decisions/0001-poll-outside-the-pool.md).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import asyncmy
from asyncmy.constants import CLIENT

from poolscope.config import TargetConfig
from poolscope.dsn import ParsedDsn
from poolscope.poller.discovery import admin_port_of, discovery_statements, server_from_discovery
from poolscope.schemas import AdminPortKind, ConnectionInfo, ServerInfo
from poolscope.tls import TlsConfig, TlsError, client_context

# What the driver raises: the server's answer to a statement, or the client's own failure.
MySQLError = asyncmy.errors.MySQLError


class Connection(asyncmy.Connection):
    """The driver's connection, knowing how to tell its errors without the DSN's user or password
    (dsn.py redact_userinfo): whatever later shows them (the API, the live channel, alerts,
    webhooks, `poolscope check`, the logs) gets them through redacted()."""

    def __init__(self, *, redact: Callable[[str], str], **options: Any) -> None:
        super().__init__(**options)  # type: ignore[no-untyped-call]  # asyncmy ships no annotations for it
        self.redact = redact


def redacted(exc: BaseException, conn: Connection) -> BaseException:
    """`exc`, every text of its args now told without the connection's userinfo."""
    if isinstance(exc, MySQLError):
        exc.args = tuple(conn.redact(a) if isinstance(a, str) else a for a in exc.args)
    return exc


@dataclass
class StatementResult:
    """One statement's outcome: rows (an OK packet gives none) or the server's error for it."""

    rows: list[dict[str, Any]] | None
    error: BaseException | None
    duration_ms: float


# Server error codes that mean "this credential may not read that".
PRIVILEGE_ERRORS = {1044, 1045, 1142, 1143, 1227, 1370}


class ConnectError(Exception):
    """The target cannot be reached or refused us; the message is shown on the target."""


def describe_mysql_error(exc: BaseException) -> str:
    """A one-line reason without credentials (an error read on our connections has no userinfo: redacted())."""
    cause = exc.__cause__
    # The driver reports a failed TLS handshake as "Can't connect" (2003) and keeps the why here.
    if isinstance(cause, ssl.SSLCertVerificationError):
        return f"TLS handshake failed: certificate verify failed: {cause.verify_message}"
    if isinstance(cause, ssl.SSLError):
        return f"TLS handshake failed: {str(cause.reason or type(cause).__name__).replace('_', ' ').lower()}"
    if isinstance(exc, MySQLError) and exc.args and isinstance(exc.args[0], int):
        code = exc.args[0]
        message = exc.args[1] if len(exc.args) > 1 else str(exc)
        return f"MySQL error {code}: {message}"
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _wire_password(password: str) -> str:
    # The driver encodes the password as latin-1. Handing it the UTF-8 bytes sends what the server
    # hashed for IDENTIFIED BY over a utf8mb4 connection (what the mariadb client sends), and a
    # character outside latin-1 no longer raises an error that quotes it.
    return password.encode("utf-8").decode("latin-1")


async def open_mysql(
    params: ParsedDsn, port: int, tls: TlsConfig | None, what: str, timeout_s: float, **options: Any
) -> Connection:
    """One connection with the DSN's credential on `port`, over TLS when `tls` is set.

    The one place Poolscope logs in to a server (poller and admin connection alike); `what`
    names the setting in TLS errors, e.g. "tls of target db1".
    """
    context: ssl.SSLContext | None = None
    if tls is not None:
        try:
            context = client_context(tls, what)
        except TlsError as exc:
            raise ConnectError(str(exc)) from None
    conn = Connection(
        redact=params.redact,
        host=params.host,
        port=port,
        user=params.user,
        password=_wire_password(params.password.get_secret_value()),
        database=params.database or None,
        connect_timeout=timeout_s,
        autocommit=True,
        charset="utf8mb4",
        # With a context the driver always upgrades to TLS, and fails when the server cannot:
        # nothing, the login least of all, is sent in the clear to a server without TLS.
        ssl=context,
        **options,
    )
    try:
        await asyncio.wait_for(conn.connect(), timeout=timeout_s + 1)
    except BaseException as exc:
        conn.close()
        capabilities = getattr(conn, "server_capabilities", None)  # set once the greeting is read
        if context is not None and capabilities is not None and not capabilities & CLIENT.SSL:
            raise ConnectError(
                "the server does not offer TLS, which this connection requires (tls)"
            ) from None
        redacted(exc, conn)
        raise
    return conn


def error_code(exc: BaseException) -> int | None:
    if isinstance(exc, MySQLError) and exc.args and isinstance(exc.args[0], int):
        return exc.args[0]
    return None


def _client_side(exc: BaseException) -> bool:
    """The client's own error (the connection broke or is closed, a protocol error), not the
    server's answer to a statement (whose codes are 1000-1999 and 3000 up; the client's 2000-2999)."""
    code = error_code(exc)
    return code is None or code < 1000 or 2000 <= code < 3000


async def run_multi(conn: Connection, statements: list[str]) -> list[StatementResult]:
    """Result sets of `statements`, sent as one multi-statement, in order, through the driver's
    cursor; it stops after the first one that failed, as the server does. Raises (and closes the
    connection) when the connection itself breaks or a read is cut short."""
    results: list[StatementResult] = []
    started = time.perf_counter()
    cursor = conn.cursor()
    try:
        try:
            await cursor.execute(";\n".join(statements))
        except MySQLError as exc:
            if _client_side(exc):
                raise
            return [StatementResult(None, redacted(exc, conn), (time.perf_counter() - started) * 1000)]
        while True:
            description = cursor.description
            if description:
                names = [column[0].lower() for column in description]
                rows = [dict(zip(names, row, strict=False)) for row in await cursor.fetchall()]
            else:
                rows = []
            if len(results) < len(statements):  # a procedure's extra result set is dropped
                results.append(StatementResult(rows, None, (time.perf_counter() - started) * 1000))
            started = time.perf_counter()
            try:
                if not await cursor.nextset():
                    break
            except MySQLError as exc:
                if _client_side(exc):
                    raise
                results.append(
                    StatementResult(None, redacted(exc, conn), (time.perf_counter() - started) * 1000)
                )
                break
    except BaseException as exc:
        # Whatever stopped the read (a value that would not decode, a cancel) may have left the
        # rest of the answer on the stream: the next statement would read it. Never reuse it.
        conn.close()
        redacted(exc, conn)
        raise
    return results


class TargetConnection:
    """Owns the driver's connection of one target; not shared, so polls never interleave on it."""

    def __init__(self, config: TargetConfig) -> None:
        self.config = config
        self.conn: Connection | None = None
        self.info: ConnectionInfo | None = None
        self.server: ServerInfo | None = None

    async def _open(self, host: str, port: int) -> Connection:
        params = self.config.connection_params()
        return await open_mysql(
            params.model_copy(update={"host": host}),
            port,
            self.config.tls,
            f"tls of target {self.config.name}",
            self.config.connect_timeout_s,
            # All collectors' statements go in one round trip (docs/decisions/0001-poll-outside-the-pool.md).
            client_flag=CLIENT.MULTI_STATEMENTS,
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
        kind, admin_port = admin_port_of(self.server)
        assert self.info is not None
        if self.info.port_kind == "extra_port" and kind == "admin_port":
            self.info.port_kind = "admin_port"  # a configured port on MySQL/Percona 8.0.14+
        if self.info.port_kind == "port" and configured_extra is None and admin_port:
            await self._move_to_admin_port(params.host, admin_port, kind)

    async def _move_to_admin_port(self, host: str, port: int, kind: AdminPortKind) -> None:
        try:
            admin = await self._open(host, port)
        except Exception as exc:
            # extra_max_connections defaults to 1: another admin tool may hold the only slot; the
            # MySQL admin interface admits only SERVICE_CONNECTION_ADMIN holders.
            assert self.info is not None
            hint = " (needs SERVICE_CONNECTION_ADMIN)" if kind == "admin_port" else ""
            self.info.note = f"{kind} {port} refused ({describe_mysql_error(exc)}){hint}; using port"
            return
        assert self.conn is not None
        self.conn.close()
        self.conn = admin
        self.info = ConnectionInfo(host=host, port=port, port_kind=kind)

    async def _discover(self) -> ServerInfo:
        results = await self.run_batch(discovery_statements())
        for result in results:
            if result.error is not None:
                raise ConnectError(f"cannot read server variables: {describe_mysql_error(result.error)}")
        return server_from_discovery(results[0].rows or [], results[1].rows or [])

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
        try:
            return await run_multi(self.conn, statements)
        except BaseException:
            if self.conn is not None and not self.conn.connected:
                # The reader closed it (a cancelled read, e.g. a snapshot's timeout, left the rest
                # of an answer on the stream): not connected, so the next poll connects again.
                self.conn = None
            raise

    async def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


# DSN scheme -> what opens a target of that scheme. The product serves mysql:// and mariadb://;
# a development facility adds its own (backend/dev/poolscope_dev/replay.py registers fixture://),
# so nothing here knows about it.
ConnectionFactory = Callable[[TargetConfig], TargetConnection]
_FACTORIES: dict[str, ConnectionFactory] = {"mysql": TargetConnection, "mariadb": TargetConnection}


def register_scheme(scheme: str, factory: ConnectionFactory) -> None:
    """Open targets whose DSN starts with `scheme://` with `factory` (replaces an earlier one)."""
    if not scheme.isascii() or not scheme.isalnum():
        raise ValueError(f"a DSN scheme is letters and digits, not {scheme!r}")
    _FACTORIES[scheme.lower()] = factory


def dsn_scheme(dsn: str) -> str:
    scheme, sep, _ = dsn.partition("://")
    return scheme.lower() if sep else ""


def open_connection(config: TargetConfig) -> TargetConnection:
    """The connection for a target, by its DSN's scheme.

    An unknown scheme gets the live connection, whose connect() then fails with the DSN
    parser's message ("must start with mysql:// or mariadb://"): the target shows as down.
    """
    factory = _FACTORIES.get(dsn_scheme(config.dsn.get_secret_value()), TargetConnection)
    return factory(config)
