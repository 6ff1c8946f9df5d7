"""Built-in load generator that makes a MariaDB thread pool queue, stall or wait on locks.

Modes (all bounded by `duration_s` and a connection count, loopback servers only):

- ``waves``: N connections (default 64) running a mix of short CPU-bound
  ``SELECT BENCHMARK(n, MD5(..))``, point selects and small transactions on a table in
  `sbtest`; the number of busy connections rises and falls in waves so charts move.
- ``stall``: the REFERENCE.md stall recipe: 6 connections each running a calibrated ~3 s
  CPU-bound statement, back to back. With thread_pool_size=1 and
  thread_pool_stall_limit=100 the STALLS counters climb within seconds.
- ``trx``: transactions that hold row locks for seconds plus waiters queueing behind them,
  so INNODB_TRX shows LOCK WAIT rows and THREAD_POOL_WAITS counts ROW_LOCK.

CLI: ``python -m poolscope_dev.loadgen --dsn mysql://sbtest:PW@127.0.0.1:PORT/
--mode waves --duration 600 --connections 64``. Stops cleanly on SIGINT / SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import ipaddress
import logging
import math
import random
import signal
import socket
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import aiomysql

from poolscope.dsn import DsnError
from poolscope.dsn import parse_dsn as dsn_parts

log = logging.getLogger(__name__)

MODES = ("waves", "stall", "trx")
DEFAULT_CONNECTIONS = {"waves": 64, "stall": 6, "trx": 12}
MAX_CONNECTIONS = 1000
MAX_DURATION_S = 24 * 3600.0
TABLE = "poolscope_load"
TABLE_ROWS = 2000

# Error codes that are part of normal life under this load: retry, don't count as trouble.
_EXPECTED_ERRORS = {
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


class LoadGenerator:
    """One bounded load run. ``await run()`` returns LoadStats; ``stop()`` ends it early."""

    def __init__(
        self,
        dsn: str,
        mode: str = "waves",
        duration_s: float = 60.0,
        connections: int | None = None,
        *,
        database: str = "sbtest",
        wave_period_s: float = 40.0,
        short_cpu_ms: float = 15.0,
        stall_seconds: float = 3.0,
        stall_pingers: int = 2,
        lock_hold_s: tuple[float, float] = (2.0, 5.0),
        progress_every_s: float = 10.0,
        seed: int | None = None,
    ) -> None:
        if mode not in MODES:
            raise LoadgenError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        if not 0 < duration_s <= MAX_DURATION_S:
            raise LoadgenError(f"duration_s must be in (0, {MAX_DURATION_S:.0f}]")
        n = connections if connections is not None else DEFAULT_CONNECTIONS[mode]
        if not 1 <= n <= MAX_CONNECTIONS:
            raise LoadgenError(f"connections must be in [1, {MAX_CONNECTIONS}]")
        if mode == "trx" and n < 2:
            raise LoadgenError("trx mode needs at least 2 connections (a holder and a waiter)")
        self.params = parse_dsn(dsn, database)
        self.mode = mode
        self.duration_s = float(duration_s)
        self.connections = n
        self.wave_period_s = max(2.0, wave_period_s)
        self.short_cpu_ms = short_cpu_ms
        self.stall_seconds = stall_seconds
        self.stall_pingers = max(0, stall_pingers) if mode == "stall" else 0
        self.lock_hold_s = lock_hold_s
        self.progress_every_s = progress_every_s
        self.stats = LoadStats(mode=mode, connections=n + self.stall_pingers)
        self._rng = random.Random(seed)
        self._stop = asyncio.Event()
        self._t0 = 0.0
        self._iters_per_ms = 0.0
        # worker index -> server thread id while a statement runs (for KILL QUERY at stop)
        self._busy: dict[int, int] = {}
        self._conns: dict[int, aiomysql.Connection] = {}

    # ---------------------------------------------------------------- public

    def stop(self) -> None:
        self._stop.set()

    async def run(self) -> LoadStats:
        self._t0 = time.monotonic()
        log.info(
            "load %s on %s: %d connections for %.0fs",
            self.mode,
            self.params.safe(),
            self.connections,
            self.duration_s,
        )
        for attempt in range(1, 4):
            try:
                await self._prepare()
                break
            except (aiomysql.MySQLError, OSError, TimeoutError) as e:
                out_of_time = time.monotonic() - self._t0 + 2.0 * attempt >= self.duration_s
                if attempt == 3 or self._stop.is_set() or out_of_time:
                    raise LoadgenError(f"cannot prepare load on {self.params.safe()}: {_describe(e)}") from e
                log.warning("preparing load failed (%s); retrying", _describe(e))
                await self._sleep(2.0 * attempt)
        if self.mode == "waves":
            workers = [self._waves_worker(i) for i in range(self.connections)]
        elif self.mode == "stall":
            workers = [self._stall_worker(i) for i in range(self.connections)]
            workers += [self._pinger_worker(self.connections + i) for i in range(self.stall_pingers)]
        else:
            holders = max(1, self.connections // 4)
            workers = [self._holder_worker(i) for i in range(holders)]
            workers += [
                self._waiter_worker(holders + i, i % holders) for i in range(self.connections - holders)
            ]
        tasks = [asyncio.create_task(w) for w in workers]
        progress = asyncio.create_task(self._progress())
        try:
            remaining = self.duration_s - (time.monotonic() - self._t0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=max(0.0, remaining))
        finally:
            self._stop.set()
            # Snapshot before cancelling: the workers' finally blocks clear their entries.
            busy = list(self._busy.values())
            progress.cancel()
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, progress, return_exceptions=True)
            self._busy.clear()
            for conn in self._conns.values():
                conn.close()
            self._conns.clear()
            await self._kill_queries(busy)
            self.stats.elapsed_s = time.monotonic() - self._t0
        log.info("load finished: %s", self.stats.summary())
        return self.stats

    # ---------------------------------------------------------------- setup

    async def _connect(self, **kwargs: Any) -> aiomysql.Connection:
        p = self.params
        return await aiomysql.connect(
            host=p.host,
            port=p.port,
            user=p.user,
            password=p.password,
            db=p.database,
            autocommit=True,
            charset="utf8mb4",
            connect_timeout=10,
            **kwargs,
        )

    async def _prepare(self) -> None:
        conn = await asyncio.wait_for(self._connect(), timeout=30)
        try:
            async with conn.cursor() as cur:
                await cur.execute(
                    "SELECT COUNT(*) FROM information_schema.TABLES"
                    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s",
                    (TABLE,),
                )
                exists = await cur.fetchone()
                if not exists or not exists[0]:
                    await self._create_table(cur)
                await cur.execute(f"SELECT COUNT(*) FROM {TABLE}")
                row = await cur.fetchone()
                if row is None or row[0] < TABLE_ROWS:
                    for start in range(1, TABLE_ROWS + 1, 500):
                        values = [
                            (i, self._rng.randrange(1000), f"row-{i:06d}")
                            for i in range(start, min(start + 500, TABLE_ROWS + 1))
                        ]
                        with warnings.catch_warnings():  # duplicate-key notes from IGNORE
                            warnings.simplefilter("ignore")
                            await cur.executemany(
                                f"INSERT IGNORE INTO {TABLE} (id, k, c) VALUES (%s, %s, %s)", values
                            )
                if self.mode in ("waves", "stall"):
                    await self._calibrate(cur)
        finally:
            conn.close()

    @staticmethod
    async def _create_table(cur: aiomysql.Cursor) -> None:
        # IF NOT EXISTS still matters: two generators may start at once.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await cur.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} ("
                " id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0,"
                " c CHAR(60) NOT NULL DEFAULT '', KEY k_idx (k)) ENGINE=InnoDB"
            )

    async def _calibrate(self, cur: aiomysql.Cursor) -> None:
        """Measure BENCHMARK(MD5) iterations per ms on this server (best of a few runs)."""
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
        self._iters_per_ms = best
        log.info("calibrated: %.0f BENCHMARK(MD5) iterations per ms", best)

    def _iterations_for(self, ms: float) -> int:
        return max(1000, int(self._iters_per_ms * ms))

    # ---------------------------------------------------------------- workers

    async def _session(
        self, i: int, statement_cap_s: float, extra_sql: tuple[str, ...] = ()
    ) -> aiomysql.Connection | None:
        """Worker i's connection, (re)connecting with bounded backoff; None once stopped."""
        conn = self._conns.get(i)
        if conn is not None and not conn.closed:
            return conn
        backoff = 0.2
        while not self._stop.is_set():
            try:
                conn = await self._connect()
                async with conn.cursor() as cur:
                    # A statement can never outlive the run by much, even if our KILL fails.
                    with contextlib.suppress(aiomysql.MySQLError):
                        await cur.execute(f"SET SESSION max_statement_time = {statement_cap_s:.1f}")
                    for sql in extra_sql:
                        await cur.execute(sql)
                self._conns[i] = conn
                return conn
            except (aiomysql.MySQLError, OSError, TimeoutError) as e:
                self._record_error(e)
                self.stats.reconnects += 1
                await self._sleep(backoff)
                backoff = min(backoff * 2, 3.0)
        return None

    def _drop(self, i: int) -> None:
        conn = self._conns.pop(i, None)
        if conn is not None:
            conn.close()

    async def _execute(self, i: int, conn: aiomysql.Connection, sql: str, args: Any = None) -> None:
        self._busy[i] = conn.thread_id()
        try:
            async with conn.cursor() as cur:
                await cur.execute(sql, args)
                await cur.fetchall()
        finally:
            self._busy.pop(i, None)

    def _wave_active(self) -> int:
        """How many of the waves workers should be busy now: 15 % .. 100 %, period wave_period_s."""
        t = time.monotonic() - self._t0
        frac = 0.15 + 0.85 * (0.5 - 0.5 * math.cos(2 * math.pi * t / self.wave_period_s))
        return max(1, round(frac * self.connections))

    async def _waves_worker(self, i: int) -> None:
        rng = random.Random(self._rng.random())
        while not self._stop.is_set():
            if i >= self._wave_active():
                await self._sleep(0.25)
                continue
            conn = await self._session(i, statement_cap_s=10)
            if conn is None:
                break
            try:
                roll = rng.random()
                if roll < 0.4:
                    ms = rng.uniform(0.3, 1.7) * self.short_cpu_ms
                    await self._execute(
                        i, conn, "SELECT BENCHMARK(%s, MD5(%s))", (self._iterations_for(ms), f"w{i}")
                    )
                    self.stats.benchmark_iterations += self._iterations_for(ms)
                elif roll < 0.75:
                    row_id = rng.randint(1, TABLE_ROWS)
                    await self._execute(i, conn, f"SELECT c, k FROM {TABLE} WHERE id = %s", (row_id,))
                else:
                    row_id = rng.randint(1, TABLE_ROWS)
                    await self._execute(i, conn, "BEGIN")
                    await self._execute(i, conn, f"SELECT k FROM {TABLE} WHERE id = %s FOR UPDATE", (row_id,))
                    await self._execute(i, conn, f"UPDATE {TABLE} SET k = k + 1 WHERE id = %s", (row_id,))
                    await self._execute(i, conn, "COMMIT")
                self.stats.ops += 1
            except (aiomysql.MySQLError, OSError, TimeoutError) as e:
                await self._handle_error(i, e)
            await self._sleep(rng.uniform(0.0, 0.02))

    async def _stall_worker(self, i: int) -> None:
        iterations = self._iterations_for(self.stall_seconds * 1000)
        cap = self.stall_seconds * 4 + 10
        while not self._stop.is_set():
            conn = await self._session(i, statement_cap_s=cap)
            if conn is None:
                break
            try:
                await self._execute(i, conn, "SELECT BENCHMARK(%s, MD5(%s))", (iterations, f"stall{i}"))
                self.stats.ops += 1
                self.stats.benchmark_iterations += iterations
            except (aiomysql.MySQLError, OSError, TimeoutError) as e:
                await self._handle_error(i, e)
                await self._sleep(0.2)

    async def _pinger_worker(self, i: int) -> None:
        """Short queries arriving behind the long ones, as an application's would.

        They queue while every pool thread is busy, which is what makes the pool's stall
        detector fire (and what a user feels as latency); their latency is recorded.
        """
        rng = random.Random(self._rng.random())
        while not self._stop.is_set():
            conn = await self._session(i, statement_cap_s=30)
            if conn is None:
                break
            try:
                t = time.perf_counter()
                await self._execute(
                    i, conn, f"SELECT c FROM {TABLE} WHERE id = %s", (rng.randint(1, TABLE_ROWS),)
                )
                self.stats.ping_ms.append((time.perf_counter() - t) * 1000)
                self.stats.ops += 1
            except (aiomysql.MySQLError, OSError, TimeoutError) as e:
                await self._handle_error(i, e)
            await self._sleep(0.05)

    async def _holder_worker(self, i: int) -> None:
        """Lock row `i + 1` and sit on it for a few seconds, as a forgetful application would."""
        rng = random.Random(self._rng.random())
        row_id = i + 1
        lo, hi = self.lock_hold_s
        while not self._stop.is_set():
            conn = await self._session(i, statement_cap_s=hi * 3 + 10)
            if conn is None:
                break
            try:
                await self._execute(i, conn, "BEGIN")
                await self._execute(i, conn, f"SELECT k FROM {TABLE} WHERE id = %s FOR UPDATE", (row_id,))
                hold = round(rng.uniform(lo, hi), 2)
                if rng.random() < 0.5:
                    await self._sleep(hold)  # idle in transaction (command "Sleep")
                else:
                    await self._execute(i, conn, "DO SLEEP(%s)", (hold,))  # busy in transaction
                await self._execute(i, conn, "COMMIT")
                self.stats.ops += 1
            except (aiomysql.MySQLError, OSError, TimeoutError) as e:
                await self._handle_error(i, e)
            await self._sleep(rng.uniform(0.1, 0.5))

    async def _waiter_worker(self, i: int, holder: int) -> None:
        rng = random.Random(self._rng.random())
        row_id = holder + 1
        wait_cap = int(self.lock_hold_s[1] * 3 + 5)
        while not self._stop.is_set():
            conn = await self._session(
                i,
                statement_cap_s=wait_cap * 2,
                extra_sql=(f"SET SESSION innodb_lock_wait_timeout = {wait_cap}",),
            )
            if conn is None:
                break
            try:
                await self._execute(i, conn, "BEGIN")
                await self._execute(i, conn, f"UPDATE {TABLE} SET k = k + 1 WHERE id = %s", (row_id,))
                await self._execute(i, conn, "COMMIT")
                self.stats.ops += 1
            except (aiomysql.MySQLError, OSError, TimeoutError) as e:
                await self._handle_error(i, e)
            await self._sleep(rng.uniform(0.05, 0.3))

    # ---------------------------------------------------------------- helpers

    async def _sleep(self, seconds: float) -> None:
        """Sleep, but wake at once when the run is stopped."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), timeout=seconds)

    def _record_error(self, e: BaseException) -> None:
        code = _error_code(e)
        if code in _EXPECTED_ERRORS:
            self.stats.expected_errors += 1
        else:
            self.stats.errors += 1
        self.stats.error_kinds[str(code) if code else type(e).__name__] += 1
        if self.stats.errors and self.stats.errors <= 3 and code not in _EXPECTED_ERRORS:
            log.warning("load error (will retry): %s", _describe(e))

    async def _handle_error(self, i: int, e: BaseException) -> None:
        self._record_error(e)
        code = _error_code(e)
        # Lock timeouts / deadlocks keep the connection usable after a ROLLBACK; anything
        # else (lost connection, server gone) means reconnect.
        if code in _EXPECTED_ERRORS and code not in (1317,):
            conn = self._conns.get(i)
            if conn is not None and not conn.closed:
                try:
                    await asyncio.wait_for(conn.rollback(), timeout=5)
                    return
                except (aiomysql.MySQLError, OSError, TimeoutError):
                    pass
        self._drop(i)

    async def _kill_queries(self, thread_ids: list[int]) -> None:
        """Best effort: KILL QUERY statements still running for us, so the server calms down now."""
        if not thread_ids:
            return

        async def _kill() -> None:
            conn = await self._connect()
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

    async def _progress(self) -> None:
        last_ops, last_t = 0, time.monotonic()
        while True:
            await asyncio.sleep(self.progress_every_s)
            now = time.monotonic()
            rate = (self.stats.ops - last_ops) / max(now - last_t, 1e-6)
            active = self._wave_active() if self.mode == "waves" else len(self._conns)
            log.info(
                "%s t=%.0fs busy=%d/%d ops=%d (%.0f/s) errors=%d expected=%d",
                self.mode,
                now - self._t0,
                active,
                self.connections,
                self.stats.ops,
                rate,
                self.stats.errors,
                self.stats.expected_errors,
            )
            last_ops, last_t = self.stats.ops, now


def _error_code(e: BaseException) -> int | None:
    if isinstance(e, aiomysql.MySQLError) and e.args and isinstance(e.args[0], int):
        return e.args[0]
    return None


def _describe(e: BaseException) -> str:
    code = _error_code(e)
    if code is not None and len(e.args) > 1:
        return f"MySQL error {code}: {e.args[1]}"
    return f"{type(e).__name__}: {e}"


async def run_load(dsn: str, mode: str = "waves", duration_s: float = 60.0, **kwargs: Any) -> LoadStats:
    """Convenience wrapper: one bounded run of LoadGenerator."""
    return await LoadGenerator(dsn, mode, duration_s, **kwargs).run()


# ---------------------------------------------------------------------- CLI


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m poolscope_dev.loadgen",
        description="Generate bounded load against a loopback MariaDB/MySQL server.",
    )
    p.add_argument("--dsn", required=True, help="mysql://user:pass@127.0.0.1:PORT/[db] (loopback only)")
    p.add_argument("--mode", choices=MODES, default="waves")
    p.add_argument("--duration", type=float, default=60.0, help="seconds (max 86400)")
    p.add_argument("--connections", type=int, default=None, help="default: waves 64, stall 6, trx 12")
    p.add_argument("--wave-period", type=float, default=40.0, help="waves: seconds per wave")
    p.add_argument("--stall-seconds", type=float, default=3.0, help="stall: length of each statement")
    p.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    p.add_argument("--quiet", action="store_true", help="only warnings and the summary")
    return p.parse_args(argv)


async def _amain(args: argparse.Namespace) -> int:
    gen = LoadGenerator(
        args.dsn,
        args.mode,
        args.duration,
        args.connections,
        wave_period_s=args.wave_period,
        stall_seconds=args.stall_seconds,
        progress_every_s=args.progress_every,
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, gen.stop)
    stats = await gen.run()
    print(stats.summary(), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s loadgen: %(message)s",
        stream=sys.stderr,
    )
    try:
        return asyncio.run(_amain(args))
    except LoadgenError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
