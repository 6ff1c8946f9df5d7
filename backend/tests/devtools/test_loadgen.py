"""The load generator really makes the pool queue, stall and wait on row locks."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import aiomysql
import pymysql
import pytest

from poolscope_dev import sysbench
from poolscope_dev.loadgen import LoadGenerator
from poolscope_dev.loadtarget import LoadgenError, LoadStats, parse_dsn
from poolscope_dev.sandbox import MONITOR_PASSWORD, MONITOR_USER, SBTEST_USER, MariaDBSandbox
from tests.waiting import await_for, wait_for

pytestmark = pytest.mark.live  # a MariaDB sandbox of its own (tests/conftest.py lanes)


@pytest.fixture(scope="module")
def tight_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MariaDBSandbox]:
    """One pool group and a 100 ms stall limit: the server of the stall recipe (loadgen's `stall`)."""
    sb = MariaDBSandbox(tmp_path_factory.mktemp("tight_pool"), thread_pool_size=1, stall_limit_ms=100)
    sb.start()
    try:
        yield sb
    finally:
        sb.destroy()


async def _sample_until(
    sb: MariaDBSandbox, sql: str, predicate: Callable[[float], bool], timeout_s: float
) -> tuple[bool, float]:
    """Poll `sql` (one number) on the extra port every 100 ms until predicate holds or timeout."""
    conn = await aiomysql.connect(
        host=sb.host, port=sb.extra_port, user=MONITOR_USER, password=MONITOR_PASSWORD, autocommit=True
    )
    best = 0.0

    async def read() -> float:
        nonlocal best
        async with conn.cursor() as cur:
            await cur.execute(sql)
            row = await cur.fetchone()
        value = float(row[0] or 0) if row else 0.0
        best = max(best, value)
        return value

    try:
        return True, await await_for(read, timeout_s, sql, 0.1, predicate)
    except AssertionError:  # timed out: the callers say what was seen instead
        return False, best
    finally:
        conn.close()


async def _run_while(
    gen: LoadGenerator, check: Awaitable[tuple[bool, float]]
) -> tuple[bool, float, LoadStats]:
    task = asyncio.create_task(gen.run())
    try:
        seen, value = await check
    finally:
        gen.stop()
        stats = await asyncio.wait_for(task, timeout=20)
    return seen, value, stats


async def test_waves_makes_the_pool_queue(tight_pool: MariaDBSandbox) -> None:
    gen = LoadGenerator(tight_pool.dsn(SBTEST_USER, database="sbtest"), "waves", duration_s=10)

    async def queue_then_work() -> tuple[bool, float]:
        seen = await _sample_until(
            tight_pool,
            "SELECT MAX(QUEUE_LENGTH) FROM information_schema.THREAD_POOL_GROUPS",
            lambda v: v > 0,
            timeout_s=10,
        )
        # Logins alone can fill the queue; let some statements finish too (bounded).
        await await_for(lambda: gen.stats.ops, 10, "no statement finished", every_s=0.1)
        return seen

    seen, value, stats = await _run_while(gen, queue_then_work())
    assert seen, f"QUEUE_LENGTH stayed 0 under waves load ({stats.summary()})"
    assert stats.ops > 0
    assert stats.errors == 0, stats.summary()


async def test_stall_mode_trips_the_stall_counters(tight_pool: MariaDBSandbox) -> None:
    before = await _sample_until(
        tight_pool,
        "SELECT SUM(STALLS) FROM information_schema.THREAD_POOL_STATS",
        lambda v: True,
        timeout_s=5,
    )
    start = before[1]
    gen = LoadGenerator(
        tight_pool.dsn(SBTEST_USER, database="sbtest"), "stall", duration_s=10, stall_seconds=2
    )
    seen, value, stats = await _run_while(
        gen,
        _sample_until(
            tight_pool,
            "SELECT SUM(STALLS) FROM information_schema.THREAD_POOL_STATS",
            lambda v: v >= start + 3,
            timeout_s=10,
        ),
    )
    assert seen, f"STALLS went {start} -> {value} ({stats.summary()})"


async def test_trx_mode_produces_lock_waits(tight_pool: MariaDBSandbox) -> None:
    gen = LoadGenerator(tight_pool.dsn(SBTEST_USER, database="sbtest"), "trx", duration_s=10, connections=6)
    seen, value, stats = await _run_while(
        gen,
        _sample_until(
            tight_pool,
            "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'",
            lambda v: v > 0,
            timeout_s=10,
        ),
    )
    assert seen, f"no LOCK WAIT rows in INNODB_TRX ({stats.summary()})"


async def test_stop_leaves_no_statement_running(tight_pool: MariaDBSandbox) -> None:
    gen = LoadGenerator(
        tight_pool.dsn(SBTEST_USER, database="sbtest"), "stall", duration_s=3, stall_seconds=5
    )
    await asyncio.wait_for(gen.run(), timeout=30)
    ok, left = await _sample_until(
        tight_pool,
        f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '{SBTEST_USER}'",
        lambda v: v == 0,
        timeout_s=5,
    )
    assert ok, f"{left:.0f} load connections still on the server after stop"


async def test_survives_killed_connections(tight_pool: MariaDBSandbox) -> None:
    gen = LoadGenerator(tight_pool.dsn(SBTEST_USER, database="sbtest"), "waves", duration_s=8, connections=8)
    task = asyncio.create_task(gen.run())
    await await_for(lambda: gen.stats.ops > 0 or task.done(), 15, "the load never ran a statement")
    admin = await aiomysql.connect(
        host=tight_pool.host, port=tight_pool.extra_port, user=MONITOR_USER, password=MONITOR_PASSWORD
    )
    root = tight_pool.admin_connect()
    try:
        async with admin.cursor() as cur:
            await cur.execute(f"SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '{SBTEST_USER}'")
            ids = [r[0] for r in await cur.fetchall()]
        with root.cursor() as rcur:
            for tid in ids:
                with contextlib.suppress(pymysql.MySQLError):  # it may have gone already
                    rcur.execute(f"KILL CONNECTION {int(tid)}")
        ops_at_kill = gen.stats.ops
    finally:
        admin.close()
        root.close()
    stats = await asyncio.wait_for(task, timeout=30)
    assert ids, "no load connections found to kill"
    assert stats.reconnects + stats.errors > 0, stats.summary()
    assert stats.ops > ops_at_kill, f"load did not carry on after the kill ({stats.summary()})"


def test_refuses_non_loopback_targets() -> None:
    for dsn in ("mysql://u:p@10.0.0.5:3306/", "mysql://u:p@192.168.1.2/", "mysql://u:p@8.8.8.8/"):
        with pytest.raises(LoadgenError, match="only loopback"):
            LoadGenerator(dsn, "waves", duration_s=1)
    assert parse_dsn("mysql://u:p%40x@127.0.0.2:3307/db").password == "p@x"
    assert parse_dsn("mysql://u:p@localhost/").database == "sbtest"
    with pytest.raises(LoadgenError):
        LoadGenerator("mysql://u:p@127.0.0.1/", "waves", duration_s=0)
    with pytest.raises(LoadgenError):
        LoadGenerator("mysql://u:p@127.0.0.1/", "waves", duration_s=5, connections=100_000)


def test_cli_stops_cleanly_on_sigterm(tight_pool: MariaDBSandbox) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "poolscope_dev.loadgen",
            "--dsn",
            tight_pool.dsn(SBTEST_USER, database="sbtest"),
            "--mode",
            "waves",
            "--duration",
            "120",
            "--connections",
            "8",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def load_on_the_server() -> bool:
        if proc.poll() is not None:
            return True  # ended early: said below
        root = tight_pool.admin_connect()
        try:
            with root.cursor() as cur:
                cur.execute(
                    f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '{SBTEST_USER}'"
                )
                return cur.fetchone()[0] > 0
        finally:
            root.close()

    try:
        wait_for(load_on_the_server, 20, "the load never connected")
        assert proc.poll() is None, proc.communicate()
        t = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
        took = time.monotonic() - t
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err
    assert took < 10
    assert "waves:" in out and "ops in" in out
    assert MONITOR_PASSWORD not in err and "sbtest-sandbox-pw" not in err


SYSBENCH_SAMPLE = """
SQL statistics:
    queries performed:
        read:                            32494
        write:                           9284
        other:                           4642
        total:                           46420
    transactions:                        2321   (229.52 per sec.)
    queries:                             46420  (4590.31 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          10.1107s
    total number of events:              2321

Latency (ms):
         min:                                    3.50
         avg:                                  276.07
         max:                                 1214.60
         95th percentile:                      590.56
         sum:                               640752.92
"""


def test_parse_sysbench_output() -> None:
    res = sysbench.parse_output(SYSBENCH_SAMPLE, "oltp_read_write", 64, 10)
    assert res.tps == 229.52 and res.transactions == 2321
    assert res.qps == 4590.31 and res.queries == 46420
    assert res.latency_avg_ms == 276.07 and res.latency_p95_ms == 590.56
    assert res.time_s == 10.1107 and res.threads == 64
    with pytest.raises(sysbench.SysbenchError):
        sysbench.parse_output("FATAL: error 2003", "oltp_read_write")


@pytest.mark.skipif(not sysbench.available(), reason="sysbench not installed")
def test_sysbench_prepare_and_run(mariadb: MariaDBSandbox) -> None:
    target = sysbench.SysbenchTarget.from_sandbox(mariadb)
    assert sysbench.prepare(target, tables=2, table_size=1000) is True
    assert sysbench.prepare(target, tables=2, table_size=1000) is False  # idempotent
    res = sysbench.run(target, "oltp_read_write", threads=8, time_s=2, tables=2, table_size=1000)
    assert res.tps > 0 and res.qps > res.tps
    # The password is in an options file only this user can read, never in the argv (`ps` shows it).
    cmd = sysbench.command(target, "oltp_read_only", "run")
    assert not any(target.password in a for a in cmd)
    (options,) = [a.removeprefix("--config-file=") for a in cmd if a.startswith("--config-file=")]
    assert os.stat(options).st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(options)).st_mode & 0o777 == 0o700
    sysbench.cleanup(target, tables=2)
    assert not sysbench.prepared(target, tables=2, table_size=1000)


def test_sysbench_target_refuses_non_loopback(tmp_path: Path) -> None:
    with pytest.raises(sysbench.SysbenchError, match="only loopback"):
        sysbench.SysbenchTarget.from_dsn("mysql://sbtest:x@10.1.1.1:3306/sbtest")
