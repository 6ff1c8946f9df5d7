"""Every alert rule from plain data: what fires, what holds (hysteresis), what stays quiet."""

from __future__ import annotations

from poolscope.alerts.model import AlertContext, Observation
from poolscope.alerts.rules import all_rules
from poolscope.alerts.settings import Thresholds
from poolscope.schemas import Blocker, GroupHolders, Holder, QueuedConnection, Transaction
from tests.alerts.states import group, info, state, threads, transactions

RULES = {r.name: r for r in all_rules()}


def evaluate(rule: str, target_state, thresholds: Thresholds | None = None, status: str = "up"):
    ti = info(100.0, status)
    ctx = AlertContext(
        target="db1",
        now=100.0,
        info=ti,
        state=target_state,
        history=(Observation(100.0, ti, target_state),),
        thresholds=thresholds or Thresholds(),
    )
    return RULES[rule].evaluate(ctx)


def test_rule_names_are_unique_and_documented():
    assert len(RULES) == len(all_rules())
    # The built-in rules; a new rule is one more file (tests/rules/test_rule_shape.py).
    assert {
        "group_stalled",
        "queue_length_high",
        "queue_wait_long",
        "transaction_old",
        "lock_wait_long",
        "pool_threads_near_max",
        "connections_near_max",
        "target_down",
    } <= set(RULES)
    assert all(r.help and r.severity in ("critical", "warning") for r in RULES.values())


def test_group_stalled_needs_a_real_signal_not_the_server_flag_alone():
    assert evaluate("group_stalled", state(1, [group(0, is_stalled=True, stall_reason="server_flag")])) == []
    (finding,) = evaluate(
        "group_stalled",
        state(1, [group(0), group(1, stall_reason="no_dequeue", queue_length=4, oldest_queued_ms=900.0)]),
    )
    assert finding.group == "1" and finding.level == "breach"
    assert "no dequeue" in finding.description and "900 ms" in finding.description
    assert finding.labels == {"stall_reason": "no_dequeue"}


def test_group_stalled_names_the_top_holder_and_its_blocker_without_literals():
    holders = [
        Holder(
            connection_id=7,
            user="app",
            host="10.0.0.9:4567",
            command="Query",
            time_s=2.0,
            digest="aa",
            digest_text="SELECT ?",
        ),
        Holder(
            connection_id=8,
            user="app",
            host="10.0.0.9:4568",
            command="Query",
            time_s=9.0,
            info="UPDATE t SET v = 'secret-value' WHERE id = 1",
            digest="bb",
            digest_text="UPDATE t SET v = ? WHERE id = ?",
            waits_on="row lock",
            blockers=[
                Blocker(
                    kind="row_lock",
                    connection_id=3,
                    user="batch",
                    statement="DELETE FROM t WHERE id = 'secret-key'",
                )
            ],
        ),
    ]
    st = state(
        1,
        [group(0), group(1, stall_reason="no_dequeue", queue_length=4)],
        holders=[GroupHolders(group_id=1, stalled=True, queue_length=4, holders=holders)],
    )
    (finding,) = evaluate("group_stalled", st)
    assert (
        "connection 8 (app@10.0.0.9:4568): UPDATE t SET v = ? WHERE id = ? (digest bb) for 9 s"
        in finding.description
    )
    assert "row lock held by connection 3 (batch): DELETE FROM t WHERE id = ?" in finding.description
    assert finding.annotations == {
        "top_holder": "connection 8 (app@10.0.0.9:4568): UPDATE t SET v = ? WHERE id = ? for 9 s",
        "top_holder_connection": "8",
        "top_holder_digest": "bb",
        "top_holder_blocker": "connection 3 (batch): DELETE FROM t WHERE id = ?",
    }
    assert "secret" not in finding.description + str(finding.annotations)
    # No holders read (yet): the alert says what it knows, without a holder.
    (bare,) = evaluate("group_stalled", state(1, [group(1, stall_reason="no_dequeue", queue_length=4)]))
    assert bare.annotations == {} and "Held longest" not in bare.description


def test_queue_length_fires_above_max_and_holds_down_to_the_resolve_level():
    t = Thresholds(queue_length_max=20, queue_length_resolve=10)
    assert evaluate("queue_length_high", state(1, [group(0, queue_length=21)]), t)[0].level == "breach"
    assert evaluate("queue_length_high", state(1, [group(0, queue_length=15)]), t)[0].level == "hold"
    assert evaluate("queue_length_high", state(1, [group(0, queue_length=10)]), t) == []


def test_queue_wait_names_the_waiter_and_says_when_times_are_coarse():
    s = state(
        1,
        [group(0, oldest_queued_ms=2500.0, queue_length=1)],
        queue=[
            QueuedConnection(
                group_id=0,
                position=0,
                priority="low",
                connection_id=7,
                queueing_time_ms=2500.0,
                user="app",
                host="10.0.0.5:4000",
                db="shop",
            )
        ],
    )
    (finding,) = evaluate("queue_wait_long", s)
    assert finding.level == "breach" and "app@10.0.0.5:4000" in finding.description
    assert evaluate("queue_wait_long", state(1, [group(0, oldest_queued_ms=1700.0)]))[0].level == "hold"
    assert evaluate("queue_wait_long", state(1, [group(0, oldest_queued_ms=100.0)])) == []


def test_old_transaction_and_long_lock_wait():
    old = Transaction(trx_id="42", state="RUNNING", age_s=400.0, thread_id=9, user="app", host="h")
    waiting = Transaction(
        trx_id="43", state="LOCK WAIT", age_s=40.0, wait_s=35.0, thread_id=10, query="UPDATE t"
    )
    s = state(1, transactions=transactions(old, waiting))
    (trx,) = evaluate("transaction_old", s)
    assert trx.level == "breach" and "trx 42" in trx.description
    (lock,) = evaluate("lock_wait_long", s)
    assert lock.level == "breach" and "43" in lock.description and "UPDATE t" in lock.description
    assert evaluate("transaction_old", state(1, transactions=transactions())) == []


def test_lock_wait_quotes_the_statement_without_its_literals():
    query = "UPDATE accounts SET email = 'alice@example.com' WHERE id = 90417"
    waiting = Transaction(trx_id="43", state="LOCK WAIT", age_s=40.0, wait_s=35.0, thread_id=10, query=query)
    (lock,) = evaluate("lock_wait_long", state(1, transactions=transactions(waiting)))
    assert "Query: UPDATE accounts SET email = ? WHERE id = ?" in lock.description
    assert "alice" not in lock.description and "90417" not in lock.description


def test_pool_threads_and_connections_near_their_caps():
    s = state(1, threads=threads(pool_threads=95, connected=185))
    assert evaluate("pool_threads_near_max", s)[0].level == "breach"  # 95 of 100
    assert evaluate("connections_near_max", s)[0].level == "breach"  # 185 of 200
    s = state(1, threads=threads(pool_threads=75, connected=100))
    assert evaluate("pool_threads_near_max", s)[0].level == "hold"  # 75 % >= 0.9 * 0.8
    assert evaluate("connections_near_max", s) == []
    assert evaluate("pool_threads_near_max", state(1, threads=threads(pool_threads=95), variables={})) == []


def test_target_down_reads_the_target_info_not_the_state():
    (finding,) = evaluate("target_down", None, status="down")
    assert finding.level == "breach" and "db1" in finding.summary
    assert evaluate("target_down", state(1)) == []


def test_per_target_overrides_replace_only_what_they_name():
    from poolscope.alerts.settings import AlertSettings

    settings = AlertSettings(overrides={"db1": {"queue_length_max": 500}})
    assert settings.thresholds_for("db1").queue_length_max == 500
    assert settings.thresholds_for("db1").queue_wait_max_ms == Thresholds().queue_wait_max_ms
    assert settings.thresholds_for("other").queue_length_max == 20


def test_a_bad_override_is_refused_at_load_time():
    import pytest
    from pydantic import ValidationError

    from poolscope.alerts.settings import AlertSettings

    with pytest.raises(ValidationError, match="alerts.overrides.db1"):
        AlertSettings(overrides={"db1": {"queue_lenght_max": 5}})
