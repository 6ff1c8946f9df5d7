"""Helpers for live tests: settings for a target, polling until a condition, load on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from poolscope.analysis.counters import CounterMemory
from poolscope.analysis.holders import mariadb_group
from poolscope.analysis.last_statement import LastStatementMemory
from poolscope.analysis.ratios import CacheRatios
from poolscope.analysis.session_identity import SessionIdentities
from poolscope.analysis.stalls import StallDetector
from poolscope.config import Settings, TargetConfig
from poolscope.poller.collectors.base import ParseContext
from poolscope.poller.connection import Connection
from poolscope.poller.derive import TargetMemory
from poolscope.poller.target_poller import PollResult, TargetPoller
from poolscope.schemas import GroupState, ServerInfo
from poolscope_dev.sandbox import ADMIN_USER, MONITOR_PASSWORD, MONITOR_USER, SBTEST_USER, MariaDBSandbox
from tests.waiting import await_for

# A MariaDB server with its thread pool on, as discovery describes it: for parse steps run on rows.
MARIADB_POOL = ServerInfo(
    flavor="mariadb", version="10.11.19-MariaDB", thread_handling="pool-of-threads", pool_enabled=True
)


async def multi_statement_connection(
    sandbox: MariaDBSandbox, user: str = MONITOR_USER, password: str = MONITOR_PASSWORD, db: str | None = None
) -> Connection:
    """A bare connection as the poller opens them (the monitoring user's unless told, no
    userinfo to redact), which sends multi-statements as the poller's does."""
    conn = Connection(
        redact=str,
        host=sandbox.host,
        port=sandbox.port,
        user=user,
        password=password,
        database=db,
        autocommit=True,
    )
    await conn.connect()
    return conn


def group_state(queue_length: int = 0) -> GroupState:
    """One thread group as the pool tables list it (group 0, 5 connections)."""
    return GroupState(
        group_id=0,
        connections=5,
        threads=2,
        active_threads=1,
        standby_threads=1,
        queue_length=queue_length,
        has_listener=True,
        is_stalled=False,
    )


def target_memory() -> TargetMemory:
    """What deriving remembers of a target, fresh."""
    return TargetMemory(StallDetector(), CacheRatios(60.0), LastStatementMemory(), SessionIdentities())


def parse_context(connections: int | None = None, now: float = 0.0) -> ParseContext:
    """What a collector's parse step sees, without a server or a poller."""
    return ParseContext(now=now, server=MARIADB_POOL, counters=CounterMemory(), connections=connections)


def poller_for(dsn: str, name: str = "t", **target: object) -> TargetPoller:
    settings = Settings(poll_interval_s=0.5, targets=[TargetConfig(name=name, dsn=dsn, **target)])
    return TargetPoller(settings.targets[0], settings)


async def poll_until(
    poller: TargetPoller,
    condition: Callable[[PollResult], bool],
    timeout_s: float = 20.0,
    every_s: float = 0.5,
) -> list[PollResult]:
    """Poll until the condition holds on a result (bounded in time: else the test fails); return
    every result seen."""
    seen: list[PollResult] = []

    async def poll() -> PollResult:
        seen.append(await poller.poll_once())
        return seen[-1]

    await await_for(
        poll,
        timeout_s,
        lambda last: f"no poll of {len(seen)} met the condition (the last: {last.info.status})",
        every_s,
        condition,
    )
    return seen


@contextmanager
def global_variables(sandbox: MariaDBSandbox, **values: object) -> Iterator[None]:
    """SET GLOBAL for the block, restoring the previous values afterwards."""
    conn = sandbox.admin_connect()
    try:
        with conn.cursor() as cur:
            old = {}
            for name in values:
                cur.execute(f"SELECT @@GLOBAL.{name}")
                old[name] = cur.fetchone()[0]
            for name, value in values.items():
                cur.execute(f"SET GLOBAL {name} = %s", (value,))
        yield
    finally:
        with conn.cursor() as cur:
            for name, value in old.items():
                cur.execute(f"SET GLOBAL {name} = %s", (value,))
        conn.close()


def calibrate_benchmark(sandbox: MariaDBSandbox, seconds: float, extra: bool = True) -> int:
    """BENCHMARK() loop count that keeps one CPU busy for about `seconds` on this machine."""
    conn = sandbox.connect(SBTEST_USER, extra=extra)
    try:
        with conn.cursor() as cur:
            started = time.perf_counter()
            cur.execute("SELECT BENCHMARK(500000, MD5('poolscope'))")
            elapsed = max(time.perf_counter() - started, 1e-3)
    finally:
        conn.close()
    return max(int(500000 * seconds / elapsed), 100000)


@contextmanager
def cpu_burst(
    sandbox: MariaDBSandbox, heavy: int, light: int, seconds: float, rounds: int = 2
) -> Iterator[None]:
    """`heavy` connections run CPU-bound statements of ~`seconds` each, `light` ones run SELECT 1s.

    Connections are opened before the burst so the queued requests are queries, not logins.
    """
    loops = calibrate_benchmark(sandbox, seconds)
    conns = [sandbox.connect(SBTEST_USER) for _ in range(heavy + light)]
    for conn in conns:
        conn.cursor().execute("SELECT 1")

    def run(index: int) -> None:
        sql = (
            f"SELECT BENCHMARK({loops}, MD5('poolscope')) /* burst {index} */"
            if index < heavy
            else "SELECT 1"
        )
        try:
            with conns[index].cursor() as cur:
                for _ in range(rounds if index < heavy else rounds * 20):
                    cur.execute(sql)
        except Exception:
            pass  # the server may be restarted by a later test; the burst is best effort

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(conns))]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        for thread in threads:
            thread.join(timeout=seconds * rounds + 30)
        for conn in conns:
            conn.close()


def connections_in_group(sandbox: MariaDBSandbox, group: int, size: int, count: int) -> list:
    """`count` sbtest connections whose id puts them in `group` by MariaDB's rule (others closed)."""
    chosen, spare = [], []
    for _ in range(count * size * 3):
        conn = sandbox.connect(SBTEST_USER)
        (chosen if mariadb_group(conn.thread_id(), size) == group else spare).append(conn)
        if len(chosen) == count:
            break
    for conn in spare:
        conn.close()
    assert len(chosen) == count
    return chosen


@contextmanager
def running(
    conns: list, statements: list[str], repeat: int = 1, sandbox: MariaDBSandbox | None = None
) -> Iterator[None]:
    """Each connection runs its statement up to `repeat` times in a thread; joined on exit.

    With a sandbox, the block's end stops them: the repeats end and the running statements are
    killed, so a CPU-bound shape holds its group for the whole block whatever the machine's load
    (a loop count calibrated on a busy machine may run several times faster once it is not)."""
    stop = threading.Event()

    def run(conn, sql: str) -> None:
        try:
            with conn.cursor() as cur:
                for _ in range(repeat):
                    if stop.is_set():
                        break
                    cur.execute(sql)
        except Exception:
            pass  # a killed or timed-out statement ends this worker

    threads = [
        threading.Thread(target=run, args=(c, s), daemon=True) for c, s in zip(conns, statements, strict=True)
    ]
    ids = [c.thread_id() for c in conns]
    for thread in threads:
        thread.start()
        time.sleep(0.05)
    try:
        yield
    finally:
        stop.set()
        if sandbox is not None:
            killer = sandbox.connect(ADMIN_USER, extra=True)
            try:
                with killer.cursor() as cur:
                    for connection_id in ids:
                        cur.execute(f"KILL QUERY {int(connection_id)}")
            finally:
                killer.close()
        for thread in threads:
            thread.join(timeout=120)
        for conn in conns:
            conn.close()
