"""A collector that has read before gives exactly what a fresh one gives of the same rows, and a
value that changed between two reads shows up in the second: nothing of a read lingers.

A collector keeps little between reads (the processlist the form of its next read, the status
its counters): none of it may show in the next read's section.
"""

from __future__ import annotations

import asyncio
import threading

from poolscope.poller.collectors.base import CollectorOutput, sample
from poolscope.poller.collectors.global_status import GlobalStatus
from poolscope.poller.collectors.global_variables import GlobalVariables
from poolscope.poller.collectors.innodb_trx_summary import InnodbTrxSummary
from poolscope.poller.collectors.processlist import SHOW_SQL, Processlist
from poolscope.poller.collectors.thread_pool_groups import ThreadPoolGroups
from poolscope.poller.collectors.thread_pool_queue_summary import ThreadPoolQueueSummary
from poolscope.poller.connection import StatementResult
from poolscope.poller.target_poller import TargetPoller
from poolscope_dev.sandbox import SBTEST_USER, MariaDBSandbox
from tests.waiting import await_for

from .helpers import parse_context, poller_for

Row = dict[str, object]
# SHOW FULL PROCESSLIST's columns as MariaDB names them.
SHOW_NAMES = ("id", "user", "host", "db", "command", "time", "state", "info", "progress")


def _session_row(
    conn_id: int,
    command: str,
    time: int = 0,
    db: str | None = None,
    host: str = "127.0.0.1:5000",
    info: str | None = None,
) -> Row:
    return dict(zip(SHOW_NAMES, (conn_id, "app", host, db, command, time, "", info, 0.0), strict=True))


def _again_and_fresh(collector: Processlist, rows: list[Row]) -> tuple[CollectorOutput, CollectorOutput]:
    """The parse of `rows` by a collector that has read before and by a fresh one."""
    fresh = Processlist()
    fresh.use_show = collector.use_show = True
    return collector.parse(rows, parse_context(5)), fresh.parse(rows, parse_context(5))


def _same_section(reused: CollectorOutput, fresh: CollectorOutput) -> None:
    assert reused.section.active == fresh.section.active
    assert reused.section.by_id == fresh.section.by_id
    assert dict(reused.section.identities) == dict(fresh.section.identities)
    assert reused.section.complete == fresh.section.complete
    assert [s.model_dump() for s in reused.samples] == [s.model_dump() for s in fresh.samples]


def test_processlist_rows_read_again_give_what_a_fresh_parse_gives_changes_included() -> None:
    long_host = "h" * 300  # a value of 251+ bytes before the command: read the long way
    reads = [
        [_session_row(1, "Sleep", 3), _session_row(2, "Query", 0, info="SELECT 1"), _session_row(3, "Sleep")],
        # Time moves (after the command): the same heads; session 2 runs the same statement.
        [
            _session_row(1, "Sleep", 4),
            _session_row(2, "Query", 0, info="SELECT 1"),
            _session_row(3, "Sleep", 1),
        ],
        # Session 1 wakes up (same position, new command), 3 changes db, 2 runs another statement.
        [
            _session_row(1, "Query", 0, info="UPDATE t SET v = 1"),
            _session_row(2, "Query", 1, info="SELECT 2"),
            _session_row(3, "Sleep", 0, db="sbtest"),
        ],
        # A session leaves (the rows after it shift), one with a long host and one with a NULL command come.
        [
            _session_row(2, "Sleep", 0),
            _session_row(3, "Sleep", 0, db="sbtest"),
            _session_row(4, "Sleep", 0, host=long_host),
            _session_row(5, "Query", 0, host=long_host, info="SELECT 5"),
            dict(zip(SHOW_NAMES, (6, "app", "h", None, None, 0, "", None, 0.0), strict=True)),
        ],
        # Back to all idle: nothing of the last reads' activity may linger.
        [_session_row(1, "Sleep", 0), _session_row(2, "Sleep", 1), _session_row(3, "Sleep", 2, db="sbtest")],
    ]
    reads.insert(4, list(reads[3]))  # read again as is: rows with a head not kept (the long host)
    collector = Processlist()
    actives = []
    for rows in reads:
        reused, fresh = _again_and_fresh(collector, rows)
        _same_section(reused, fresh)
        actives.append(sorted(reused.section.by_id))
    assert actives == [[2], [2], [1, 2], [5, 6], [5, 6], []], "each read's own activity, none carried over"


def _rows(names: tuple[str, ...], *rows: tuple[str | None, ...]) -> list[Row]:
    return [dict(zip(names, row, strict=True)) for row in rows]


def test_status_rows_read_again_give_what_a_fresh_parse_gives() -> None:
    names = ("variable_name", "value")
    reads: list[list[tuple[str, str | None]]] = [
        [("Threads_connected", "7"), ("Questions", "100"), ("Uptime", "50"), ("Com_commit", "3"), ("Com_rollback", "0")],
        [("Threads_connected", "7"), ("Questions", "130"), ("Uptime", "51"), ("Com_commit", "3"), ("Com_rollback", "0")],
        # A gauge moves, a row becomes unreadable (left out), one goes NULL, commits move.
        [("Threads_connected", "9"), ("Questions", "x"), ("Uptime", None), ("Com_commit", "5"), ("Com_rollback", "0")],
        [("Threads_connected", "7"), ("Questions", "160"), ("Uptime", "53"), ("Com_commit", "5"), ("Com_rollback", "0")],
    ]  # fmt: skip
    reused, fresh = GlobalStatus(), GlobalStatus()
    reused_ctx, fresh_ctx = parse_context(), parse_context()  # each its own counter memory
    for second, rows in enumerate(reads):
        reused_ctx.now = fresh_ctx.now = float(second)
        got = reused.parse(_rows(names, *rows), reused_ctx)
        want = fresh.parse(_rows(names, *rows), fresh_ctx)
        assert got.section == want.section
        assert [s.model_dump() for s in got.samples] == [s.model_dump() for s in want.samples]
    assert got.section.values["Threads_connected"] == 7.0 and got.section.rates["tps"] == 0.0
    assert "Questions" in got.section.values and "Uptime" in got.section.values


def test_groups_and_summaries_read_again_follow_a_change() -> None:
    names = ("group_id", "connections", "threads", "active_threads", "standby_threads", "queue_length",
             "has_listener", "is_stalled")  # fmt: skip
    idle = ("0", "5", "3", "0", "1", "0", "1", "0")
    groups = ThreadPoolGroups()
    first = groups.parse(_rows(names, idle), parse_context())
    again = groups.parse(_rows(names, idle), parse_context())
    assert again.section == first.section and again.section[0] is not first.section[0]
    queued = ("0", "5", "3", "1", "0", "4", "1", "1")
    changed = groups.parse(_rows(names, queued), parse_context())
    assert changed.section == ThreadPoolGroups().parse(_rows(names, queued), parse_context()).section
    assert (changed.section[0].queue_length, changed.section[0].is_stalled) == (4, True)

    trx_names = ("total", "lock_waits", "longest_s")
    trx = InnodbTrxSummary()
    none_open = trx.parse(_rows(trx_names, ("0", "0", None)), parse_context())
    assert trx.parse(_rows(trx_names, ("0", "0", None)), parse_context()).section == none_open.section
    opened = trx.parse(_rows(trx_names, ("1", "1", "3.5")), parse_context())
    assert (opened.section.count, opened.section.lock_waits, opened.section.longest_age_s) == (1, 1, 3.5)
    variable_names = ("thread_pool_size", "thread_pool_exact_stats")
    variables = GlobalVariables()
    read = variables.parse(_rows(variable_names, ("4", "1")), parse_context())
    assert read.section == {"thread_pool_size": "4", "thread_pool_exact_stats": "ON"}
    assert variables.parse(_rows(variable_names, ("4", "1")), parse_context()).section == read.section
    resized = variables.parse(_rows(variable_names, ("8", "0")), parse_context())
    assert resized.section == {"thread_pool_size": "8", "thread_pool_exact_stats": "OFF"}


def test_groups_read_again_are_new_models_equal_to_a_fresh_parse() -> None:
    rows = [
        {"group_id": 1, "connections": 4, "threads": 2, "active_threads": 1, "standby_threads": 0,
         "queue_length": 0, "has_listener": 1, "is_stalled": 0},
        {"group_id": 0, "connections": 5, "threads": 3, "active_threads": 0, "standby_threads": 1,
         "queue_length": 0, "has_listener": 0, "is_stalled": 0},
    ]  # fmt: skip
    collector = ThreadPoolGroups()
    first = collector.parse(rows, parse_context())
    first.section[0].stalled = True  # as derive.py marks a poll's groups
    first.section[0].queue_length = 99
    second = collector.parse([dict(row) for row in rows], parse_context())
    fresh = ThreadPoolGroups().parse(rows, parse_context())
    assert second.section == fresh.section and [g.group_id for g in second.section] == [0, 1]
    assert all(a is not b for a, b in zip(first.section, second.section, strict=True)), "one poll's models"
    assert second.samples == fresh.samples
    rows[0]["queue_length"] = 3  # the caller's rows changed in place: read again, not reused
    third = collector.parse(rows, parse_context())
    assert third.section == ThreadPoolGroups().parse(rows, parse_context()).section
    assert third.section[1].queue_length == 3
    assert sample("tp_group_queue_length", 3.0, group="1") in third.samples


def test_summaries_read_again_follow_a_change() -> None:
    queue = ThreadPoolQueueSummary()
    empty = queue.parse([], parse_context())
    assert queue.parse([], parse_context()).section == empty.section
    waiting = [{"group_id": 0, "queued": 2, "oldest_us": 5000, "total_us": 6000}]
    summary = queue.parse(waiting, parse_context())
    assert summary.section == ThreadPoolQueueSummary().parse(waiting, parse_context()).section
    assert (summary.section.total, summary.section.wait_max_ms, summary.section.wait_avg_ms) == (2, 5.0, 3.0)
    assert queue.parse([], parse_context()).section.total == 0

    trx = InnodbTrxSummary()
    none_open = [{"total": 0, "lock_waits": 0, "longest_s": None}]
    assert trx.parse(none_open, parse_context()).section.count == 0
    one_open = [{"total": 1, "lock_waits": 0, "longest_s": 2.5}]
    opened = trx.parse(one_open, parse_context())
    assert opened.section == InnodbTrxSummary().parse(one_open, parse_context()).section
    assert (opened.section.count, opened.section.longest_age_s) == (1, 2.5)
    assert [s.value for s in opened.samples] == [1.0, 0.0, 2.5]


async def test_each_poll_shows_what_fresh_collectors_make_of_its_rows(
    mariadb: MariaDBSandbox, monitor_dsn: str
) -> None:
    """A live server between polls: a transaction opens, a session starts a statement; the poll
    that reads them shows them, and each poll's sections are the ones fresh collectors make."""
    poller: TargetPoller = poller_for(monitor_dsn)
    batches: list[tuple[list[str], list[StatementResult]]] = []
    run_batch = poller.connection.run_batch

    async def recording(statements: list[str]) -> list[StatementResult]:
        results = await run_batch(statements)
        batches.append((statements, results))
        return results

    poller.connection.run_batch = recording  # type: ignore[method-assign]
    in_trx = mariadb.connect(SBTEST_USER, database="sbtest")
    sleeper = mariadb.connect(SBTEST_USER, database="sbtest")
    sleeping = threading.Thread(target=lambda: sleeper.cursor().execute("SELECT SLEEP(4)"))
    try:
        with in_trx.cursor() as cur:
            cur.execute("CREATE TABLE IF NOT EXISTS reuse_probe (id INT PRIMARY KEY, v INT)")
            cur.execute("REPLACE INTO reuse_probe VALUES (1, 0)")
        seen_active: list[bool] = []
        open_trx: list[int] = []
        for step in range(6):
            if step == 3:
                with in_trx.cursor() as cur:
                    cur.execute("BEGIN")
                    cur.execute("UPDATE reuse_probe SET v = v + 1 WHERE id = 1")
                sleeping.start()
                await _until_listed(mariadb, sleeper.thread_id())
                await asyncio.sleep(0.3)  # InnoDB refreshes what INNODB_TRX shows at most every 0.1 s
            del batches[:]
            result = await poller.poll_once()
            state = result.state
            assert state is not None
            server = poller.connection.server
            assert server is not None
            # The poll's batch (the first poll's connect sends discovery's before it).
            statements, results = next(b for b in batches if ThreadPoolGroups().sql(server) in b[0])
            by_sql = dict(zip(statements, results, strict=True))

            def rows_of(sql: str, by_sql: dict[str, StatementResult] = by_sql) -> list[dict[str, object]]:
                return by_sql[sql].rows or []

            groups = (
                ThreadPoolGroups().parse(rows_of(ThreadPoolGroups().sql(server)), parse_context()).section
            )
            assert [g.model_dump(include=GROUP_FIELDS) for g in state.groups] == [
                g.model_dump(include=GROUP_FIELDS) for g in groups
            ]
            queue = ThreadPoolQueueSummary()
            assert (
                state.queued_connections
                == queue.parse(rows_of(queue.sql(server)), parse_context()).section.total
            )
            trx = InnodbTrxSummary()
            counted = trx.parse(rows_of(trx.sql(server)), parse_context()).section.count
            assert state.transactions is not None and state.transactions.count == counted
            processlist = Processlist()
            processlist.use_show = SHOW_SQL in by_sql
            sql = SHOW_SQL if processlist.use_show else processlist.information_schema_sql(server)
            assert state.sessions == processlist.parse(rows_of(sql), parse_context()).section.active
            assert state.transactions is not None
            open_trx.append(state.transactions.count)
            seen_active.append(any(s.id == sleeper.thread_id() for s in state.sessions))
        assert seen_active[:3] == [False, False, False] and seen_active[3], "the new statement shows up"
        assert open_trx[3] == open_trx[2] + 1, f"the opened transaction shows up: {open_trx}"
    finally:
        await poller.close()
        if sleeping.is_alive():
            sleeping.join(timeout=10)
        in_trx.close()
        sleeper.close()


GROUP_FIELDS = {
    "group_id", "connections", "threads", "active_threads", "standby_threads", "queue_length",
    "has_listener", "is_stalled",
}  # fmt: skip


async def _until_listed(mariadb: MariaDBSandbox, thread_id: int) -> None:
    """Until the server lists that session running its statement (bounded)."""
    admin = mariadb.connect(SBTEST_USER)

    def command() -> str | None:
        with admin.cursor() as cur:
            cur.execute("SELECT COMMAND FROM information_schema.PROCESSLIST WHERE ID = %s", (thread_id,))
            row = cur.fetchone()
        return row[0] if row else None

    try:
        await await_for(command, 5, "the sleeping statement never started", 0.05, lambda c: c == "Query")
    finally:
        admin.close()
