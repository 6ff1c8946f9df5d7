"""Collector SQL keeps the plainest shapes, so each poll makes as few temporary tables as possible.

Reads of information_schema tables with TEXT columns build on-disk Aria temporary tables; a
window-function query over THREAD_POOL_QUEUES joined to PROCESSLIST held more of them, longer,
and was the query that died when another server sharing the tmpdir started
(docs/decisions/0003-plain-statements-decoded-by-the-poller.md).
So: one information_schema table per statement, no window functions, no subqueries.
"""

from __future__ import annotations

import re
import threading
import time

import pytest
from pymysql.constants import CLIENT

from poolscope.poller.collectors import all_collectors
from poolscope.poller.collectors.session_lookup import SessionLookup
from poolscope.poller.collectors.thread_lookup import ThreadLookup
from poolscope.poller.collectors.trx_lookup import TrxLookup
from poolscope.poller.discovery import MYSQL_TP_TABLES, POOL_TABLES
from poolscope.schemas import ServerInfo
from poolscope_dev.loadgen import run_load
from poolscope_dev.sandbox import MONITOR_USER

SERVERS = [
    ServerInfo(
        flavor="mariadb",
        version="10.11.19-MariaDB",
        thread_handling="pool-of-threads",
        pool_enabled=True,
        pool_tables=list(POOL_TABLES),
        pool_kind="mariadb",
    ),
    ServerInfo(
        flavor="mariadb",
        version="10.11.19-MariaDB",
        thread_handling="one-thread-per-connection",
        pool_enabled=False,
    ),
    ServerInfo(
        flavor="mysql",
        version="8.0.36-commercial",
        thread_handling="loaded-dynamically",
        pool_enabled=True,
        pool_tables=list(MYSQL_TP_TABLES),
        pool_kind="mysql_enterprise",
    ),
    ServerInfo(
        flavor="percona",
        version="8.4.2-2",
        version_tuple=(8, 4, 2),
        thread_handling="pool-of-threads",
        pool_enabled=True,
        pool_kind="percona",
    ),
]
SCHEMA_TABLE = re.compile(r"\b(information_schema|performance_schema)\.\w+", re.IGNORECASE)


def statements():
    for server in SERVERS:
        # The on-demand lookup is not in the registry: the poller runs it itself.
        lookups = [
            SessionLookup().for_ids({3, 1, 2}),
            ThreadLookup().for_ids({7}),
            TrxLookup().for_ids({"42"}),
        ]
        for collector in [*all_collectors(), *lookups]:
            if collector.applies(server) is None:
                for form, sql in enumerate(collector.statements(server)):
                    yield pytest.param(
                        sql, id=f"{server.flavor}-{server.thread_handling}-{collector.name}-{form}"
                    )


@pytest.mark.parametrize("sql", list(statements()))
def test_collector_sql_has_a_plain_shape(sql):
    assert " OVER " not in sql.upper() and "OVER(" not in sql.upper().replace(" ", ""), "no window functions"
    assert len(SCHEMA_TABLE.findall(sql)) <= 1, (
        "one information_schema/performance_schema table per statement"
    )
    assert sql.upper().count("SELECT") <= 1, "no subqueries or derived tables"
    assert " JOIN " not in sql.upper(), "join in Python, not in SQL"


@pytest.mark.slow
async def test_full_poll_batch_under_load_leaves_the_server_running(mariadb, sbtest_dsn):
    """The whole batch at 20 Hz on extra_port while a load queues the pool: the server survives."""
    server = SERVERS[0]
    # Every form each collector may send (both processlist statements among them).
    batch = ";\n".join(
        sql for c in all_collectors() if c.applies(server) is None for sql in c.statements(server)
    )
    errors: list[BaseException] = []
    executed = 0

    def hammer() -> None:
        nonlocal executed
        conn = mariadb.connect(MONITOR_USER, extra=True, client_flag=CLIENT.MULTI_STATEMENTS)
        deadline = time.monotonic() + 15
        try:
            while time.monotonic() < deadline:
                with conn.cursor() as cur:
                    cur.execute(batch)
                    while cur.nextset():
                        pass
                executed += 1
                time.sleep(0.05)  # the load's pace, not a wait: batches for 15 s
        except BaseException as exc:  # noqa: BLE001 - any failure is the finding
            errors.append(exc)
        finally:
            conn.close()

    thread = threading.Thread(target=hammer)
    thread.start()
    await run_load(sbtest_dsn, mode="waves", duration_s=16, connections=48)
    thread.join(timeout=30)
    assert errors == [], f"poll batch failed after {executed} runs: {errors[0]!r}"
    assert executed > 100
    probe = mariadb.admin_connect()
    with probe.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
    probe.close()
