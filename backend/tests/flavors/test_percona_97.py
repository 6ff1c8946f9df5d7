"""Percona Server 9.7: the built-in pool (9.7.1-1) and MySQL's thread_pool plugin (9.7.2-2+) in the
two states the sources document, told apart by what the server itself lists.

Fixtures percona/9.7.1, percona/9.7.2 (the plugin as psmysql-docs' 9.7 pages describe it: its own
variables, stall limit in 10 ms units) and percona/9.7.2-compat (the PERCONA_THREADPOOL_COMPAT build
of percona-server: Percona's variables stay, the stall limit is Percona's, in ms). Their READMEs
and docs/development/server-facts.md ("Percona Server 9.7") cite the sources.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from poolscope.flavors import (
    CAP_GROUPS,
    CAP_POOL_THREADS,
    CAP_QUEUE_DEPTH,
    CAP_QUEUE_WAIT_STATS,
    PERCONA_BUILTIN_VARIABLES,
    PERCONA_PLUGIN,
    PERCONA_PLUGIN_COMPAT,
    flavor_spec,
)
from poolscope.poller.discovery import PERCONA_COMPAT_NOTE, admin_port_of
from poolscope.recommend.base import RecommendFinding
from poolscope.recommend.rules import thread_handling, thread_pool_stall_limit
from poolscope.recommend.window import Window
from poolscope.schemas import SeriesOut
from tests.flavors.replay import fixture_copy, polls, stalled_poll
from tests.flavors.test_percona_queue import _rule_context
from tests.recommend.builders import LONG_QUEUE_WAITS
from tests.recommend.builders import ctx as rule_ctx

FIXTURES = ["percona/9.7.1", "percona/9.7.2", "percona/9.7.2-compat"]
PERCONA_COLLECTOR = "percona_threadpool_status"
PLUGIN_COLLECTORS = {"mysql_tp_group_state", "mysql_tp_group_stats", "mysql_tp_thread_state"}
# What each fixture is, its collectors, and thread_pool_stall_limit as the server spells it, in
# the unit Poolscope must read it in.
EXPECTED = {
    "percona/9.7.1": ("percona", True, {PERCONA_COLLECTOR}, "500", 500.0, "500 ms"),
    "percona/9.7.2": ("mysql_enterprise", False, PLUGIN_COLLECTORS, "6", 60.0, "6 ×10 ms"),
    "percona/9.7.2-compat": ("mysql_enterprise", True, PLUGIN_COLLECTORS, "500", 500.0, "500 ms"),
}


@pytest.mark.parametrize("fixture", FIXTURES)
async def test_each_97_server_is_read_as_what_it_reports(fixture):
    kind, builtin, collectors, raw, ms, shown = EXPECTED[fixture]
    result = (await polls(fixture, 4))[-1]
    server, state = result.info.server, result.state
    assert result.info.status == "up", result.info.reason
    assert (server.flavor, server.pool_kind, server.pool_enabled) == ("percona", kind, True)
    assert server.percona_builtin_pool is builtin
    assert server.version_tuple[:2] == (9, 7)
    assert not any("newer than the versions" in n for n in server.notes)
    ran = {c.name for c in state.collectors if c.ok and not c.skipped}
    assert collectors <= ran
    assert [c.name for c in state.collectors if c.error] == []
    other = PLUGIN_COLLECTORS if kind == "percona" else {PERCONA_COLLECTOR}
    skipped = {c.name for c in state.collectors if c.skipped}
    assert other <= skipped
    assert state.variables["thread_pool_stall_limit"] == raw
    assert (state.pool.stall_limit_ms, state.pool.stall_limit_raw) == (ms, shown)
    assert admin_port_of(server) == ("admin_port", 33062)


async def test_9_7_1_has_the_built_in_pool_with_its_queue_statistics():
    results = await polls("percona/9.7.1", 12)
    server, state = results[-1].info.server, results[-1].state
    assert {CAP_POOL_THREADS, CAP_QUEUE_WAIT_STATS, CAP_QUEUE_DEPTH} <= set(server.capabilities)
    assert CAP_GROUPS not in server.capabilities and state.groups == []
    assert state.pool.high_prio_mode == "transactions"
    # The stall of the story shows as each poll's mean queue wait, as on 8.4.10.
    waits = [
        s.value for r in results for s in r.samples if s.metric == "tp_queue_wait_window_avg_ms" and s.value
    ]
    assert waits and max(waits) > 500
    assert flavor_spec(server).stall_limit.unit_ms == 1


@pytest.mark.parametrize("fixture", ["percona/9.7.2", "percona/9.7.2-compat"])
async def test_the_plugin_is_read_from_its_tp_tables_whichever_build(fixture):
    result = (await polls(fixture, 3))[-1]
    server, state = result.info.server, result.state
    assert CAP_GROUPS in server.capabilities and server.thread_handling == "loaded-dynamically"
    # Four groups; the Admin thread group's row is not one of them.
    assert [g.group_id for g in state.groups] == [0, 1, 2, 3]
    assert state.pool.admin_group is not None and state.pool.admin_group.group_id == 4
    assert next(g for g in state.groups if g.group_id == 2).queue_length == 11
    assert flavor_spec(server).label.startswith("MySQL thread_pool plugin of Percona Server")


async def test_on_the_compat_build_the_idle_built_in_pools_status_is_not_shown_as_the_pool():
    """Percona's Threadpool_threads / _idle_threads stay listed (0: the built-in pool does not run);
    the plugin's threads come from its groups."""
    result = (await polls("percona/9.7.2-compat", 3))[-1]
    state = result.state
    assert state.threads.pool_threads is None and state.threads.pool_idle_threads is None
    assert state.pool.threads == sum(g.threads for g in state.groups) > 0
    assert not {s.metric for s in result.samples} & {"pool_threads", "pool_idle_threads"}
    assert CAP_POOL_THREADS not in result.info.server.capabilities
    assert PERCONA_COMPAT_NOTE in result.info.server.notes


async def test_the_docs_build_has_no_compat_note_and_the_enterprise_units():
    server = (await polls("percona/9.7.2", 1))[-1].info.server
    assert PERCONA_COMPAT_NOTE not in server.notes
    assert flavor_spec(server) is PERCONA_PLUGIN
    assert PERCONA_PLUGIN.stall_limit.unit_ms == 10 and not PERCONA_PLUGIN.size.dynamic


def test_the_compat_plugin_acts_on_the_ms_value_in_its_10_ms_units_from_40_ms_to_6_s():
    limit = PERCONA_PLUGIN_COMPAT.stall_limit
    # (ms + 9) / 10 units of 10 ms, clamped to 4..600 (percona-server thread_pool.h).
    assert [limit.to_ms(v) for v in ("500", "10", "41", "6000", "4294967295")] == [500, 40, 50, 6000, 6000]
    # Proposals stay where the plugin acts: 30 ms asks for 40, a minute for 6 s.
    assert (limit.from_ms(30), limit.from_ms(250), limit.from_ms(60_000)) == (40, 250, 6000)
    assert limit.shown("500") == "500 ms"
    # The size is read once, when the plugin starts.
    assert not PERCONA_PLUGIN_COMPAT.size.dynamic


@pytest.mark.parametrize(
    ("fixture", "current", "proposed", "unit", "summary"),
    [
        # 600 ms on Percona's ms variable: lowered to 40 ms (the plugin's floor), set as 40.
        ("percona/9.7.2-compat", "600", "40", "ms", "Lower thread_pool_stall_limit from 600 ms to 40 ms"),
        # 60 units of 10 ms on the plugin's own variable: lowered to 4 units.
        (
            "percona/9.7.2",
            "60",
            "4",
            "×10 ms",
            "Lower thread_pool_stall_limit from 600 ms to 40 ms (4 ×10 ms)",
        ),
    ],
)
async def test_a_stall_limit_proposal_is_in_the_unit_of_that_build(fixture, current, proposed, unit, summary):
    server = (await polls(fixture, 1))[-1].info.server
    made = rule_ctx({"thread_pool_stall_limit": current}, LONG_QUEUE_WAITS, flavor="mysql")
    c = dataclasses.replace(made, server=server)
    f = thread_pool_stall_limit.evaluate(c)
    assert isinstance(f, RecommendFinding), f
    assert (f.variable, f.current, f.proposed, f.unit) == ("thread_pool_stall_limit", current, proposed, unit)
    assert f.summary == summary
    assert f.apply == "live"
    host = urlparse(f.read_more)
    assert host.hostname == "docs.percona.com"
    # Percona's own ms variable on the compat build, the plugin's page on the other.
    page = "threadpool.html" if fixture.endswith("compat") else "mysql-thread-pool.html"
    assert host.path == f"/percona-server/9.7/{page}"


@pytest.mark.parametrize(("stall_limit", "stalled"), [("40", True), ("500", False)])
async def test_a_stalled_group_is_judged_against_the_ms_stall_limit_on_the_compat_build(
    tmp_path, stall_limit, stalled
):
    """Groups frozen with a queue for about 0.1 s: stalled against Percona's 40 ms, not against
    500 ms (read as the plugin's 10 ms units they would be 400 ms and 5 s, never stalled)."""
    copy = fixture_copy(tmp_path, "percona/9.7.2-compat", thread_pool_stall_limit=stall_limit)
    result = await stalled_poll(copy)
    assert result.state.pool.stall_limit_ms == float(stall_limit)
    assert any(g.stalled for g in result.state.groups) is stalled


@pytest.mark.parametrize(
    ("fixture", "switch", "snippet_has", "snippet_lacks"),
    [
        # The built-in pool on 9.7.1: its switch.
        (
            "percona/9.7.1",
            ("thread_handling", "pool-of-threads"),
            ("thread_pool_high_prio_mode", "admin_port"),
            ("plugin-load-add",),
        ),
        # A 9.7.2 build that lists its built-in pool (the compat build, or one whose plugin is
        # disabled): the built-in switch is valid there and the plugin cannot run beside it.
        (
            "percona/9.7.2-compat",
            ("thread_handling", "pool-of-threads"),
            ("thread_pool_high_prio_mode",),
            ("plugin-load-add",),
        ),
        # A 9.7.2 build without it (psmysql-docs' description): only the plugin, never
        # pool-of-threads or thread_pool_high_prio_mode.
        (
            "percona/9.7.2",
            ("plugin-load-add", "thread_pool.so"),
            ("admin_port",),
            ("pool-of-threads", "thread_pool_high_prio_mode", "thread_handling"),
        ),
    ],
)
async def test_with_the_pool_off_each_build_gets_the_switch_it_has(
    tmp_path, fixture, switch, snippet_has, snippet_lacks
):
    results = await polls(_pool_off(tmp_path, fixture), 24)
    server = results[-1].info.server
    assert (server.pool_enabled, server.pool_kind) == (False, None)
    assert server.enable_snippet and server.enable_hint
    variable, value = switch
    assert re.search(rf"^{variable} *= {value}$", server.enable_snippet, re.M), server.enable_snippet
    for text in snippet_has:
        assert text in server.enable_snippet, server.enable_snippet
    for text in snippet_lacks:
        assert text not in server.enable_snippet, server.enable_snippet
    # The thread_handling rule proposes the same switch, with the same advice.
    ctx = _rule_context(results)
    finding = thread_handling.evaluate(dataclasses.replace(ctx, window=_busy(ctx)))
    assert isinstance(finding, RecommendFinding), finding
    assert (finding.variable, finding.proposed, finding.apply) == (variable, value, "restart")
    assert server.enable_hint in finding.description


# Variables only a loaded thread_pool plugin registers (percona-server thread_pool_plugin.cc,
# thread_pool_system_vars[]); on a build without Percona's pool, size and stall limit too.
PLUGIN_VARIABLES = {
    "thread_pool_algorithm",
    "thread_pool_prio_kickup_timer",
    "thread_pool_high_priority_connection",
    "thread_pool_max_unused_threads",
    "thread_pool_max_active_query_threads",
    "thread_pool_query_threads_per_group",
    "thread_pool_max_transactions_limit",
    "thread_pool_transaction_delay",
    "thread_pool_dedicated_listeners",
}


def _pool_off(tmp_path, fixture: str) -> str:
    """The fixture's server started without a pool: one thread per connection, no tp_* tables, and
    none of the variables a loaded plugin would add."""
    copy = Path(fixture_copy(tmp_path, fixture, thread_handling="one-thread-per-connection"))
    (copy / "discovery_tables.json").write_text(json.dumps({"rows": []}))
    rows = json.loads((copy / "discovery_variables.json").read_text())["rows"]
    names = {r["Variable_name"] for r in rows}
    gone = set(PLUGIN_VARIABLES)
    if not names & set(PERCONA_BUILTIN_VARIABLES):
        gone |= {"thread_pool_size", "thread_pool_stall_limit"}
    kept = [r for r in rows if r["Variable_name"] not in gone]
    (copy / "discovery_variables.json").write_text(json.dumps({"rows": kept}))
    polled = json.loads((copy / "global_variables.json").read_text())
    polled["rows"] = [{k: v for k, v in row.items() if k not in gone} for row in polled["rows"]]
    (copy / "global_variables.json").write_text(json.dumps(polled))
    return str(copy)


def _busy(ctx):
    """The window with 900 connections a poll, so turning the pool on is worth proposing."""
    end = ctx.window.end
    points = [(end - 30 + i, 900.0) for i in range(30)]
    return Window(end - 30, end, [SeriesOut(metric="threads_connected", labels={}, points=points)])
