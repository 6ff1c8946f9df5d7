"""What each role builds: an API process runs no poller and no alert engine, and feeds its live
channel from the store; a poller process logs alert changes and runs no feed."""

from __future__ import annotations

import asyncio
import time

from poolscope.auth import AuthService
from poolscope.services import run_services
from tests.alerts.states import stalled
from tests.test_services import settings_for, write_polls
from tests.waiting import await_for


async def test_an_api_process_polls_nothing_and_feeds_from_the_store(tmp_path):
    settings = settings_for(tmp_path)
    async with run_services(settings, AuthService(settings), role="api") as services:
        assert services.alerts is None and services.feed is not None
        assert dict(services.snapshots.pollers) == {}  # snapshots open their own connection
        names = {t.get_name() for t in asyncio.all_tasks()}
        assert "live-feed" in names and "recommender" in names
        assert not [n for n in names if n.startswith(("poll:", "alert-engine", "alert-event-log"))]
    left = {t.get_name() for t in asyncio.all_tasks() if t is not asyncio.current_task()}
    assert "live-feed" not in left and "recommender" not in left


async def test_a_poller_process_logs_its_alert_changes_for_the_api_processes(tmp_path):
    settings = settings_for(tmp_path)
    async with run_services(settings, AuthService(settings), start_poller=False, role="poller") as services:
        assert services.alerts is not None and services.feed is None
        # A poller evaluates the alerts of the targets it holds the lease of (here: given by hand).
        await services.alerts.take_over({"db1"})
        now = time.time()
        await write_polls(services.store, now)
        await services.alerts.evaluate(stalled(now))
        logged = await await_for(
            lambda: services.store.latest_rows.alert_events_after(now - 1), 5, "no alert change logged"
        )
        assert '"transition":"firing"' in logged[0]
    left = {t.get_name() for t in asyncio.all_tasks() if t is not asyncio.current_task()}
    assert "alert-event-log" not in left
