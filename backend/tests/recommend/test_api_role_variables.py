"""Under `poolscope serve` the recommender runs in the API process, which sees polls only through
the store: a variable changed on the server (here by SET GLOBAL on the real MariaDB) still brings
that target's evaluation forward within seconds, not at its recommend_interval_s turn.

The poller and the API run as roles "poller" and "api" in this test's process, each with its own
store connection and hub, as `serve`'s children do; the store is SQLite or the private PostgreSQL.
"""

from __future__ import annotations

import asyncio
import time

from poolscope.auth import AuthService
from poolscope.config import Settings, TargetConfig
from poolscope.services import run_services
from poolscope.store.latest import variables_fingerprint
from poolscope_dev.sandbox import MariaDBSandbox
from tests.actions.live import global_value, set_global
from tests.recommend.test_schedule import evaluations
from tests.waiting import await_for

# A MariaDB pool variable no rule proposes and no other test reads: changing it changes nothing else.
VARIABLE = "thread_pool_prio_kickup_timer"
INTERVAL_S = (
    300.0  # the longest allowed: a target's turn comes back after 5 min; only the watch brings it sooner
)
SEEN_WITHIN_S = 30.0  # variables are read every 5 s, fingerprints compared every 2 s


async def test_a_set_global_seen_by_a_poller_brings_the_api_processes_evaluation_forward(
    store_url: str, mariadb: MariaDBSandbox, monitor_dsn: str
) -> None:
    settings = Settings(
        poll_interval_s=0.5,
        recommend_interval_s=INTERVAL_S,
        store_url=store_url,
        targets=[TargetConfig(name="db", dsn=monitor_dsn)],
    )
    original = await asyncio.to_thread(global_value, mariadb, VARIABLE)
    try:
        async with (
            run_services(settings, None, role="poller"),
            run_services(settings, AuthService(settings), role="api") as api,
        ):
            recommender = api.recommender
            await await_for(
                lambda: recommender.get("db").evaluated_at is not None, SEEN_WITHIN_S, "never evaluated"
            )
            calls = evaluations(recommender)
            await asyncio.to_thread(set_global, mariadb, **{VARIABLE: int(original) + 7})
            changed_at = time.time()
            await await_for(lambda: calls == ["db"], SEEN_WITHIN_S, lambda _: f"evaluations so far: {calls}")
            answer = await until_evaluated_after(recommender, changed_at)
            assert answer < changed_at + SEEN_WITHIN_S < changed_at + INTERVAL_S
            # It ran on the new value, and records that value's fingerprint (no second run for it).
            latest = await api.store.latest("db")
            assert latest is not None and latest[1] is not None
            assert latest[1].variables[VARIABLE] == str(int(original) + 7)
            assert recommender._variables_fp["db"] == variables_fingerprint(latest[1].variables)
            await asyncio.sleep(3)  # an absence: no second evaluation in 3 s of real polls
            assert calls == ["db"]
    finally:
        await asyncio.to_thread(set_global, mariadb, **{VARIABLE: int(original)})


async def until_evaluated_after(recommender, ts: float) -> float:  # type: ignore[no-untyped-def]
    await await_for(
        lambda: (recommender.get("db").evaluated_at or 0) > ts,
        SEEN_WITHIN_S,
        "not evaluated after the change",
    )
    evaluated_at = recommender.get("db").evaluated_at
    assert evaluated_at is not None
    return evaluated_at
