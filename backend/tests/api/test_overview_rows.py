"""GET /api/overview from an API process (role "api": rows read from the store, never decoded):
each row is what the target's full info says, in OverviewRow's field order, with the config's
tags and the firing alerts; a target never polled gets a "starting" row."""

from __future__ import annotations

import asyncio
import json

import httpx

from poolscope.config import Settings
from poolscope.schemas import Overview, OverviewRow, Sample, TargetInfo, TargetState
from poolscope.schemas.target import ServerInfo, TargetSummary
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from tests.fleet_targets.test_overview_api import fire_alert
from tests.served import ready_app
from tests.stores import make_store

T0 = 1_800_000_000.0


def expected_row(info: dict, tags: dict[str, str], alerts: int) -> dict:
    """The overview row as the spec defines it, from the target's /api/targets entry."""
    summary = info["summary"]
    return {
        "name": info["name"],
        "tags": tags,
        "status": info["status"],
        "reason": info["reason"],
        "last_poll_at": info["last_poll_at"],
        "pool_enabled": info["server"]["pool_enabled"] if info["server"] else None,
        **{
            key: summary[key]
            for key in (
                "groups",
                "stalled_groups",
                "queue_length",
                "queued_connections",
                "longest_wait_ms",
                "threads_connected",
                "threads_running",
                "qps",
            )
        },
        "active_alerts": alerts,
    }


async def write_polls(url: str) -> None:
    store = make_store(url)
    server = ServerInfo(
        flavor="mariadb", version="10.11.6", thread_handling="pool-of-threads", pool_enabled=True
    )
    up = TargetInfo(
        name="a",
        status="up",
        poll_interval_s=1.0,
        last_poll_at=T0 + 0.125,
        server=server,
        summary=TargetSummary(groups=8, stalled_groups=2, queue_length=5, longest_wait_ms=1234.5, qps=0.1),
    )
    # Non-ASCII and quotes: the stored JSON is spliced into the answer as is.
    down = TargetInfo(name="b", status="down", reason='refused «x» "y"', poll_interval_s=1.0, last_poll_at=T0)
    try:
        await store.write_polls(
            [
                Poll(
                    up, TargetState(target="a", ts=T0, status="up"), [Sample(metric="target_up", value=1)], T0
                ),
                Poll(down, None, [Sample(metric="target_up", value=0)], T0),
            ]
        )
    finally:
        await store.close()


def test_overview_rows_from_the_store_match_each_targets_info(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path / 'store.db'}"
    upgrade_to_head(url)
    asyncio.run(write_polls(url))
    asyncio.run(fire_alert(url, "b"))
    settings = Settings(
        store_url=url,
        targets=[
            {"name": "a", "dsn": "fixture://mariadb/10.11", "tags": {"cluster": "eu", "region": "eu-west 1"}},
            {"name": "b", "dsn": "fixture://mysql/8.0"},
            {"name": "never", "dsn": "fixture://mysql/8.0", "tags": {"role": "replica"}},
        ],
    )
    with ready_app(settings, role="api") as base, httpx.Client(base_url=base, timeout=10) as client:
        response = client.get("/api/overview")
        assert response.status_code == 200 and response.headers["content-type"] == "application/json"
        body = json.loads(response.text)
        infos = {t["name"]: t for t in client.get("/api/targets").json()}
    assert infos["a"]["status"] == "up" and infos["never"]["status"] == "starting"
    rows = body["targets"]
    assert rows == [
        expected_row(infos["a"], {"cluster": "eu", "region": "eu-west 1"}, 0),
        expected_row(infos["b"], {}, 1),
        expected_row(infos["never"], {"role": "replica"}, 0),
    ]
    assert rows[0]["longest_wait_ms"] == 1234.5 and rows[1]["reason"] == 'refused «x» "y"'
    # The contract's shape and field order, as FastAPI would have serialised the model.
    assert all(list(row) == list(OverviewRow.model_fields) for row in rows)
    assert Overview.model_validate(body).model_dump(mode="json") == body
