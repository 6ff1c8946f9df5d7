"""The processlist collector picks its statement by the server's size, and reads both forms alike."""

from __future__ import annotations

from poolscope.poller.collectors.processlist import (
    SHOW_BACKOFF_S,
    SHOW_MAX_CONNECTIONS,
    SHOW_MAX_STATEMENT_CHARS,
    SHOW_SQL,
    Processlist,
)

from .helpers import MARIADB_POOL, parse_context


def _row(i: int, command: str = "Sleep", info: str | None = None) -> dict:
    # SHOW FULL PROCESSLIST's columns, lower-cased as the connection hands them over.
    return {"id": i, "user": "app", "host": f"10.0.0.5:{4000 + i}", "db": "shop", "command": command,
            "time": 1, "state": "", "info": info, "progress": 0.0}  # fmt: skip


def _is_information_schema(collector: Processlist) -> bool:
    return "information_schema.PROCESSLIST" in collector.sql(MARIADB_POOL)


def test_first_read_is_safe_at_any_size_then_follows_the_connection_count():
    collector = Processlist()
    assert _is_information_schema(collector), "size unknown: the form the server cuts and filters"
    collector.parse([], parse_context(None))
    assert _is_information_schema(collector)
    collector.parse([], parse_context(SHOW_MAX_CONNECTIONS))
    assert collector.sql(MARIADB_POOL) == SHOW_SQL
    # In the SHOW form its own rows are the count, as of this read, whatever the last status said.
    collector.parse([_row(i) for i in range(SHOW_MAX_CONNECTIONS + 1)], parse_context(10))
    assert _is_information_schema(collector)
    assert set(collector.statements(MARIADB_POOL)) == {SHOW_SQL, collector.sql(MARIADB_POOL)}


def test_a_huge_statement_sends_it_back_to_the_server_cut_form_for_a_while():
    collector = Processlist()
    collector.parse([], parse_context(5, now=100.0))
    assert collector.sql(MARIADB_POOL) == SHOW_SQL
    bulk = "INSERT INTO t VALUES " + "(1)," * SHOW_MAX_STATEMENT_CHARS
    collector.parse([_row(1, "Query", bulk), _row(2)], parse_context(5, now=101.0))
    assert _is_information_schema(collector), "SHOW FULL would send that statement whole every second"
    collector.parse([], parse_context(5, now=101.0 + SHOW_BACKOFF_S - 1))
    assert _is_information_schema(collector)
    collector.parse([], parse_context(5, now=101.0 + SHOW_BACKOFF_S))
    assert collector.sql(MARIADB_POOL) == SHOW_SQL


def test_reset_forgets_the_choice():
    collector = Processlist()
    collector.parse([], parse_context(5))
    assert collector.sql(MARIADB_POOL) == SHOW_SQL
    collector.reset()
    assert _is_information_schema(collector)


def test_show_rows_give_active_sessions_and_name_idle_ones():
    rows = [
        _row(7),
        _row(8, "Query", "SELECT " + "x" * 5000),
        {**_row(9, "Query", SHOW_SQL), "user": "monitor"},  # our own poll
    ]
    section = Processlist().parse(rows, parse_context(3)).section
    assert [s.id for s in section.active] == [8], "idle sessions and our own poll are not activity"
    assert section.active[0].time_s == 1.0
    assert len(section.active[0].info) == 2048, "kept bounded in the state"
    assert section.identities[7] == ("app", "10.0.0.5:4007", "shop"), "idle sessions are named too"
    assert set(section.identities) == {7, 8, 9}
