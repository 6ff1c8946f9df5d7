"""Deriving reuses what an idle server repeats (analysis/last_made.py, derive.target_summary).

Reused or not, every state and summary must encode exactly as one made afresh, a change between
polls must show at once, and an object handed out by one poll must not change afterwards.
"""

from __future__ import annotations

import copy
from typing import Any, get_args

import pytest
from pydantic import BaseModel

import poolscope.poller.derive as derive_module
import poolscope.poller.target_poller as target_poller_module
from poolscope.analysis.last_made import LastMade
from poolscope.poller.collectors.global_status import StatusSection
from poolscope.poller.collectors.innodb_trx import MIN_LISTED_AGE_S
from poolscope.poller.collectors.innodb_trx_summary import TrxSummary
from poolscope.poller.derive import _assign, derive_state, target_summary
from poolscope.poller.outputs import PollOutputs
from poolscope.schemas import (
    GroupState,
    PoolSummary,
    QueuedConnection,
    Ratio,
    Ratios,
    ServerInfo,
    TargetSummary,
    Threads,
    Throughput,
    Transaction,
    Transactions,
)
from poolscope_dev.sandbox import SBTEST_USER, MariaDBSandbox

from .helpers import MARIADB_POOL, group_state, poller_for, target_memory


async def _captured_polls(
    monitor_dsn: str, mariadb: MariaDBSandbox, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[Any, ...]]:
    """derive_state's inputs of live polls, with the connection count moving between some."""
    captured: list[tuple[Any, ...]] = []
    real = derive_state

    def spy(target: str, now: float, server: ServerInfo, outputs: PollOutputs, *rest: Any) -> Any:
        captured.append((target, now, server.model_copy(), copy.deepcopy(outputs), list(rest[1])))
        return real(target, now, server, outputs, *rest)

    monkeypatch.setattr(target_poller_module, "derive_state", spy)
    poller = poller_for(monitor_dsn)
    extra = []
    try:
        for poll in range(8):
            if poll in (3, 4):
                extra.append(mariadb.connect(SBTEST_USER))  # Threads_connected moves
            if poll == 6:
                extra.pop().close()
            assert (await poller.poll_once()).info.status == "up"
    finally:
        await poller.close()
        for conn in extra:
            conn.close()
    return captured


async def test_reused_or_not_every_state_and_summary_encodes_the_same(
    monitor_dsn: str, mariadb: MariaDBSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    polls = await _captured_polls(monitor_dsn, mariadb, monkeypatch)
    reusing, fresh = target_memory(), target_memory()
    states = []
    for target, now, server, outputs, missing in polls:
        state = derive_state(target, now, server.model_copy(), copy.deepcopy(outputs), reusing, missing, [])
        fresh.made.forget()  # nothing to reuse: every model made afresh, as before the reuse
        derive_module.SUMMARIES.clear()
        reference = derive_state(target, now, server.model_copy(), copy.deepcopy(outputs), fresh, missing, [])
        assert state.model_dump_json() == reference.model_dump_json()
        reference_summary = target_summary(reference).model_dump_json()
        assert target_summary(state).model_dump_json() == reference_summary
        states.append((state, state.model_dump_json()))
    # The idle sandbox repeats most figures: some poll reused its pool summary and ratios ...
    pairs = list(zip(states, states[1:], strict=False))
    assert any(b.pool is a.pool for (a, _), (b, _) in pairs)
    assert any(b.ratios is a.ratios for (a, _), (b, _) in pairs)
    # ... the connections opened between polls show in the next state ...
    connected = [s.threads.connected for s, _ in states]
    assert connected[4] is not None and connected[2] is not None and connected[4] > connected[2]
    assert states[4][0].threads is not states[2][0].threads
    # ... and nothing a poll handed out changed afterwards.
    assert all(state.model_dump_json() == encoded for state, encoded in states)


def _state_inputs(connected: float) -> PollOutputs:
    return PollOutputs(
        global_variables={"thread_pool_size": "2", "thread_pool_stall_limit": "500"},
        global_status=StatusSection(values={"Threads_connected": connected, "Threadpool_threads": 4.0}),
    )


def test_a_changed_value_makes_a_new_model_and_the_old_one_keeps_its_values() -> None:
    memory = target_memory()
    first = derive_state("t", 1.0, MARIADB_POOL.model_copy(), _state_inputs(5), memory, [], [])
    same = derive_state("t", 2.0, MARIADB_POOL.model_copy(), _state_inputs(5), memory, [], [])
    assert same.threads is first.threads and same.pool is first.pool and same.throughput is first.throughput
    changed = derive_state("t", 3.0, MARIADB_POOL.model_copy(), _state_inputs(6), memory, [], [])
    assert changed.threads is not first.threads
    assert (first.threads.connected, changed.threads.connected) == (5, 6)
    assert target_summary(changed).threads_connected == 6 and target_summary(first).threads_connected == 5
    assert target_summary(same) is target_summary(first)
    # A target that went down forgets: its next state is made afresh.
    memory.forget()
    again = derive_state("t", 4.0, MARIADB_POOL.model_copy(), _state_inputs(6), memory, [], [])
    assert again.threads is not changed.threads and again.threads == changed.threads


def test_transactions_being_named_are_never_shared_between_polls() -> None:
    memory = target_memory()
    open_trx = Transaction(trx_id="1", state="RUNNING", age_s=9.0, thread_id=7)

    def outputs(items: list[Transaction]) -> PollOutputs:
        return PollOutputs(
            innodb_trx_summary=TrxSummary(count=len(items), lock_waits=0, longest_age_s=None),
            innodb_trx=items,
        )

    idle = [derive_state("t", n, MARIADB_POOL.model_copy(), outputs([]), memory, [], []) for n in (1.0, 2.0)]
    assert idle[0].transactions is idle[1].transactions and idle[0].transactions is not None
    busy = [
        derive_state("t", n, MARIADB_POOL.model_copy(), outputs([open_trx.model_copy()]), memory, [], [])
        for n in (3.0, 4.0)
    ]
    assert busy[0].transactions is not busy[1].transactions
    assert idle[0].transactions == Transactions(
        count=0, lock_waits=0, listed_min_age_s=MIN_LISTED_AGE_S, items=[]
    )


REUSED = (Threads, Throughput, Ratio, Ratios, PoolSummary, Transactions, TargetSummary)


@pytest.mark.parametrize("model", REUSED)
def test_equal_values_make_models_that_encode_the_same(model: type[BaseModel]) -> None:
    # LastMade and the summaries compare values with ==: 1 == 1.0 == True. Each number field of
    # the reused models is an int or a float (or None), so validation makes one of them all.
    for name, info in model.model_fields.items():
        kinds = set(get_args(info.annotation)) - {type(None)} or {info.annotation}
        if kinds & {int, float}:
            assert len(kinds) == 1, f"{model.__name__}.{name}: {info.annotation}"
            made = {model(**{name: value}).model_dump_json() for value in (1, 1.0, True)}
            assert len(made) == 1, made


def test_last_made_compares_the_fields_and_values_of_one_call_site() -> None:
    made = LastMade()
    fields = ("connected", "running")
    one = made.get(Threads, fields, (1, None))
    assert made.get(Threads, fields, (1, None)) is one
    assert made.get(Threads, fields, (2, None)).connected == 2 and one.connected == 1
    other_fields = ("running", "connected")
    assert made.get(Threads, other_fields, (1, None)).running == 1, "other fields: made anew"


@pytest.mark.parametrize(
    "model", [GroupState, QueuedConnection, Transaction, Ratio, Ratios, Threads, Throughput, PoolSummary]
)
def test_the_models_deriving_sets_or_reuses_validate_nothing_on_assignment(model: type[BaseModel]) -> None:
    # _assign writes fields as BaseModel.__setattr__ does, which holds only without this.
    assert not model.model_config.get("validate_assignment")
    assert not model.model_config.get("frozen")


def test_assign_is_setting_each_field() -> None:
    values = {"stalled": True, "stall_reason": "no_dequeue", "dequeues_per_s": 0.0, "oldest_queued_ms": None}
    by_setattr, at_once = group_state(), group_state()
    for name, value in values.items():
        setattr(by_setattr, name, value)
    _assign(at_once, values)
    assert at_once == by_setattr and at_once.model_fields_set == by_setattr.model_fields_set
    assert at_once.model_dump_json() == by_setattr.model_dump_json()


def test_summary_reuse_is_by_value_and_type() -> None:
    derive_module.SUMMARIES.clear()
    memory = target_memory()
    state = derive_state("t", 1.0, MARIADB_POOL.model_copy(), _state_inputs(5), memory, [], [])
    other = derive_state("u", 1.0, MARIADB_POOL.model_copy(), _state_inputs(5), target_memory(), [], [])
    assert target_summary(state) is target_summary(other), "idle targets share their summary"
    assert target_summary(state) == TargetSummary(threads_connected=5, pool_threads=4)
