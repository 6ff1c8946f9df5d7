"""One monitoring connection per target: prefers extra_port, detects the server, runs a poll batch.

Why extra_port: on the normal port the monitoring connection waits in the same thread pool
queue it is measuring (REFERENCE.md §3: 9-56 ms per query under load, seconds during a stall,
against 0.3 ms on extra_port).
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from dataclasses import dataclass
from typing import Any, Literal

import aiomysql
from pymysql.constants import CLIENT

from poolscope import flavors
from poolscope.config import TargetConfig
from poolscope.dsn import ParsedDsn
from poolscope.enable_pool import RDS_SWITCH, how_to_enable
from poolscope.poller.collectors.base import PERFORMANCE_SCHEMA_SELECT
from poolscope.schemas import ConnectionInfo, ServerInfo
from poolscope.tls import TlsConfig, TlsError, client_context

Flavor = Literal["mariadb", "mysql", "percona", "alisql", "unknown"]

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


class _TlsOnlyConnection(aiomysql.Connection):  # type: ignore[misc]
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
    conn = (_TlsOnlyConnection if context else aiomysql.Connection)(
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


def parse_version(version: str) -> tuple[int, int, int]:
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if not match:
        return (0, 0, 0)
    major, minor, patch = (int(x) for x in match.groups())
    return (major, minor, patch)


def detect_flavor(version: str, version_comment: str) -> Flavor:
    text = f"{version} {version_comment}".lower()
    if "mariadb" in text:
        return "mariadb"
    if "alisql" in text:
        return "alisql"
    if "percona" in text:
        return "percona"
    if "mysql" in text or re.match(r"\d+\.\d+\.\d+", version):
        return "mysql"
    return "unknown"


def discovery_statements() -> list[str]:
    """What is read once on connect to decide what the server is and which collectors apply."""
    from poolscope.poller.collectors.global_variables import NAMES as POLLED_VARIABLES

    wanted = ("version_comment", "admin_address", *POLLED_VARIABLES)
    names = ", ".join(f"'{n}'" for n in wanted)
    tables = ", ".join(f"'{t}'" for t in (*POOL_TABLES, *MYSQL_TP_TABLES))
    return [
        f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})",
        "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
        f" WHERE TABLE_NAME IN ({tables}) AND TABLE_SCHEMA IN ('information_schema', 'performance_schema')",
    ]


def server_from_discovery(
    variable_rows: list[dict[str, Any]], table_rows: list[dict[str, Any]]
) -> ServerInfo:
    """Flavor, version, pool implementation and what can be read, from the discovery rows.

    Never fails on an unknown server: what cannot be identified is read as far as it goes and
    the reason is put in `notes`.
    """
    from poolscope.poller.collectors.global_variables import NAMES as POLLED_VARIABLES

    variables = {str(r["variable_name"]): str(r["value"]) for r in variable_rows}
    tables = {str(r["table_name"]) for r in table_rows}
    version = variables.get("version", "")
    version_comment = variables.get("version_comment", "")
    version_tuple = parse_version(version)
    flavor = detect_flavor(version, version_comment)
    thread_handling = variables.get("thread_handling", "one-thread-per-connection")
    pool_kind, grant_needed, notes = _pool_kind(flavor, thread_handling, variables, tables)
    if flavor == "unknown":
        notes.append(
            f"Could not tell the server's flavor from @@version {version!r} / @@version_comment "
            f"{version_comment!r}: reading what it offers."
        )
    if version_tuple == (0, 0, 0):
        notes.append(f"Could not parse the version {version!r}: version-dependent sources are skipped.")
    exact = variables.get("thread_pool_exact_stats")
    exact_stats = None if exact is None else exact.upper() == "ON"
    admin_address = variables.get("admin_address", "")
    rds_switch = variables.get(RDS_SWITCH)
    pool_enabled = pool_kind is not None or (rds_switch is None and thread_handling == "pool-of-threads")
    server = ServerInfo(
        flavor=flavor,
        version=version,
        version_tuple=version_tuple,
        thread_handling=thread_handling,
        pool_enabled=pool_enabled,
        pool_tables=sorted(tables),
        exact_stats=exact_stats,
        queue_time_mode=None if exact_stats is None else ("exact" if exact_stats else "coarse"),
        extra_port=int(variables.get("extra_port", "0") or 0),
        # The MySQL admin interface exists only when admin_address is set.
        admin_port=int(variables.get("admin_port", "0") or 0) if admin_address else 0,
        pool_kind=pool_kind,
        pool_grant_needed=grant_needed,
        edition=version_comment or None,
        known_variables=[n for n in POLLED_VARIABLES if n in variables],
        notes=notes,
    )
    spec = flavors.flavor_spec(server)
    if spec is not None and not spec.size.dynamic:
        server.startup_pool_size = _int(variables.get(spec.size.name))
    server.capabilities = capabilities(server)
    if not server.pool_enabled:
        server.enable_hint, server.enable_snippet = how_to_enable(
            flavor, version_tuple, server.edition, rds_switch is not None
        )
    note = flavors.version_note(server)
    if note:
        server.notes.append(note)
    return server


def _pool_kind(
    flavor: Flavor, thread_handling: str, variables: dict[str, str], tables: set[str]
) -> tuple[flavors.PoolKind | None, str | None, list[str]]:
    """Which pool runs, the GRANT it needs to be read (None: readable), and notes on how it was told."""
    notes: list[str] = []
    percona_variables = "thread_pool_high_prio_mode" in variables
    rds_switch = variables.get(RDS_SWITCH)
    if tables & set(MYSQL_TP_TABLES) or thread_handling == "loaded-dynamically":
        # The plugin sets thread_handling=loaded-dynamically when it initialises (MySQL manual,
        # "Thread Pool Installation"); its tp_* tables are invisible without SELECT on them.
        if tables & set(MYSQL_TP_TABLES):
            return "mysql_enterprise", None, notes
        notes.append(
            "thread_handling=loaded-dynamically: the thread_pool plugin is running, but this user cannot "
            f"see its performance_schema.tp_* tables. GRANT {PERFORMANCE_SCHEMA_SELECT} to read the pool."
        )
        return "mysql_enterprise", PERFORMANCE_SCHEMA_SELECT, notes
    if rds_switch is not None:
        notes.append(
            f"{RDS_SWITCH}={rds_switch}: an Alibaba Cloud RDS / AliSQL thread pool, switched by "
            f"{RDS_SWITCH} (thread_handling has no effect there); read as a Percona-derived pool "
            "(Threadpool_* status where the server has it, no per-group data)."
        )
        return ("percona" if rds_switch.upper() in ("ON", "1") else None), None, notes
    if thread_handling != "pool-of-threads":
        return None, None, notes
    if flavor == "mariadb" or ("THREAD_POOL_GROUPS" in tables and not percona_variables):
        return "mariadb", None, notes
    if flavor in ("percona", "alisql") or percona_variables:
        if flavor not in ("percona", "alisql"):
            notes.append(
                f"Percona-compatible thread pool variables (thread_pool_high_prio_mode) on a {flavor} "
                "server: read as a Percona-derived pool (status Threadpool_*, no per-group data)."
            )
        return "percona", None, notes
    notes.append(
        "thread_handling=pool-of-threads, but neither MariaDB's THREAD_POOL_* tables nor "
        "Percona's variables were found: only server-wide threads and throughput are shown."
    )
    return None, None, notes


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def capabilities(server: ServerInfo, status_names: frozenset[str] = frozenset()) -> list[str]:
    """What the UI may offer; `status_names`: the Threadpool_* status this server reported."""
    tables = set(server.pool_tables)
    caps: list[str] = []
    if server.pool_kind == "mariadb":
        for table, cap in (
            ("THREAD_POOL_GROUPS", flavors.CAP_GROUPS),
            ("THREAD_POOL_STATS", flavors.CAP_GROUP_STATS),
            ("THREAD_POOL_QUEUES", flavors.CAP_QUEUE_ENTRIES),
            ("THREAD_POOL_WAITS", flavors.CAP_WAITS),
        ):
            if table in tables:
                caps.append(cap)
        caps.append(flavors.CAP_POOL_THREADS)
    elif server.pool_kind == "percona":
        caps.append(flavors.CAP_POOL_THREADS)
        # By what the server reports, not by version: the statistics arrived in 8.4.10-10.
        if status_names & set(flavors.PERCONA_QUEUE_WAIT_STATUS):
            caps.append(flavors.CAP_QUEUE_WAIT_STATS)
        if status_names & set(flavors.PERCONA_QUEUE_DEPTH_STATUS.values()):
            caps.append(flavors.CAP_QUEUE_DEPTH)
    elif server.pool_kind == "mysql_enterprise":
        if "tp_thread_group_state" in tables:
            caps.append(flavors.CAP_GROUPS)
        if "tp_thread_group_stats" in tables:
            caps += [flavors.CAP_GROUP_STATS, flavors.CAP_WAITS]
    return caps


def admin_port_of(server: ServerInfo) -> tuple[Literal["extra_port", "admin_port"], int]:
    """The port outside the pool this server offers, and what it is called there (0 = none)."""
    variable = flavors.admin_port_variable(server.flavor, server.version_tuple)
    if variable == "admin_port":
        return "admin_port", server.admin_port
    # Servers we cannot place still get extra_port when they report one.
    return "extra_port", server.extra_port


class TargetConnection:
    """Owns the aiomysql connection of one target; not shared, so polls never interleave on it."""

    def __init__(self, config: TargetConfig) -> None:
        self.config = config
        self.conn: aiomysql.Connection | None = None
        self.info: ConnectionInfo | None = None
        self.server: ServerInfo | None = None

    async def _open(self, host: str, port: int) -> aiomysql.Connection:
        params = self.config.connection_params()
        return await open_mysql(
            params.model_copy(update={"host": host}),
            port,
            self.config.tls,
            f"tls of target {self.config.name}",
            self.config.connect_timeout_s,
            # All collectors' statements go in one round trip (REFERENCE.md §4).
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

    async def _move_to_admin_port(
        self, host: str, port: int, kind: Literal["extra_port", "admin_port"]
    ) -> None:
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


# A DSN of this scheme replays captured output instead of connecting (poolscope/devtools/replay.py).
FIXTURE_SCHEME = "fixture://"


def open_connection(config: TargetConfig) -> TargetConnection:
    """The connection for a target: a live server, or, for a fixture:// DSN, a replay (dev/test only)."""
    if config.dsn.get_secret_value().startswith(FIXTURE_SCHEME):
        from poolscope.devtools.replay import FixtureConnection

        return FixtureConnection(config)
    return TargetConnection(config)
