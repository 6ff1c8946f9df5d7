"""The recommender's own cadence (recommend/schedule.py RecommendSchedule, recommend/engine.py the variables watch).

Rules read minutes of history from the store: run every recommend_interval_s per target, spread
over it, never per poll; sooner only before a target's first evaluation and when a poll shows
its variables changed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from poolscope.config import Settings, TargetConfig
from poolscope.recommend.engine import VARIABLES_CHECK_S, Recommender
from poolscope.recommend.schedule import RecommendSchedule
from poolscope.schemas import TargetInfo, TargetState
from poolscope.store.latest import variables_fingerprint
from poolscope.store.migrate import upgrade_to_head
from tests.stores import make_store
from tests.waiting import await_for

NAMES = ["a", "b", "c", "d"]


def _settings(interval_s: float = 30.0, store_url: str = "sqlite+aiosqlite:///:memory:") -> Settings:
    return Settings(
        poll_interval_s=1.0,
        recommend_interval_s=interval_s,
        store_url=store_url,
        targets=[TargetConfig(name=n, dsn="mysql://u:p@127.0.0.1:3306/") for n in NAMES],
    )


def test_every_target_is_due_at_start_and_retried_each_poll_until_evaluated() -> None:
    schedule = RecommendSchedule(NAMES, _settings())
    assert schedule.due(0.0) == NAMES
    schedule.done("a", 0.0, evaluated=False)  # no poll stored yet
    assert "a" not in schedule.due(0.5)
    assert "a" in schedule.due(1.0)


def test_evaluated_targets_spread_over_the_interval_then_keep_it() -> None:
    schedule = RecommendSchedule(NAMES, _settings(interval_s=30.0))
    for name in NAMES:
        schedule.done(name, 100.0, evaluated=True)
    # Second runs one slot apart (30 s / 4 targets), not all at once.
    assert schedule.due(107.0) == []
    assert schedule.due(107.5) == ["a"]
    assert schedule.due(115.0) == ["a", "b"]
    assert schedule.due(130.0) == NAMES
    schedule.done("a", 107.5, evaluated=True)
    assert "a" not in schedule.due(137.0)
    assert "a" in schedule.due(137.5)
    assert schedule.next_at(0.0) == 115.0


def test_soon_and_following_the_configured_targets() -> None:
    schedule = RecommendSchedule(NAMES, _settings())
    for name in NAMES:
        schedule.done(name, 0.0, evaluated=True)
    schedule.soon("c")
    assert schedule.due(1.0) == ["c"]
    schedule.sync(["c", "e"])  # a, b, d removed; e added and due at once
    assert schedule.due(1.0) == ["c", "e"]
    assert schedule.next_at(1.0) == 0.0
    schedule.sync([])
    assert schedule.due(1.0) == [] and schedule.next_at(1.0) == 31.0


async def test_a_changed_variable_brings_the_next_run_forward(tmp_path: Path) -> None:
    settings = _settings(interval_s=300.0, store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    await asyncio.to_thread(upgrade_to_head, settings.store_url)
    store = make_store(settings.store_url)
    recommender = Recommender(settings, store)
    calls = evaluations(recommender)
    try:
        for name in NAMES:
            await store.write_poll(_info(name), _state(name, "1"), [], ts=time.time())
        recommender.start()
        await await_for(lambda: len(calls) >= len(NAMES), 5, lambda _: f"evaluations so far: {calls}")
        # The store has no server description: nothing to evaluate yet, so each is retried per poll.
        assert set(calls) == set(NAMES)
        calls.clear()
        # Evaluated once (as if the server were described), an unchanged poll brings nothing forward ...
        recommender._variables_fp = {name: variables_fingerprint({"thread_pool_size": "1"}) for name in NAMES}
        for name in NAMES:
            recommender._schedule.done(name, time.monotonic(), evaluated=True)
        await asyncio.sleep(0.1)  # an evaluation begun before done() ends, and is forgotten below
        calls.clear()
        await store.write_poll(_info("b"), _state("b", "1"), [], ts=time.time())
        await asyncio.sleep(VARIABLES_CHECK_S * 2.5)  # an absence: two checks bring nothing
        assert calls == []
        # ... a changed variable does, for that target only, once.
        await store.write_poll(_info("b"), _state("b", "2"), [], ts=time.time())
        await await_for(lambda: calls == ["b"], 5, lambda _: f"evaluations so far: {calls}")
    finally:
        await recommender.stop()
        await store.close()


def _state(name: str, pool_size: str) -> TargetState:
    return TargetState(target=name, ts=time.time(), status="up", variables={"thread_pool_size": pool_size})


def _info(name: str) -> TargetInfo:
    return TargetInfo(name=name, poll_interval_s=1.0, status="up")


def evaluations(recommender: Recommender) -> list[str]:
    """The targets the recommender evaluates from now on, in order (a list it appends to)."""
    calls: list[str] = []
    original = recommender.evaluate

    async def counted(name: str, now: float | None = None):  # type: ignore[no-untyped-def]
        calls.append(name)
        return await original(name, now)

    recommender.evaluate = counted  # type: ignore[method-assign]
    return calls
