"""Packed results (one JSON value per statement) read back exactly as the plain rows would."""

from __future__ import annotations

import pytest
from pymysql.cursors import DictCursor

from poolscope.devtools.sandbox import MONITOR_USER
from poolscope.poller.collectors.base import PACKED_COLUMN, select_rows, unpack_rows
from poolscope.schemas import ServerInfo

POOL = {"thread_handling": "pool-of-threads", "pool_enabled": True}
MARIADB = ServerInfo(flavor="mariadb", version="10.11.6-MariaDB", version_tuple=(10, 11, 6), **POOL)
OLD_MARIADB = ServerInfo(flavor="mariadb", version="10.4.34-MariaDB", version_tuple=(10, 4, 34), **POOL)
MYSQL = ServerInfo(flavor="mysql", version="8.0.36", version_tuple=(8, 0, 36), **POOL)
COLUMNS = {
    "variable_name": "VARIABLE_NAME",
    "value": "VARIABLE_VALUE",
    "name_length": "LENGTH(VARIABLE_NAME)",
}
SOURCE = "information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME LIKE 'THREAD_POOL%'"


def test_packing_only_where_the_server_has_json_arrayagg_with_order_by():
    packed = select_rows(MARIADB, COLUMNS, SOURCE, order_by="VARIABLE_NAME", limit=5)
    assert packed.startswith("SET STATEMENT group_concat_max_len")
    assert f"AS {PACKED_COLUMN} FROM {SOURCE}" in packed
    assert "ORDER BY VARIABLE_NAME LIMIT 5)" in packed  # inside the aggregate
    for server in (OLD_MARIADB, MYSQL):
        plain = select_rows(server, COLUMNS, SOURCE, order_by="VARIABLE_NAME", limit=5)
        assert plain == (
            "SELECT VARIABLE_NAME, VARIABLE_VALUE AS value, LENGTH(VARIABLE_NAME) AS name_length"
            f" FROM {SOURCE} ORDER BY VARIABLE_NAME LIMIT 5"
        )


def test_unpack_passes_plain_rows_through_and_reads_empty_and_broken_packs():
    plain = [{"a": 1}, {"a": 2}]
    assert unpack_rows(plain) is plain
    assert unpack_rows([]) == []
    assert unpack_rows([{PACKED_COLUMN: None}]) == []  # JSON_ARRAYAGG over no rows
    with pytest.raises(ValueError):
        unpack_rows([{PACKED_COLUMN: '[{"a": 1}, {"a": '}])  # truncated: parse fails loudly
    with pytest.raises(ValueError):
        unpack_rows([{PACKED_COLUMN: '{"a": 1}'}])


def test_packed_and_plain_read_the_same_rows_from_a_live_server(mariadb):
    conn = mariadb.connect(MONITOR_USER, extra=True, cursorclass=DictCursor)
    try:
        with conn.cursor() as cur:
            cur.execute(select_rows(MARIADB, COLUMNS, SOURCE, order_by="VARIABLE_NAME"))
            packed = unpack_rows([{k.lower(): v for k, v in row.items()} for row in cur.fetchall()])
            cur.execute(select_rows(OLD_MARIADB, COLUMNS, SOURCE, order_by="VARIABLE_NAME"))
            plain = [{k.lower(): v for k, v in row.items()} for row in cur.fetchall()]
            cur.execute(select_rows(MARIADB, COLUMNS, "information_schema.GLOBAL_VARIABLES WHERE 1 = 0"))
            empty = unpack_rows(cur.fetchall())
    finally:
        conn.close()
    assert len(plain) >= 8  # the thread_pool_* variables of a pool-of-threads server
    assert packed == plain  # same names, order, strings and numbers (LENGTH is an int in both)
    assert empty == []
