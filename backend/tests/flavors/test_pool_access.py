"""Detection of pools that run: MySQL Enterprise without a grant, Alibaba RDS; Percona's stall-limit floor.

Fixtures: mysql-enterprise/8.4-no-grant (MySQL manual §7.6.3.2: the plugin sets
thread_handling=loaded-dynamically), alibaba-rds/8.0 (Alibaba Cloud "ApsaraDB RDS for MySQL:
Thread Pool": thread_pool_enabled), percona/8.4.10 (percona-server sql/sys_vars.cc:
thread_pool_stall_limit VALID_RANGE(10, UINT_MAX)).
"""

from __future__ import annotations

import shutil

from poolscope.flavors import CAP_GROUPS, PERCONA
from poolscope.poller import target_poller
from poolscope.poller.target_poller import PollResult
from poolscope.recommend.base import Clear, RecommendContext, RecommendFinding
from poolscope.recommend.flavors import spec
from poolscope.recommend.rules import thread_handling
from poolscope.recommend.window import Window
from poolscope.schemas import SeriesOut
from tests import FIXTURES_ROOT
from tests.flavors.replay import fixture_copy, polls
from tests.poller.helpers import poller_for

GRANT = "SELECT ON performance_schema.*"


def busy_window_context(result: PollResult, connections: float = 900.0) -> RecommendContext:
    """The result's server and state with 20 polls of many connections: the pool-on/off rule's evidence."""
    now = result.state.ts
    points = [(now - 20 + i, connections) for i in range(20)]
    series = [
        SeriesOut(metric="threads_connected", labels={}, points=points),
        SeriesOut(metric="threads_running", labels={}, points=[(t, 40.0) for t, _ in points]),
    ]
    return RecommendContext(
        target="t",
        now=now,
        server=result.info.server,
        state=result.state,
        info=result.info,
        window=Window(now - 20, now, series),
        cpus=8,
    )


async def test_a_running_plugin_without_the_grant_is_pool_on_grant_needed_not_pool_off():
    first, result = await polls("mysql-enterprise/8.4-no-grant", 2)
    server, state = result.info.server, result.state
    assert (server.pool_enabled, server.pool_kind) == (True, "mysql_enterprise")
    assert server.pool_grant_needed == GRANT
    assert server.enable_hint is None and server.enable_snippet is None
    assert any("GRANT SELECT ON performance_schema.*" in n for n in server.notes)
    # The tp_* reads are attempted, so the refusal names the grant (not "not available").
    tp = {"mysql_tp_group_state", "mysql_tp_group_stats", "mysql_tp_thread_state"}
    failed = {c.name: c.error for c in first.state.collectors if c.error}
    assert set(failed) == tp and all("1142" in e for e in failed.values())
    # Then retried now and then (a GRANT is picked up), each saying what it needs meanwhile.
    waiting = {c.name: c.skipped for c in state.collectors if c.name in tp}
    assert all(f"needs {GRANT}" in (reason or "") for reason in waiting.values())
    assert state.missing_privileges == [GRANT]
    # In the API answer too.
    assert result.info.model_dump(mode="json")["server"]["pool_grant_needed"] == GRANT
    # And no advice to turn on a pool that is already on.
    assert isinstance(thread_handling.evaluate(busy_window_context(result)), Clear)


async def test_once_granted_the_pool_is_read_without_reconnecting(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES_ROOT / "mysql-enterprise" / "8.4-no-grant", tmp_path / "m")
    monkeypatch.setattr(target_poller, "PRIVILEGE_RETRY_S", 0.0)  # retry the refused reads at once
    poller = poller_for(f"fixture://{tmp_path / 'm'}")
    refused = await poller.poll_once()
    assert refused.info.server.pool_grant_needed == GRANT
    # GRANT SELECT ON performance_schema.*: the pool's tables, and those that name who holds it.
    holders = ("data_lock_waits", "metadata_locks", "mdl_instrument", "statement_digests", "threads")
    for name in ("mysql_tp_group_state", "mysql_tp_group_stats", "mysql_tp_thread_state", *holders):
        shutil.copy(
            FIXTURES_ROOT / "mysql-enterprise" / "8.4" / f"{name}.json", tmp_path / "m" / f"{name}.json"
        )
    granted = await poller.poll_once()
    await poller.close()
    server = granted.info.server
    assert server.pool_grant_needed is None
    assert CAP_GROUPS in server.capabilities
    assert [g.group_id for g in granted.state.groups] == [0, 1, 2, 3]
    assert granted.state.missing_privileges == []


async def test_alibaba_rds_with_thread_pool_enabled_is_pool_on_whatever_thread_handling_says():
    result = (await polls("alibaba-rds/8.0", 2))[-1]
    server = result.info.server
    assert server.thread_handling == "one-thread-per-connection"
    assert (server.pool_enabled, server.pool_kind) == (True, "percona")
    assert any("thread_pool_enabled=ON" in n for n in server.notes)
    assert server.enable_snippet is None
    assert result.state.pool is not None and result.state.pool.size == 4
    assert result.state.variables["thread_pool_enabled"] == "ON"


async def test_alibaba_rds_with_the_pool_off_is_told_to_set_thread_pool_enabled_live(tmp_path):
    # @@GLOBAL gives booleans as 1/0; discovery's SHOW says OFF.
    copy = fixture_copy(tmp_path, "alibaba-rds/8.0", thread_pool_enabled=0)
    result = (await polls(copy, 2))[-1]
    server = result.info.server
    assert not server.pool_enabled
    assert server.enable_hint is not None and "thread_pool_enabled" in server.enable_hint
    assert server.enable_snippet is not None and "thread_pool_enabled = ON" in server.enable_snippet
    assert "thread_handling" not in server.enable_snippet
    finding = thread_handling.evaluate(busy_window_context(result))
    assert isinstance(finding, RecommendFinding), finding
    assert (finding.variable, finding.current, finding.proposed, finding.apply) == (
        "thread_pool_enabled",
        "OFF",
        "ON",
        "live",
    )
    assert finding.config_snippet == server.enable_snippet


async def test_percona_pool_off_advice_carries_its_versions_snippet(tmp_path):
    copy = fixture_copy(tmp_path, "percona/5.7", thread_handling="one-thread-per-connection")
    result = (await polls(copy, 2))[-1]
    finding = thread_handling.evaluate(busy_window_context(result))
    assert isinstance(finding, RecommendFinding), finding
    assert (finding.variable, finding.proposed, finding.apply) == (
        "thread_handling",
        "pool-of-threads",
        "restart",
    )
    assert finding.config_snippet is not None and "extra_port" in finding.config_snippet
    assert "admin_address" not in finding.config_snippet  # Percona 5.7 has no admin interface


async def test_percona_stall_limit_is_never_proposed_below_its_minimum_of_10():
    server = (await polls("percona/8.4.10", 1))[-1].info.server
    found = spec(server, "stall_limit")
    assert found is not None and found.min_value == 10
    assert found.from_ms(5) == 10 and found.from_ms(30) == 30
    assert PERCONA.stall_limit.from_ms(1) == 10
