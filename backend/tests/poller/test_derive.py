"""derive.py works on a poll's typed record alone: no connection, no collector objects."""

from __future__ import annotations

from poolscope.analysis.session_identity import SessionIdentity
from poolscope.poller.collectors.mysql_tp_group_stats import MysqlGroupCounters, MysqlStatsSection
from poolscope.poller.collectors.thread_pool_stats import GroupCounters
from poolscope.poller.derive import derive_state, learn_server, referenced_ids
from poolscope.poller.outputs import PollOutputs
from poolscope.schemas import QueuedConnection, Sample, Transaction
from tests.flavors.test_mysql_enterprise import MYSQL_84

from .helpers import group_state, target_memory

MYSQL = MYSQL_84  # MySQL Enterprise 8.4 with its pool on, as discovery describes it


def _stats(dequeues: int, ratio: float | None) -> MysqlStatsSection:
    raw = {"queries_executed": dequeues, "stalls": 0}
    rates: dict[str, float | None] = dict.fromkeys(
        ("stalls", "thread_creations", "thread_creations_due_to_stall", "dequeues", "throttles", "wakes"), 1.0
    )
    return MysqlStatsSection(groups={0: MysqlGroupCounters(0, raw, rates, stalled_query_ratio=ratio)})


def test_mysql_sections_feed_the_group_model_and_the_no_dequeue_verdict():
    memory = target_memory()
    variables = {"thread_pool_size": "1", "thread_pool_stall_limit": "6"}  # 60 ms (10 ms units)
    first = PollOutputs(
        global_variables=variables,
        mysql_tp_group_state=[group_state(3)],
        mysql_tp_group_stats=_stats(10, 0.5),
    )
    samples: list[Sample] = []
    state = derive_state("t", 100.0, MYSQL.model_copy(), first, memory, [], samples)
    assert [g.stalled for g in state.groups] == [False]
    assert state.groups[0].stalled_query_ratio == 0.5 and state.groups[0].dequeues_per_s == 1.0
    assert state.pool is not None and state.pool.stall_limit_ms == 60
    # 100 ms later the same dequeue count with requests still queued: past the 60 ms limit.
    later = PollOutputs(
        global_variables=variables,
        mysql_tp_group_state=[group_state(3)],
        mysql_tp_group_stats=_stats(10, None),
    )
    state = derive_state("t", 100.1, MYSQL.model_copy(), later, memory, ["PROCESS"], samples)
    assert state.groups[0].stall_reason == "no_dequeue"
    assert state.missing_privileges == ["PROCESS"]
    assert [s.value for s in samples if s.metric == "tp_group_stalled"] == [0.0, 1.0]


def test_mariadb_sections_win_over_mysql_ones_and_no_section_means_no_groups():
    memory = target_memory()
    counters = {0: GroupCounters(0, {"dequeues_by_listener": 1, "dequeues_by_worker": 1, "stalls": 0}, {})}
    assert derive_state("t", 1.0, MYSQL.model_copy(), PollOutputs(), memory, [], []).groups == []
    outputs = PollOutputs(
        thread_pool_groups=[group_state(0)], mysql_tp_group_state=[group_state(9)], thread_pool_stats=counters
    )
    counters[0].rates.update(
        dict.fromkeys(
            ("stalls", "thread_creations", "thread_creations_due_to_stall", "dequeues", "throttles", "wakes"),
            2.0,
        )
    )
    state = derive_state("t", 1.0, MYSQL.model_copy(), outputs, memory, [], [])
    assert [g.queue_length for g in state.groups] == [0] and state.groups[0].stalls_per_s == 2.0


def test_a_read_tp_table_clears_the_grant_hint():
    server = MYSQL.model_copy(update={"pool_grant_needed": "GRANT SELECT ON performance_schema.* TO ..."})
    learn_server(server, PollOutputs())
    assert server.pool_grant_needed is not None
    learn_server(server, PollOutputs(readable_tables={"tp_thread_group_state"}))
    assert server.pool_grant_needed is None and "tp_thread_group_state" in server.pool_tables


def test_queued_and_transaction_ids_are_named_from_memory():
    queued = QueuedConnection(group_id=0, position=0, priority="low", connection_id=7, queueing_time_ms=5.0)
    trx = Transaction(trx_id="1", state="RUNNING", thread_id=8)
    outputs = PollOutputs(thread_pool_queues=[queued], innodb_trx=[trx])
    assert referenced_ids(outputs) == {7, 8}
    memory = target_memory()
    memory.identities.learn({7: SessionIdentity("app", "h1", "db1"), 8: SessionIdentity("etl", "h2", None)})
    outputs.innodb_trx_summary = None
    state = derive_state("t", 1.0, MYSQL.model_copy(), outputs, memory, [], [])
    assert (state.queue[0].user, state.queue[0].db) == ("app", "db1")
    assert state.transactions is None  # no summary this poll: no transactions block, as before
