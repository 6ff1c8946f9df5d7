"""Built-in load generator that makes a MariaDB thread pool queue, stall or wait on locks.

Modes (all bounded by `duration_s` and a connection count, loopback servers only):

- ``waves``: N connections (default 64) running a mix of short CPU-bound
  ``SELECT BENCHMARK(n, MD5(..))``, point selects and small transactions on a table in
  `sbtest`; the number of busy connections rises and falls in waves so charts move.
- ``stall``: a reproducible stall: 6 connections each running a calibrated ~3 s
  CPU-bound statement, back to back. With thread_pool_size=1 and
  thread_pool_stall_limit=100 the STALLS counters climb within seconds.
- ``trx``: transactions that hold row locks for seconds plus waiters queueing behind them,
  so INNODB_TRX shows LOCK WAIT rows and THREAD_POOL_WAITS counts ROW_LOCK.

CLI: ``python -m poolscope_dev.loadgen --dsn mysql://sbtest:PW@127.0.0.1:PORT/
--mode waves --duration 600 --connections 64``. Stops cleanly on SIGINT / SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import sys
import time
from typing import Any

import aiomysql

from poolscope_dev.loadtarget import (
    EXPECTED_ERRORS,
    TABLE,
    TABLE_ROWS,
    LoadgenError,
    LoadStats,
    calibrate,
    describe,
    error_code,
    kill_queries,
    parse_dsn,
    prepare_table,
)

log = logging.getLogger(__name__)

MODES = ("waves", "stall", "trx")
DEFAULT_CONNECTIONS = {"waves": 64, "stall": 6, "trx": 12}
MAX_CONNECTIONS = 1000
MAX_DURATION_S = 24 * 3600.0


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
                    raise LoadgenError(f"cannot prepare load on {self.params.safe()}: {describe(e)}") from e
                log.warning("preparing load failed (%s); retrying", describe(e))
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
            await kill_queries(self._connect, busy)
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
                await prepare_table(cur, self._rng)
                if self.mode in ("waves", "stall"):
                    self._iters_per_ms = await calibrate(cur)
        finally:
            conn.close()

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
        code = error_code(e)
        if code in EXPECTED_ERRORS:
            self.stats.expected_errors += 1
        else:
            self.stats.errors += 1
        self.stats.error_kinds[str(code) if code else type(e).__name__] += 1
        if self.stats.errors and self.stats.errors <= 3 and code not in EXPECTED_ERRORS:
            log.warning("load error (will retry): %s", describe(e))

    async def _handle_error(self, i: int, e: BaseException) -> None:
        self._record_error(e)
        code = error_code(e)
        # Lock timeouts / deadlocks keep the connection usable after a ROLLBACK; anything
        # else (lost connection, server gone) means reconnect.
        if code in EXPECTED_ERRORS and code not in (1317,):
            conn = self._conns.get(i)
            if conn is not None and not conn.closed:
                try:
                    await asyncio.wait_for(conn.rollback(), timeout=5)
                    return
                except (aiomysql.MySQLError, OSError, TimeoutError):
                    pass
        self._drop(i)

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


async def run_load(dsn: str, mode: str = "waves", duration_s: float = 60.0, **kwargs: Any) -> LoadStats:
    """Convenience wrapper: one bounded run of LoadGenerator."""
    return await LoadGenerator(dsn, mode, duration_s, **kwargs).run()


if __name__ == "__main__":
    # The CLI lives in poolscope_dev/loadgen_cli.py; `python -m poolscope_dev.loadgen` stays its name.
    from poolscope_dev.loadgen_cli import main

    sys.exit(main())
