"""The recommender follows settings.targets when a reload of the targets files replaces it
(targets_source.py): an added target is answered and evaluated, a removed one is forgotten, and a
changed one's host CPUs come from its new configuration."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from poolscope.config import Settings, TargetConfig
from poolscope.recommend.engine import Recommender, local_cpu_count
from poolscope.schemas import Sample, TargetInfo, TargetState
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from tests.recommend.builders import ctx
from tests.recommend.test_schedule import evaluations
from tests.stores import make_store
from tests.waiting import await_for


def _target(name: str, host: str = "127.0.0.1") -> TargetConfig:
    return TargetConfig(name=name, dsn=f"mysql://u:p@{host}:3306/")


async def test_targets_added_and_removed_by_a_reload_are_followed(tmp_path: Path) -> None:
    settings = Settings(
        poll_interval_s=0.1,
        recommend_interval_s=30.0,
        store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
        targets=[_target("a"), _target("b")],
    )
    await asyncio.to_thread(upgrade_to_head, settings.store_url)
    store = make_store(settings.store_url)
    recommender = Recommender(settings, store)
    calls = evaluations(recommender)
    try:
        recommender.start()
        await await_for(lambda: {"a", "b"} <= set(calls), 5, lambda _: f"evaluations so far: {calls}")
        settings.targets = [_target("b"), _target("c")]  # what TargetsWatcher does on a change
        assert recommender.get("c").note == "not evaluated yet"  # was a KeyError (HTTP 500)
        assert set(recommender.targets) == {"b", "c"}
        calls.clear()
        # Nothing is stored for them, so each is retried every poll interval: c is, a no longer.
        await await_for(lambda: "c" in calls and "b" in calls, 5, lambda _: f"evaluations so far: {calls}")
        await asyncio.sleep(0.3)  # an absence: a retry of `a` would have come by now (0.1 s polls)
        assert "a" not in calls
        assert (await recommender.evaluate("c")).note == "no successful poll yet"
    finally:
        await recommender.stop()
        await store.close()


def test_host_cpus_follow_a_changed_target_configuration(tmp_path: Path) -> None:
    settings = Settings(store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", targets=[_target("a")])
    recommender = Recommender(settings, SqlStore(settings.store_url, raw_retention_s=1, rollup_retention_s=1))
    assert recommender._host_cpus(recommender.targets["a"]) == (local_cpu_count(), "local host")
    settings.targets = [_target("a", host="db.example.com")]
    recommender._follow_targets()
    assert recommender._host_cpus(recommender.targets["a"]) == (None, None)
    settings.targets = [TargetConfig(name="a", dsn="mysql://u:p@db.example.com:3306/", cpus=8)]
    recommender._follow_targets()
    assert recommender._host_cpus(recommender.targets["a"]) == (8, "configured")


async def test_a_target_removed_while_it_is_evaluated_is_answered_not_a_key_error(tmp_path: Path) -> None:
    # GET .../recommendations?fresh=true awaits the store; a reload removing the target lands then.
    settings = Settings(store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", targets=[_target("a")])
    await asyncio.to_thread(upgrade_to_head, settings.store_url)
    store = make_store(settings.store_url)
    recommender = Recommender(settings, store)
    latest = store.latest

    async def reloaded_meanwhile(name: str, conn=None):  # type: ignore[no-untyped-def]
        settings.targets = [_target("b")]  # what TargetsWatcher does on a change
        return await latest(name, conn)

    store.latest = reloaded_meanwhile  # type: ignore[method-assign]
    try:
        answer = await recommender.evaluate("a")  # was a KeyError (HTTP 500)
        assert (answer.target, answer.note) == ("a", "no successful poll yet")
        assert recommender.get("b").note == "not evaluated yet"  # the next read follows the reload
        assert set(recommender.targets) == {"b"}
    finally:
        await store.close()


async def _two_targets(tmp_path: Path) -> tuple[Settings, SqlStore, Recommender]:
    settings = Settings(
        store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}", targets=[_target("a"), _target("b")]
    )
    await asyncio.to_thread(upgrade_to_head, settings.store_url)
    store = make_store(settings.store_url)
    return settings, store, Recommender(settings, store)


async def test_a_removed_targets_caches_are_dropped_and_a_readded_one_starts_afresh(tmp_path: Path) -> None:
    settings, store, recommender = await _two_targets(tmp_path)
    server = ctx({}).server
    now = time.time()
    try:
        for name in ("a", "b"):
            for i in range(20):  # 20 polls, so each target has a window of history kept
                info = TargetInfo(name=name, status="up", poll_interval_s=1.0, server=server)
                state = TargetState(
                    target=name, ts=now - 20 + i, status="up", variables={"thread_pool_size": "4"}
                )
                await store.write_poll(info, state, [Sample(metric="qps", value=float(i))], ts=now - 20 + i)
            assert (await recommender.evaluate(name, now)).evaluated_at == now
        caches = {
            "loopback": recommender._loopback,
            "variables": recommender._variables_fp,
            "history": {name: None for name in recommender._history.targets()},
        }
        assert all(set(cache) == {"a", "b"} for cache in caches.values()), caches
        settings.targets = [_target("b")]  # what TargetsWatcher does on a change
        recommender.get("b")
        assert set(recommender._loopback) == set(recommender._variables_fp) == {"b"}
        assert recommender._history.targets() == {"b"}
        # Added again: evaluated from a full read of its window, as a new target is.
        settings.targets = [_target("a"), _target("b")]
        answer = await recommender.evaluate("a", now + 1)
        assert answer.evaluated_at == now + 1 and recommender._history.targets() == {"a", "b"}
        assert [r.rule for r in answer.rules] == [r.rule for r in recommender.get("b").rules]
    finally:
        await store.close()


async def test_a_target_removed_while_it_is_evaluated_leaves_no_caches(tmp_path: Path) -> None:
    """A reload landing during an evaluation (it awaits the store): what the evaluation kept for the
    target (history, variables, loopback) is dropped once it ends, not kept for ever."""
    settings, store, recommender = await _two_targets(tmp_path)
    server = ctx({}).server
    now = time.time()
    latest = store.latest

    async def reloaded_meanwhile(name: str, conn=None):  # type: ignore[no-untyped-def]
        settings.targets = [_target("b")]  # what TargetsWatcher does on a change
        return await latest(name, conn)

    try:
        for i in range(20):
            info = TargetInfo(name="a", status="up", poll_interval_s=1.0, server=server)
            state = TargetState(target="a", ts=now - 20 + i, status="up", variables={"thread_pool_size": "4"})
            await store.write_poll(info, state, [Sample(metric="qps", value=float(i))], ts=now - 20 + i)
        store.latest = reloaded_meanwhile  # type: ignore[method-assign]
        assert (await recommender.evaluate("a", now)).evaluated_at == now
        assert "a" not in recommender._loopback and "a" not in recommender._variables_fp
        assert "a" not in recommender._history.targets()
    finally:
        await store.close()
