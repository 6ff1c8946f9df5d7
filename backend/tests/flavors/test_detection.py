"""Flavor detection, admin-port choice, the flavor table's units and the Percona stats-string parser."""

from __future__ import annotations

import pytest

from poolscope.flavors import MARIADB, MYSQL_ENTERPRISE, PERCONA, enable_spec, flavor_spec
from poolscope.poller.collectors.percona_threadpool_status import parse_stat_string
from poolscope.poller.discovery import admin_port_of, server_from_discovery


def discover(tables: tuple[str, ...] = (), **variables: str):
    rows = [{"variable_name": k, "value": v} for k, v in variables.items()]
    return server_from_discovery(rows, [{"table_name": t} for t in tables])


def test_mariadb_pool_on():
    s = discover(
        ("THREAD_POOL_GROUPS", "THREAD_POOL_QUEUES", "THREAD_POOL_STATS", "THREAD_POOL_WAITS"),
        version="10.11.19-MariaDB-0+deb12u1",
        version_comment="Debian 12",
        thread_handling="pool-of-threads",
        extra_port="3307",
    )
    assert (s.flavor, s.pool_kind, s.pool_enabled) == ("mariadb", "mariadb", True)
    assert s.capabilities == ["groups", "group_stats", "queue_entries", "waits", "pool_threads"]
    assert admin_port_of(s) == ("extra_port", 3307)
    assert s.notes == []


def test_mariadb_pool_off_has_tables_but_no_pool():
    s = discover(
        ("THREAD_POOL_GROUPS",), version="10.11.19-MariaDB", thread_handling="one-thread-per-connection"
    )
    assert (s.pool_enabled, s.pool_kind, s.capabilities) == (False, None, [])
    assert enable_spec(s) is MARIADB
    assert s.enable_snippet and "thread_handling         = pool-of-threads" in s.enable_snippet
    assert s.enable_hint and "restart" in s.enable_hint


def test_alisql_named_in_its_version_is_its_own_flavor_on_percona_variables():
    s = discover(
        version="5.6.16-AliSQL", thread_handling="pool-of-threads", thread_pool_high_prio_mode="transactions"
    )
    assert (s.flavor, s.pool_kind) == ("alisql", "percona")
    assert not any("Percona-derived" in n for n in s.notes)


def test_mysql_community_without_the_plugin_is_pool_off_and_points_at_enterprise():
    s = discover(
        version="8.0.36",
        version_comment="MySQL Community Server - GPL",
        thread_handling="one-thread-per-connection",
    )
    assert (s.flavor, s.pool_enabled, s.pool_kind) == ("mysql", False, None)
    assert enable_spec(s) is MYSQL_ENTERPRISE
    assert s.enable_hint and s.enable_hint.startswith("MySQL Community Server has no thread pool")
    assert s.enable_snippet and "plugin-load-add" in s.enable_snippet


def test_admin_interface_needs_admin_address():
    s = discover(
        version="8.0.36-28", version_comment="Percona Server (GPL)", admin_port="33062", admin_address=""
    )
    assert admin_port_of(s) == ("admin_port", 0)
    old = discover(version="8.0.13-4", version_comment="Percona Server (GPL)", extra_port="3307")
    assert admin_port_of(old) == ("extra_port", 3307)


def test_unknown_server_is_read_with_notes_not_an_error():
    s = discover(version="weird", version_comment="SomeFork", thread_handling="pool-of-threads")
    assert s.flavor == "unknown" and s.pool_enabled and s.pool_kind is None
    text = " ".join(s.notes)
    assert "Could not tell the server's flavor" in text
    assert "Could not parse the version" in text
    assert "neither MariaDB's THREAD_POOL_* tables nor Percona's variables" in text


def test_future_mariadb_gets_a_note():
    s = discover(("THREAD_POOL_GROUPS",), version="13.2.0-MariaDB", thread_handling="pool-of-threads")
    assert s.pool_kind == "mariadb"
    assert any("newer than the versions Poolscope knows" in n for n in s.notes)


def test_stall_limit_units_per_flavor():
    assert MYSQL_ENTERPRISE.stall_limit_ms({"thread_pool_stall_limit": "6"}) == 60
    assert PERCONA.stall_limit_ms({"thread_pool_stall_limit": "500"}) == 500
    assert MARIADB.stall_limit_ms({}) is None
    # A recommendation of 50 ms is 5 on MySQL Enterprise, clamped to its documented 4..600.
    assert MYSQL_ENTERPRISE.stall_limit.from_ms(50) == 5
    assert MYSQL_ENTERPRISE.stall_limit.from_ms(10) == 4
    assert MYSQL_ENTERPRISE.stall_limit.from_ms(60_000) == 600
    assert MARIADB.stall_limit.from_ms(30) == 30
    assert flavor_spec(None) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("avg: 412, min: 3, max: 9800, dev: 700, cnt: 182311", (412, 3, 9800, 700, 182311)),
        ("avg: 0.5, min: 0, max: 1.25e3, dev: 0, cnt: 0", (0.5, 0, 1250, 0, 0)),
        ("avg:12,min:1,max:90,dev:4.2,cnt:300", (12, 1, 90, 4.2, 300)),
        ("avg: 7, max: 9", (7, None, 9, None, None)),
    ],
)
def test_percona_stat_strings_parse_into_numbers(text, expected):
    stat = parse_stat_string("Threadpool_average_queue_wait_us", text)
    assert stat is not None
    assert (stat.avg, stat.min, stat.max, stat.dev, stat.cnt) == expected


@pytest.mark.parametrize("text", ["", "ON", "n/a", "avg: n/a"])
def test_non_stat_strings_are_not_invented_into_numbers(text):
    assert parse_stat_string("x", text) is None
