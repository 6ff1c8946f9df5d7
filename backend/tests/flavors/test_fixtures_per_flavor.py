"""Each flavor's collectors, fed by its captured/documented output in tests/fixtures/<flavor>/<version>/.

The real poller runs unchanged; only the transport is the replay connection (backend/dev/poolscope_dev/replay.py).
Every fixture directory has a README citing where each table and variable comes from. The
per-issue checks of Percona 8.4.10, MySQL Enterprise 8.4/9.x, detection and the enable snippets
live in test_percona_queue.py, test_mysql_enterprise.py, test_pool_access.py and
test_enable_snippets.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from poolscope.flavors import CAP_GROUPS, flavor_spec
from poolscope.poller.discovery import admin_port_of
from tests.flavors.replay import fixture_copy, polls, stalled_poll
from tests.poller.helpers import poller_for

FIXTURES = [
    "mariadb/10.11",
    "percona/5.7",
    "percona/8.0",
    "percona/8.4",
    "percona/8.4.10",
    "percona/9.7.1",
    "percona/9.7.2",
    "percona/9.7.2-compat",
    "alisql/5.6",
    "alibaba-rds/8.0",
    "mysql-enterprise/8.0",
    "mysql-enterprise/8.4",
    "mysql-enterprise/9.7",
    "mysql/8.0",
]


def test_every_fixture_directory_has_a_readme_citing_its_sources():
    from tests import FIXTURES_ROOT

    dirs = sorted(p.parent for p in FIXTURES_ROOT.glob("*/*/discovery_variables.json"))
    assert {str(d.relative_to(FIXTURES_ROOT)) for d in dirs} >= set(FIXTURES)
    for d in dirs:
        readme = (d / "README.md").read_text(encoding="utf-8")
        assert "## Sources" in readme and "## Invented" in readme, d


@pytest.mark.parametrize("fixture", FIXTURES)
async def test_every_fixture_polls_up_with_no_collector_failing(fixture):
    result = (await polls(fixture))[-1]
    assert result.info.status == "up", result.info.reason
    assert result.state is not None
    assert [c.name for c in result.state.collectors if c.error] == []
    assert result.info.connection.port_kind == "fixture"
    assert "not a live server" in result.info.server.notes[0]
    # Server-wide panels work for every flavor.
    assert result.state.threads.connected and result.state.threads.running is not None
    assert (
        result.state.transactions.count == len(result.state.transactions.items)
        or result.state.transactions.count > 0
    )
    assert result.state.throughput.qps is not None and result.state.throughput.qps > 0


async def test_mariadb_captured_live_maps_groups_queue_and_waits():
    result = (await polls("mariadb/10.11"))[-1]
    server = result.info.server
    assert (server.flavor, server.pool_kind) == ("mariadb", "mariadb")
    assert server.version.startswith("10.11.")
    assert [g.group_id for g in result.state.groups] == [0, 1]
    assert result.state.queued_connections == 2
    assert {q.priority for q in result.state.queue} == {"high", "low"}
    assert len(result.state.waits) == 12
    assert result.state.pool.stall_limit_ms == 500


@pytest.mark.parametrize(
    "fixture", ["percona/5.7", "percona/8.0", "percona/8.4", "percona/8.4.10", "percona/9.7.1"]
)
async def test_percona_reads_pool_threads_and_priority_settings_without_groups(fixture):
    result = (await polls(fixture))[-1]
    server, state = result.info.server, result.state
    assert (server.flavor, server.pool_kind) == ("percona", "percona")
    assert CAP_GROUPS not in server.capabilities
    assert state.groups == []
    skipped = {c.name: c.skipped for c in state.collectors if c.skipped}
    assert "thread_pool_groups" in skipped and "MariaDB's" in skipped["thread_pool_groups"]
    # Frame 2 of global_status: 36 pool threads, 6 idle (8.4.10: 31 / 19, the calm before its stall).
    expected = (31, 19) if fixture in ("percona/8.4.10", "percona/9.7.1") else (36, 6)
    assert (state.pool.threads, state.pool.idle_threads) == expected
    assert (state.threads.pool_threads, state.threads.pool_idle_threads) == expected
    assert state.pool.high_prio_mode == "transactions"
    assert state.pool.high_prio_tickets == "4294967295"
    assert state.pool.stall_limit_ms == 500


async def test_percona_57_uses_extra_port_and_80_uses_admin_port():
    old = (await polls("percona/5.7", 1))[-1].info.server
    new = (await polls("percona/8.0", 1))[-1].info.server
    assert admin_port_of(old) == ("extra_port", 0)
    assert admin_port_of(new) == ("admin_port", 33062)


async def test_alisql_is_recognised_from_its_percona_compatible_variables():
    result = (await polls("alisql/5.6"))[-1]
    server = result.info.server
    # The seed shows AliSQL's variables but not its version string: recognised by the variables.
    assert server.pool_kind == "percona"
    assert any("Percona-derived" in n for n in server.notes)
    assert result.state.pool.size == 24 and result.state.pool.high_prio_mode == "transactions"
    assert flavor_spec(server).high_prio_tickets.name == "thread_pool_high_prio_tickets"


@pytest.mark.parametrize("fixture", ["mysql-enterprise/8.0", "mysql-enterprise/8.4", "mysql-enterprise/9.7"])
async def test_mysql_enterprise_maps_tp_tables_onto_groups(fixture):
    results = await polls(fixture, 3)
    result = results[-1]
    server, state = result.info.server, result.state
    assert (server.flavor, server.pool_kind) == ("mysql", "mysql_enterprise")
    assert server.edition == "MySQL Enterprise Server - Commercial"
    assert admin_port_of(server) == ("admin_port", 33062)
    # thread_pool_stall_limit = 6 in units of 10 ms.
    assert state.pool.stall_limit_ms == 60 and state.pool.stall_limit_raw == "6 ×10 ms"
    # Frame 2 of tp_thread_group_state: group 2 has 4 queued statements + 7 queued transactions,
    # oldest waiting 380 ms, 2 stalled statements, consumer 1 + reserve 2 standby threads.
    group = next(g for g in state.groups if g.group_id == 2)
    assert group.queue_length == 11
    assert group.oldest_queued_ms == 380
    assert group.stalled_threads == 2
    assert group.standby_threads == 3
    assert group.connections == 160 and group.threads == 6
    # Four groups: the Admin thread group's row (8.0.31+) is not one of them.
    assert [g.group_id for g in state.groups] == [0, 1, 2, 3]
    # The fixture advances QUERIES_EXECUTED by 460 and STALLED_QUERIES_EXECUTED by 2 per poll.
    assert group.stalled_query_ratio == pytest.approx(2 / 460)
    assert group.dequeues_per_s is not None and group.dequeues_per_s > 0
    # The plugin's thread_handling reads "loaded-dynamically", but it is a pool all the same.
    assert server.thread_handling == "loaded-dynamically"
    assert state.ratios.thread_cache_miss.regime == "pool-of-threads"
    # Stalled statements are routine on MySQL: no group judged stalled while its queue moves.
    assert not any(g.stalled for g in state.groups)
    waits = {w.reason: w for w in state.waits}
    assert set(waits) >= {"DISKIO", "ROW_LOCK", "GROUP_COMMIT", "FSYNC"}
    # The four pool groups' ROW_LOCK_WAITS, advanced by 4 per poll: the Admin row is left out.
    assert waits["ROW_LOCK"].count == 4 * 4100 + 4 * 4 * 2
    samples = {(s.metric, s.labels.get("group")) for s in result.samples}
    assert ("tp_group_queue_length", "2") in samples and ("tp_group_stalled_query_ratio", "2") in samples


async def test_mysql_enterprise_group_whose_queue_does_not_move_is_judged_stalled():
    result = await stalled_poll("mysql-enterprise/8.0")
    stalled = {g.group_id: g.stall_reason for g in result.state.groups if g.stalled}
    # Frame 2: every group has a queue; none dequeued between the last two polls.
    assert stalled == {0: "no_dequeue", 1: "no_dequeue", 2: "no_dequeue", 3: "no_dequeue"}


async def test_a_newer_mysql_release_degrades_to_what_it_can_read_with_a_note(tmp_path):
    """A release past the ones the fixtures document: a table gone, a column gone, one unknown added."""
    import json

    copy = Path(fixture_copy(tmp_path, "mysql-enterprise/9.7", version="10.4.0-commercial"))
    tables = json.loads((copy / "discovery_tables.json").read_text())
    tables["rows"] = [r for r in tables["rows"] if r["TABLE_NAME"] != "tp_thread_state"]
    (copy / "discovery_tables.json").write_text(json.dumps(tables))
    state_file = copy / "mysql_tp_group_state.json"
    group_state = json.loads(state_file.read_text())
    for frame in group_state["frames"]:
        for row in frame:
            row.pop("OLDEST_QUEUED")
            row["SOME_NEW_COLUMN"] = "x"
    state_file.write_text(json.dumps(group_state))
    result = (await polls(str(copy)))[-1]
    server, state = result.info.server, result.state
    assert result.info.status == "up"
    assert any("newer than the versions Poolscope knows" in n for n in server.notes)
    skipped = {c.name: c.skipped for c in state.collectors if c.skipped}
    assert "tp_thread_state not available" in skipped["mysql_tp_thread_state"]
    assert [c.name for c in state.collectors if c.error] == []
    assert len(state.groups) == 4
    assert all(g.oldest_queued_ms is None for g in state.groups)


async def test_a_missing_fixture_file_fails_only_that_collector(tmp_path):
    import shutil

    from tests import FIXTURES_ROOT

    shutil.copytree(FIXTURES_ROOT / "percona" / "8.4", tmp_path / "p")
    (tmp_path / "p" / "percona_threadpool_status.json").unlink()
    poller = poller_for(f"fixture://{tmp_path / 'p'}")
    result = await poller.poll_once()
    await poller.close()
    failed = {c.name: c.error for c in result.state.collectors if c.error}
    assert list(failed) == ["percona_threadpool_status"]
    assert "1146" in failed["percona_threadpool_status"]
    assert result.state.threads.connected == 412


@pytest.mark.parametrize("dsn", ["fixture://../../etc", "fixture://", "fixture://nope/1.0"])
async def test_a_bad_fixture_dsn_is_that_target_down_with_a_reason(dsn):
    poller = poller_for(dsn)
    result = await poller.poll_once()
    await poller.close()
    assert result.info.status == "down"
    assert "fixture" in result.info.reason


async def test_mysql_enterprise_without_performance_schema_select_names_the_grant(tmp_path):
    import json
    import shutil

    from tests import FIXTURES_ROOT

    shutil.copytree(FIXTURES_ROOT / "mysql-enterprise" / "8.0", tmp_path / "m")
    for name in ("mysql_tp_group_state", "mysql_tp_group_stats", "mysql_tp_thread_state"):
        refusal = {
            "error": [1142, f"SELECT command denied to user 'poolscope'@'10.0.0.5' for table '{name}'"]
        }
        (tmp_path / "m" / f"{name}.json").write_text(json.dumps(refusal))
    poller = poller_for(f"fixture://{tmp_path / 'm'}")
    result = await poller.poll_once()
    await poller.close()
    assert result.info.status == "up"
    assert result.state.missing_privileges == ["SELECT ON performance_schema.*"]
    assert result.state.groups == []
    ok = {c.name for c in result.state.collectors if c.ok}
    assert {"global_status", "processlist", "innodb_trx_summary"} <= ok


async def test_mysql_community_has_no_pool_and_is_told_where_one_comes_from():
    result = (await polls("mysql/8.0"))[-1]
    server, state = result.info.server, result.state
    assert (server.flavor, server.pool_enabled, server.pool_kind) == ("mysql", False, None)
    assert server.enable_hint.startswith("MySQL Community Server has no thread pool")
    assert state.pool is None and state.groups == []
    assert {c.name for c in state.collectors if c.skipped and "thread pool off" in c.skipped} >= {
        "thread_pool_groups",
        "mysql_tp_group_state",
        "percona_threadpool_status",
    }
    # 4 of every 5 new connections create a thread in the fixture: the one-thread-per-connection ratio.
    ratio = state.ratios.thread_cache_miss
    assert ratio.regime == "one-thread-per-connection"
    assert ratio.value == pytest.approx(0.8)
    # admin_address is empty: no admin interface to poll on.
    assert admin_port_of(server) == ("admin_port", 0)


def test_discovery_tables_hold_only_what_the_discovery_query_asks_for():
    # A server answers the discovery query's TABLE_NAME IN (...) with those tables only.
    from poolscope.poller.discovery import MYSQL_TP_TABLES, POOL_TABLES
    from tests import FIXTURES_ROOT

    asked = set(POOL_TABLES) | set(MYSQL_TP_TABLES)
    for path in FIXTURES_ROOT.glob("*/*/discovery_tables.json"):
        rows = json.loads(path.read_text())["rows"]
        assert {r["TABLE_NAME"] for r in rows} <= asked, path


@pytest.mark.parametrize("fixture", ["percona/8.0", "percona/8.4", "percona/8.4.10"])
def test_percona_8_version_comment_is_quoted_as_real_servers_print_it(fixture):
    # Percona 8.x: "Percona Server (GPL), Release '28', Revision '47601f19'" (5.7 prints it unquoted).
    from tests import FIXTURES_ROOT

    rows = json.loads((FIXTURES_ROOT / fixture / "discovery_variables.json").read_text())["rows"]
    comment = next(r["Value"] for r in rows if r["Variable_name"] == "version_comment")
    assert re.fullmatch(r"Percona Server \(GPL\), Release '\d+', Revision '[0-9a-f]+'", comment), comment
