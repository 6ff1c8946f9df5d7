"""`pollprofile replay` on the live sandbox: the rounds recorded at the socket are replayed into
fresh pollers by a process of its own (poolscope_bench/wirereplay.py), and a replayed connection
that sends another query than the recorded one is cut off. Timings are not asserted."""

from __future__ import annotations

from typing import Any

import asyncmy
import pytest

from poolscope_bench import pollprofile, wirereplay
from poolscope_dev.sandbox import MONITOR_PASSWORD, MONITOR_USER, MariaDBSandbox
from tests.waiting import await_for


async def test_a_replay_polls_as_recorded(mariadb: MariaDBSandbox, tmp_path) -> None:
    out = await pollprofile.replay(mariadb, tmp_path, targets=2, rounds=1, repeats=1)
    assert out["target_polls_per_repeat"] == 2
    assert all(ms > 0 for ms in out["process_ms_per_target_poll_min_median"])


async def _query(port: int, sql: str) -> Any:
    conn = asyncmy.Connection(host="127.0.0.1", port=port, user=MONITOR_USER, password=MONITOR_PASSWORD)
    await conn.connect()
    try:
        cursor = conn.cursor()
        await cursor.execute(sql)
        return await cursor.fetchall()
    finally:
        conn.close()


async def test_the_recorded_answer_is_replayed_and_another_query_is_refused(
    mariadb: MariaDBSandbox, tmp_path
) -> None:
    with wirereplay.Recorder(mariadb.host, mariadb.port) as recorder:
        assert await _query(recorder.port, "SELECT 1 AS one") == ((1,),)
        await await_for(
            lambda: all(c.ended for c in recorder.conversations), 5, "the proxy never saw the connection end"
        )
    with wirereplay.replay_server(recorder.conversations, tmp_path) as port:
        assert await _query(port, "SELECT 1 AS one") == ((1,),), "no server behind it"
    with (
        wirereplay.replay_server(recorder.conversations, tmp_path) as port,
        pytest.raises(asyncmy.errors.MySQLError),
    ):
        await _query(port, "SELECT 2 AS two")
