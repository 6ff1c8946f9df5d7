"""A running Poolscope (real uvicorn) with users, and load shapes that make a real MariaDB misbehave."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pymysql

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, UserConfig
from poolscope_dev.sandbox import SBTEST_USER, MariaDBSandbox
from tests.poller.helpers import calibrate_benchmark
from tests.served import ready_app

OPERATOR_PW = "op-live-pw"
VIEWER_PW = "vi-live-pw"


@contextlib.contextmanager
def running_app(settings: Settings) -> Iterator[str]:
    """Serve `settings` with users op (operator) and vi (viewer); yields the base URL."""
    settings = settings.model_copy(
        update={
            "users": [
                UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW)),
                UserConfig(name="vi", role="viewer", password_hash=hash_password(VIEWER_PW)),
            ]
        }
    )
    with ready_app(settings) as base:
        yield base


def global_value(sandbox: MariaDBSandbox, variable: str) -> str:
    conn = sandbox.admin_connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"SELECT @@GLOBAL.{variable}")
            return str(cur.fetchone()[0])
    finally:
        conn.close()


def set_global(sandbox: MariaDBSandbox, **values: object) -> None:
    conn = sandbox.admin_connect()
    try:
        with conn.cursor() as cur:
            for name, value in values.items():
                cur.execute(f"SET GLOBAL {name} = %s", (value,))
    finally:
        conn.close()


class BlockingLoad:
    """Long CPU-bound statements in every group, short SELECT 1s and open transactions beside them.

    With a large thread_pool_stall_limit the short requests wait behind the long ones (queues,
    long waits, groups judged stalled); with a small one the pool adds workers and they fly.
    Runs until stop(); every thread is bounded by `max_s`.
    """

    def __init__(
        self,
        sandbox: MariaDBSandbox,
        *,
        heavy_s: float = 0.4,
        light: int = 6,
        trx: int = 2,
        max_s: float = 180,
    ):
        self.sandbox = sandbox
        # On the normal port: the extra_port's single slot may be Poolscope's.
        self.loops = calibrate_benchmark(sandbox, heavy_s, extra=False)
        self.light = light
        self.trx = trx
        self.max_s = max_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._conns: list[pymysql.connections.Connection[Any]] = []

    def _connect(self) -> pymysql.connections.Connection[Any]:
        conn = self.sandbox.connect(SBTEST_USER, database="sbtest")
        self._conns.append(conn)
        return conn

    def _heavy_connections(self) -> list[pymysql.connections.Connection[Any]]:
        # Groups are chosen by connection id modulo thread_pool_size: one heavy per parity.
        found: dict[int, pymysql.connections.Connection[Any]] = {}
        for _ in range(10):
            conn = self._connect()
            with conn.cursor() as cur:
                cur.execute("SELECT CONNECTION_ID()")
                found.setdefault(int(cur.fetchone()[0]) % 2, conn)
            if len(found) == 2:
                break
        return list(found.values())

    def _loop(self, conn: pymysql.connections.Connection[Any], statements: list[str]) -> None:
        deadline = time.monotonic() + self.max_s
        try:
            with conn.cursor() as cur:
                while not self._stop.is_set() and time.monotonic() < deadline:
                    for sql in statements:
                        cur.execute(sql)
                        cur.fetchall()
        except pymysql.MySQLError:
            pass  # stop() closes connections under running statements

    def __enter__(self) -> BlockingLoad:
        heavy = f"SELECT BENCHMARK({self.loops}, MD5('poolscope'))"
        work = [(c, [heavy]) for c in self._heavy_connections()]
        work += [(self._connect(), ["SELECT 1"]) for _ in range(self.light)]
        trx_body = ["START TRANSACTION WITH CONSISTENT SNAPSHOT", *(["SELECT 1"] * 20), "COMMIT"]
        work += [(self._connect(), trx_body) for _ in range(self.trx)]
        for conn, statements in work:
            thread = threading.Thread(target=self._loop, args=(conn, statements), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        for conn in self._conns:
            with contextlib.suppress(Exception):
                conn.close()

    def __exit__(self, *exc: object) -> None:
        self.stop()
