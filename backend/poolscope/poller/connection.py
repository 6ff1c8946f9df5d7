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
from collections.abc import Callable, Collection
from typing import Any

import aiomysql
import pymysql
from pymysql.constants import CLIENT

from poolscope.config import TargetConfig
from poolscope.dsn import ParsedDsn
from poolscope.poller.discovery import admin_port_of, discovery_statements, server_from_discovery

# StatementResult lives beside the reader that makes it; callers import it from here as before.
from poolscope.poller.wire import MultiReader, redacted_args
from poolscope.poller.wire import StatementResult as StatementResult
from poolscope.schemas import AdminPortKind, ConnectionInfo, ServerInfo
from poolscope.tls import TlsConfig, TlsError, client_context

# Server error codes that mean "this credential may not read that".
PRIVILEGE_ERRORS = {1044, 1045, 1142, 1143, 1227, 1370}


class ConnectError(Exception):
    """The target cannot be reached or refused us; the message is shown on the target."""


def describe_mysql_error(exc: BaseException) -> str:
    """A one-line reason without credentials (a server message on our connections has no userinfo: _Connection)."""
    cause = exc.__cause__
    # aiomysql reports a failed handshake as "Can't connect" (2003) and keeps the why here.
    if isinstance(cause, ssl.SSLCertVerificationError):
        return f"TLS handshake failed: certificate verify failed: {cause.verify_message}"
    if isinstance(cause, ssl.SSLError):
        return f"TLS handshake failed: {str(cause.reason or type(cause).__name__).replace('_', ' ').lower()}"
    if isinstance(exc, aiomysql.OperationalError | aiomysql.ProgrammingError | aiomysql.InternalError):
        code = exc.args[0] if exc.args else None
        message = exc.args[1] if len(exc.args) > 1 else str(exc)
        return f"MySQL error {code}: {message}"
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


class _Connection(aiomysql.Connection):  # type: ignore[misc]
    """Every server error read on it is told without the DSN's user or password (dsn.py
    redact_userinfo), whatever later shows it: the API, the live channel, alerts, webhooks,
    `poolscope check`, the logs. poller/wire.py's own reader asks `redact` too."""

    def __init__(self, *args: Any, redact: Callable[[str], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.redact = redact

    async def _read_packet(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super()._read_packet(*args, **kwargs)
        except pymysql.err.MySQLError as exc:
            exc.args = redacted_args(exc.args, self.redact)
            raise


class _TlsOnlyConnection(_Connection):
    """Refuses a server that does not offer TLS before the credential is sent.

    aiomysql itself falls back to plain TCP in that case, which would let anyone in the middle
    downgrade the connection and read the login.
    """

    async def _request_authentication(self) -> None:
        if not self.server_capabilities & CLIENT.SSL:
            raise ConnectError("the server does not offer TLS, which this connection requires (tls)")
        await super()._request_authentication()


def _wire_password(password: str) -> str:
    # aiomysql encodes the password as latin-1. Handing it the UTF-8 bytes sends what the server
    # hashed for IDENTIFIED BY over a utf8mb4 connection (what the mariadb client sends), and a
    # character outside latin-1 no longer raises an error that quotes it.
    return password.encode("utf-8").decode("latin-1")


async def open_mysql(
    params: ParsedDsn, port: int, tls: TlsConfig | None, what: str, timeout_s: float, **options: Any
) -> aiomysql.Connection:
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
    conn = (_TlsOnlyConnection if context else _Connection)(
        redact=params.redact,
        host=params.host,
        port=port,
        user=params.user,
        password=_wire_password(params.password.get_secret_value()),
        db=params.database,
        connect_timeout=timeout_s,
        autocommit=True,
        charset="utf8mb4",
        ssl=context,
        **options,
    )
    try:
        # aiomysql.connect() is this pair; the class is chosen here for the TLS check above.
        await asyncio.wait_for(conn._connect(), timeout=timeout_s + 1)
    except BaseException:
        conn.close()
        raise
    return conn


def error_code(exc: BaseException) -> int | None:
    if isinstance(exc, aiomysql.Error) and exc.args and isinstance(exc.args[0], int):
        return exc.args[0]
    return None


class TargetConnection:
    """Owns the aiomysql connection of one target; not shared, so polls never interleave on it."""

    def __init__(self, config: TargetConfig) -> None:
        self.config = config
        self.conn: aiomysql.Connection | None = None
        self.info: ConnectionInfo | None = None
        self.server: ServerInfo | None = None
        self._reader = MultiReader()

    async def _open(self, host: str, port: int) -> aiomysql.Connection:
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

    async def run_batch(
        self, statements: list[str], raw: Collection[str] = frozenset(), *, remember: bool = False
    ) -> list[StatementResult]:
        """Run statements in as few round trips as possible, isolating each statement's failure.

        The server stops a multi-statement at the first error, so the statements after a failed
        one are sent again as a new batch: a missing privilege costs one extra round trip, not
        the whole poll. The rows of the statements in `raw` come undecoded (StatementResult.raw).
        `remember`: the poll's own statements, which come again next poll (wire.MultiReader keeps
        their answers to compare with); a one-off statement's answer is not kept.
        """
        if self.conn is None:
            raise ConnectError("not connected")
        results: list[StatementResult] = []
        pending = list(statements)
        # Bounded: each round either finishes the batch or consumes at least one statement.
        for _ in range(len(statements) + 1):
            if not pending:
                break
            done = await self._run_multi(pending, raw, remember)
            results.extend(done)
            pending = pending[len(done) :]
        return results

    async def _run_multi(
        self, statements: list[str], raw: Collection[str], remember: bool
    ) -> list[StatementResult]:
        assert self.conn is not None
        flags = [s in raw for s in statements] if raw else []
        try:
            return await self._reader.run(self.conn, statements, flags, remember=remember)
        except BaseException:
            if self.conn is not None and self.conn.closed:
                # The reader closed it (a cancelled read, e.g. a snapshot's timeout, left the rest
                # of an answer on the stream): not connected, so the next poll connects again.
                self.conn = None
            raise

    async def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        self._reader = MultiReader()  # nothing read on the closed connection is kept


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
