"""GET /api/overview: one compact row per configured target, in config order, with the config's
tags, the summary's stall / queue / longest-wait figures and the count of firing alerts."""

from __future__ import annotations

import asyncio
import time

import httpx
from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.alerts.repository import AlertRepository
from poolscope.config import Settings
from poolscope.schemas import Alert
from tests.served import ready_app
from tests.waiting import wait_for


def test_the_overview_row_per_target(tmp_path):
    store_url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    settings = Settings(
        store_url=store_url,
        poll_interval_s=0.5,
        targets=[
            {
                "name": "ent",
                "dsn": "fixture://mysql-enterprise/8.4",
                "tags": {"cluster": "eu", "role": "primary"},
            },
            {"name": "maria", "dsn": "fixture://mariadb/10.11", "tags": {"cluster": "us"}},
            {"name": "community", "dsn": "fixture://mysql/8.0"},
            {"name": "missing", "dsn": "fixture://nowhere/1.0"},
        ],
    )
    with ready_app(settings) as base, httpx.Client(base_url=base, timeout=10) as client:
        rows = wait_for(
            lambda: client.get("/api/overview").json()["targets"],
            30,
            str,
            every_s=0.3,
            until=lambda got: all(r["last_poll_at"] for r in got[:3]) and got[3]["status"] == "down",
        )
        assert [r["name"] for r in rows] == ["ent", "maria", "community", "missing"]
        by_name = {r["name"]: r for r in rows}
        assert by_name["ent"]["tags"] == {"cluster": "eu", "role": "primary"}
        assert by_name["community"]["tags"] == {}
        assert by_name["missing"]["reason"]
        # Pool figures where a pool runs, nothing where none does.
        for name in ("ent", "maria"):
            assert by_name[name]["pool_enabled"] is True and by_name[name]["groups"] >= 1
            assert by_name[name]["queue_length"] is not None
        assert by_name["community"]["queue_length"] is None and by_name["community"]["pool_enabled"] is False
        # The row carries the summary the full target info has (same last poll or later).
        full = {t["name"]: t for t in client.get("/api/targets").json()}
        assert full["ent"]["tags"] == by_name["ent"]["tags"]
        assert full["maria"]["summary"]["longest_wait_ms"] is not None
        assert full["maria"]["summary"]["longest_wait_ms"] > 0

        assert all(r["active_alerts"] == 0 for r in rows)
        asyncio.run(fire_alert(store_url, "maria"))
        rows = client.get("/api/overview").json()["targets"]
        assert {r["name"]: r["active_alerts"] for r in rows} == {
            "ent": 0,
            "maria": 1,
            "community": 0,
            "missing": 0,
        }


async def fire_alert(store_url: str, target: str) -> None:
    engine = create_async_engine(store_url)
    try:
        now = time.time()
        await AlertRepository(engine).insert(
            Alert(
                fingerprint=f"{target}/test",
                target=target,
                rule="pool_stalled",
                severity="critical",
                status="firing",
                summary="s",
                description="d",
                started_at=now,
                fired_at=now,
                last_active_at=now,
            )
        )
    finally:
        await engine.dispose()
