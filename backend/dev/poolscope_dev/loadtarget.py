"""Where the load goes and what it counts: the DSN (loopback only), the table, calibration, errors.

Shared by the load generator (poolscope_dev/loadgen.py) and the sysbench helpers.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import logging
import random
import socket
import statistics
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import aiomysql

from poolscope.dsn import DsnError
from poolscope.dsn import parse_dsn as dsn_parts

log = logging.getLogger("poolscope_dev.loadgen")

TABLE = "poolscope_load"
TABLE_ROWS = 2000

# Error codes that are part of normal life under this load: retry, don't count as trouble.
EXPECTED_ERRORS = {
    1205,  # lock wait timeout
    1213,  # deadlock
    1969,  # max_statement_time exceeded
    1317,  # query interrupted (our own KILL QUERY at stop)
}


class LoadgenError(RuntimeError):
    """Bad arguments or a target the load generator refuses to touch."""


@dataclass(frozen=True)
class ConnParams:
    host: str
    port: int
    user: str
    password: str
    database: str

    def safe(self) -> str:
        return f"mysql://{self.user}:***@{self.host}:{self.port}/{self.database}"


def parse_dsn(dsn: str, default_database: str = "sbtest") -> ConnParams:
    """Parse ``mysql://user:pass@host:port/db`` (poolscope/dsn.py's syntax) and insist on loopback."""
    try:
        parts = dsn_parts(dsn.replace("mysql+aiomysql://", "mysql://", 1), "load DSN")
    except DsnError as e:
        raise LoadgenError(str(e)) from None
    ensure_loopback(parts.host)
    return ConnParams(
        host=parts.host,
        port=parts.port,
        user=parts.user,
        password=parts.password.get_secret_value(),
        database=parts.database or default_database,
    )


def ensure_loopback(host: str) -> None:
    """Raise LoadgenError unless every address `host` names is a loopback address."""
    if host == "localhost":
        return
    try:
        addrs = {ipaddress.ip_address(host)}
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, None)
        except OSError as e:
            raise LoadgenError(f"cannot resolve host {host!r}: {e}") from None
        addrs = {ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos}
    bad = sorted(str(a) for a in addrs if not a.is_loopback)
    if bad or not addrs:
        raise LoadgenError(
            f"refusing to generate load against {host!r} ({', '.join(bad) or 'no address'}): "
            "only loopback servers (127.0.0.0/8, ::1, localhost) are allowed"
        )


@dataclass
class LoadStats:
    mode: str
    connections: int
    ops: int = 0
    errors: int = 0
    expected_errors: int = 0
    reconnects: int = 0
    error_kinds: collections.Counter[str] = field(default_factory=collections.Counter)
    elapsed_s: float = 0.0
    benchmark_iterations: int = 0
    ping_ms: list[float] = field(default_factory=list)

    def summary(self) -> str:
        rate = self.ops / self.elapsed_s if self.elapsed_s > 0 else 0.0
        kinds = ", ".join(f"{k}×{n}" for k, n in self.error_kinds.most_common(5)) or "none"
        text = (
            f"{self.mode}: {self.ops} ops in {self.elapsed_s:.1f}s ({rate:.1f}/s) on {self.connections} "
            f"connections; errors {self.errors} (expected {self.expected_errors}: {kinds}); "
            f"reconnects {self.reconnects}"
        )
        if self.ping_ms:
            text += (
                f"; short-query latency p50 {statistics.median(self.ping_ms):.0f} ms,"
                f" max {max(self.ping_ms):.0f} ms"
            )
        return text


def error_code(e: BaseException) -> int | None:
    if isinstance(e, aiomysql.MySQLError) and e.args and isinstance(e.args[0], int):
        return e.args[0]
    return None


def describe(e: BaseException) -> str:
    code = error_code(e)
    if code is not None and len(e.args) > 1:
        return f"MySQL error {code}: {e.args[1]}"
    return f"{type(e).__name__}: {e}"


async def prepare_table(cur: aiomysql.Cursor, rng: random.Random) -> None:
    """The load's table in the DSN's database, created and filled if needed (idempotent)."""
    await cur.execute(
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s",
        (TABLE,),
    )
    exists = await cur.fetchone()
    if not exists or not exists[0]:
        # IF NOT EXISTS still matters: two generators may start at once.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await cur.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} ("
                " id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0,"
                " c CHAR(60) NOT NULL DEFAULT '', KEY k_idx (k)) ENGINE=InnoDB"
            )
    await cur.execute(f"SELECT COUNT(*) FROM {TABLE}")
    row = await cur.fetchone()
    if row is None or row[0] < TABLE_ROWS:
        for start in range(1, TABLE_ROWS + 1, 500):
            values = [
                (i, rng.randrange(1000), f"row-{i:06d}")
                for i in range(start, min(start + 500, TABLE_ROWS + 1))
            ]
            with warnings.catch_warnings():  # duplicate-key notes from IGNORE
                warnings.simplefilter("ignore")
                await cur.executemany(f"INSERT IGNORE INTO {TABLE} (id, k, c) VALUES (%s, %s, %s)", values)


async def calibrate(cur: aiomysql.Cursor) -> float:
    """BENCHMARK(MD5) iterations per ms on this server (best of a few runs)."""
    best = 0.0
    n = 100_000
    for _ in range(3):
        t = time.perf_counter()
        await cur.execute("SELECT BENCHMARK(%s, MD5('poolscope-calibrate'))", (n,))
        await cur.fetchall()
        ms = (time.perf_counter() - t) * 1000
        best = max(best, n / max(ms, 0.01))
        if ms < 50:
            n *= 4
    log.info("calibrated: %.0f BENCHMARK(MD5) iterations per ms", best)
    return best


async def kill_queries(connect: Callable[[], Awaitable[aiomysql.Connection]], thread_ids: list[int]) -> None:
    """Best effort: KILL QUERY statements still running for us, so the server calms down now."""
    if not thread_ids:
        return

    async def _kill() -> None:
        conn = await connect()
        try:
            async with conn.cursor() as cur:
                for tid in thread_ids:
                    with contextlib.suppress(aiomysql.MySQLError):
                        await cur.execute(f"KILL QUERY {int(tid)}")
        finally:
            conn.close()

    try:
        await asyncio.wait_for(_kill(), timeout=5)
    except (aiomysql.MySQLError, OSError, TimeoutError) as e:
        log.info("could not KILL QUERY our leftover statements (%s); max_statement_time ends them", e)
