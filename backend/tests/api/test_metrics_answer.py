"""GET /api/targets/{name}/metrics from an API process (real uvicorn) over a store a poller wrote:
the store builds its answer without validating each point (store/query.py), and what is sent is
exactly what a validated MetricsOut gives, for raw and rolled-up ranges."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from poolscope.config import Settings, TargetConfig
from poolscope.schemas import MetricsOut, Sample, TargetInfo
from poolscope.store.ingest import Poll
from poolscope.store.migrate import upgrade_to_head
from poolscope.store.sql import SqlStore
from tests.served import ready_app

SECONDS = 1800
METRICS = ["tp_group_queue_length", "qps"]


async def _fill(url: str, t0: float) -> None:
    store = SqlStore(url, raw_retention_s=86400, rollup_retention_s=86400)
    info = TargetInfo(name="db1", status="up", poll_interval_s=1.0)
    polls = [
        Poll(
            info,
            None,
            [Sample(metric="qps", value=(i % 17) / 3)]
            + [Sample(metric="tp_group_queue_length", labels={"group": g}, value=float(i % 5)) for g in "01"],
            t0 + i,
        )
        for i in range(SECONDS)
    ]
    await store.write_polls(polls[: SECONDS - 300])
    await store.maintain(now=t0 + SECONDS - 300)  # rollups for the first 25 minutes, raw after
    await store.write_polls(polls[SECONDS - 300 :])
    await store.close()


async def _expected(url: str, params: dict) -> dict:
    store = SqlStore(url, raw_retention_s=86400, rollup_retention_s=86400)
    try:
        out = await store.query("db1", METRICS, params["from"], params["to"], params["points"], params["agg"])
    finally:
        await store.close()
    # What FastAPI made of a returned model: validated again, dumped in JSON mode by alias.
    return MetricsOut.model_validate(out.model_dump()).model_dump(mode="json", by_alias=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('metrics') / 'store.db'}"
    upgrade_to_head(url)
    t0 = float(int(time.time()) // 60 * 60 - SECONDS)
    asyncio.run(_fill(url, t0))
    settings = Settings(store_url=url, targets=[TargetConfig(name="db1", dsn="mysql://mon:pw@127.0.0.1:1/")])
    with ready_app(settings, role="api") as base, httpx.Client(base_url=base, timeout=10) as client:
        yield client, url, t0


@pytest.mark.parametrize(
    ("span", "points", "agg", "resolution"),
    [(300, 300, "avg", "raw"), (SECONDS, 30, "avg", "rollup"), (SECONDS, 20, "max", "rollup")],
)
def test_answer_is_the_validated_model(served, span, points, agg, resolution):
    client, url, t0 = served
    params = {"from": t0 + SECONDS - span, "to": t0 + SECONDS, "points": points, "agg": agg}
    response = client.get("/api/targets/db1/metrics", params={"metric": METRICS, **params})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["resolution"] == resolution
    assert [(s["metric"], s["labels"]) for s in body["series"]] == [
        ("qps", {}),
        ("tp_group_queue_length", {"group": "0"}),
        ("tp_group_queue_length", {"group": "1"}),
    ]
    assert all(len(s["points"]) > points // 2 for s in body["series"])
    assert body == asyncio.run(_expected(url, params))


def test_bad_requests_still_get_a_clear_422(served):
    client, _url, _t0 = served
    response = client.get("/api/targets/db1/metrics", params={"metric": "nope"})
    assert response.status_code == 422 and "unknown metric 'nope'" in response.json()["detail"]
    assert client.get("/api/targets/other/metrics", params={"metric": "qps"}).status_code == 404
