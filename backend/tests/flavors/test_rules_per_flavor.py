"""Every recommendation rule on every flavor fixture: it works with what the flavor reports or
says once, plainly, that it does not apply, never "waiting for more" for ever; wording that
fits the flavor (Alibaba RDS switches its pool with thread_pool_enabled); "read more" links to
the flavor's own documentation."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from poolscope.recommend.base import Clear, RecommendFinding, read_more
from poolscope.recommend.rules import (
    ALL_RULES,
    thread_handling,
    thread_pool_oversubscribe,
    thread_pool_stall_limit,
    transaction_priority,
)
from tests import FIXTURES_ROOT
from tests.flavors.replay import fixture_copy, polls
from tests.flavors.test_percona_queue import _rule_context

EVERY_FIXTURE = sorted(
    str(p.parent.relative_to(FIXTURES_ROOT)) for p in FIXTURES_ROOT.glob("*/*/discovery_variables.json")
)
# The documentation host of each flavor's own vendor.
DOCS_HOST = {
    "mariadb": "mariadb.com",
    "percona": "docs.percona.com",
    # seed 001's AliSQL 5.6 reads as MySQL with Percona's pool variables: Percona's manual.
    "alisql": "docs.percona.com",
    "alibaba-rds": "www.alibabacloud.com",
    "mysql-enterprise": "dev.mysql.com",
    "mysql": "dev.mysql.com",
}


@pytest.mark.parametrize("fixture", EVERY_FIXTURE)
async def test_no_rule_waits_for_ever_and_links_go_to_the_flavors_docs(fixture):
    results = await polls(fixture, 24)
    ctx = _rule_context(results)
    host = DOCS_HOST[fixture.split("/")[0]]
    for rule in ALL_RULES:
        outcome = rule.evaluate(ctx)
        if isinstance(outcome, Clear):
            assert "waiting for more" not in outcome.reason, (rule.name, outcome.reason)
        else:
            assert urlparse(outcome.read_more).hostname == host, (rule.name, outcome.read_more)
    assert urlparse(read_more(ctx, "thread_pool_stall_limit")).hostname == host


async def test_alibaba_rds_wording_says_how_its_pool_is_on():
    ctx = _rule_context(await polls("alibaba-rds/8.0", 12))
    assert ctx.server.pool_enabled and ctx.server.thread_handling == "one-thread-per-connection"
    said = {
        rule.name: rule.evaluate(ctx) for rule in (thread_pool_stall_limit.RULE, transaction_priority.RULE)
    }
    for name, outcome in said.items():
        assert isinstance(outcome, Clear), name
        assert "pool is off" not in outcome.reason, (name, outcome.reason)
        assert "does not report" in outcome.reason, (name, outcome.reason)
    on = thread_handling.evaluate(ctx)
    assert isinstance(on, Clear) and on.reason == "the thread pool is on (thread_pool_enabled=ON)"


@pytest.mark.parametrize("fixture", ["percona/5.7", "percona/8.4", "alisql/5.6", "alibaba-rds/8.0"])
async def test_without_queue_data_the_queue_rules_say_they_do_not_apply(fixture):
    ctx = _rule_context(await polls(fixture, 12))
    for rule in ("thread_pool_size", "thread_pool_oversubscribe"):
        outcome = next(r for r in ALL_RULES if r.name == rule).evaluate(ctx)
        assert isinstance(outcome, Clear) and "does not apply here" in outcome.reason, (rule, outcome)


async def test_percona_oversubscribe_reads_the_starved_counter_and_queue_depth(tmp_path):
    # percona/8.4.10 with oversubscribe changed to 2: the rule judges it from
    # Threadpool_requests_starved_in_queue, the pool-wide queue and the active pool threads.
    copy = fixture_copy(tmp_path, "percona/8.4.10", thread_pool_oversubscribe=2)
    finding = thread_pool_oversubscribe.evaluate(_rule_context(await polls(copy, 24)))
    assert isinstance(finding, RecommendFinding), finding
    assert (finding.variable, finding.current, finding.proposed) == ("thread_pool_oversubscribe", "2", "3")
    assert {e.metric for e in finding.evidence} >= {"pool_queue_starved", "tp_queued_connections"}
    assert (
        finding.read_more
        == "https://docs.percona.com/percona-server/8.4/threadpool.html#thread_pool_oversubscribe"
    )
