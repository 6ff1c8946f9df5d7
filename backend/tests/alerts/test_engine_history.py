"""The alert engine keeps recent polls only for rules that declare they read them (reads_history):
such a rule sees the last history_s of the target's polls, oldest first; every other rule sees the
current poll alone, and the engine holds no earlier poll (each one is a whole TargetState)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.model import AlertContext, AlertFinding, AlertRule, Observation
from poolscope.alerts.repository import AlertRepository
from poolscope.alerts.rules import all_rules
from poolscope.alerts.settings import AlertSettings, Thresholds
from poolscope.store.live import LiveHub
from poolscope.store.migrate import upgrade_to_head
from tests.alerts.states import calm, group, info, poll, stalled, state, threads, transactions


@pytest.fixture
async def repo(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'alerts.db'}"
    await asyncio.to_thread(upgrade_to_head, url)
    db = create_async_engine(url)
    yield AlertRepository(db)
    await db.dispose()


def recording_rule(seen: list[tuple[float, ...]], *, reads_history: bool) -> AlertRule:
    def evaluate(ctx: AlertContext) -> list[AlertFinding]:
        seen.append(tuple(o.ts for o in ctx.history))
        return []

    return AlertRule(
        name="recorder",
        severity="warning",
        help="records what it sees",
        evaluate=evaluate,
        reads_history=reads_history,
    )


async def test_a_rule_that_reads_history_sees_the_last_history_s_of_polls(repo):
    seen: list[tuple[float, ...]] = []
    engine = AlertEngine(
        AlertSettings(history_s=10), LiveHub(), repo, rules=[recording_rule(seen, reads_history=True)]
    )
    for ts in range(100, 116):
        await engine.evaluate(calm(float(ts)))
    assert seen[0] == (100.0,)
    assert seen[-1] == tuple(float(ts) for ts in range(105, 116))  # oldest first, this poll last


async def test_without_such_a_rule_only_the_current_poll_is_seen_and_none_is_kept(repo):
    seen: list[tuple[float, ...]] = []
    rules = [*all_rules(), recording_rule(seen, reads_history=False)]
    engine = AlertEngine(AlertSettings(), LiveHub(), repo, rules=rules)
    for ts in range(100, 110):
        await engine.evaluate(stalled(float(ts)) if ts % 2 else calm(float(ts)))
    assert seen == [(float(ts),) for ts in range(100, 110)]
    assert not engine._history  # no earlier poll is held in memory
    assert [(a.rule, a.status) for a in engine.current()] == [("group_stalled", "firing")]


async def test_rules_replaced_later_get_history_when_one_reads_it(repo):
    # engine.rules may be replaced after start (tests/alerts/test_engine.py does): what follows
    # from the rules (history kept or not, lookup by name) follows the new list.
    seen: list[tuple[float, ...]] = []
    engine = AlertEngine(AlertSettings(history_s=10), LiveHub(), repo, rules=list(all_rules()))
    await engine.evaluate(calm(100.0))
    engine.rules = [*engine.rules, recording_rule(seen, reads_history=True)]
    for ts in (101.0, 102.0):
        await engine.evaluate(calm(ts))
    assert seen == [(101.0,), (101.0, 102.0)]


class Untouchable(Sequence[Observation]):
    """A history that fails the rule reading it."""

    def __getitem__(self, index):  # noqa: ANN001, ANN204
        raise AssertionError("read the history without reads_history")

    def __len__(self) -> int:
        raise AssertionError("read the history without reads_history")

    def __iter__(self) -> Iterator[Observation]:
        raise AssertionError("read the history without reads_history")


def test_the_built_in_rules_that_do_not_declare_it_never_read_the_history():
    states = [
        None,
        state(100.0),
        state(100.0, [group(0, stall_reason="no_dequeue", queue_length=50, oldest_queued_ms=9000.0)]),
        state(
            100.0,
            threads=threads(connected=199, running=5),
            transactions=transactions(),
            variables={"max_connections": "200", "thread_pool_max_threads": "10"},
        ),
    ]
    for rule in all_rules():
        if rule.reads_history:
            continue
        for target_state in states:
            if rule.needs_state and target_state is None:
                continue
            ti = info(100.0, "up" if target_state else "down", None if target_state else "refused")
            ctx = AlertContext(
                target="db1",
                now=100.0,
                info=ti,
                state=target_state,
                history=Untouchable(),
                thresholds=Thresholds(),
            )
            rule.evaluate(ctx)  # raises if the rule touched ctx.history


async def test_a_target_down_keeps_its_alerts_as_they_are(repo):
    engine = AlertEngine(AlertSettings(), LiveHub(), repo)
    await engine.evaluate(stalled(100.0))
    await engine.evaluate(poll(101.0, None))  # down: nothing known, the stall neither fires nor resolves
    await engine.evaluate(poll(200.0, None))
    assert {(a.rule, a.status) for a in engine.current()} == {
        ("group_stalled", "firing"),
        ("target_down", "firing"),
    }
