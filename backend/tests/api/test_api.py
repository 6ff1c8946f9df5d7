"""The HTTP API served by a real uvicorn, polling a real MariaDB: what the UI and users rely on."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from poolscope.config import Settings, TargetConfig
from poolscope_dev.sandbox import MONITOR_PASSWORD, NOPROC_PASSWORD, free_port
from tests.served import uvicorn_app, wait_for_points
from tests.waiting import wait_for


@pytest.fixture(scope="module")
def api(tmp_path_factory, monitor_dsn, noproc_dsn):
    store = tmp_path_factory.mktemp("api") / "store.db"
    settings = Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{store}",
        targets=[
            TargetConfig(name="live", dsn=monitor_dsn),
            TargetConfig(name="noproc", dsn=noproc_dsn),
            TargetConfig(name="gone", dsn=f"mysql://u:{MONITOR_PASSWORD}@127.0.0.1:{free_port()}/"),
        ],
    )
    with uvicorn_app(settings) as base:
        client = httpx.Client(base_url=base, timeout=10)

        def reported() -> bool:
            try:
                targets = client.get("/api/targets").json()
                return (
                    all(t["status"] != "starting" for t in targets)
                    and client.get("/api/targets/live/state").is_success
                )
            except httpx.TransportError:
                return False

        wait_for(reported, 30, "the API never reported every target")
        wait_for_points(client, "live", 3, "qps")  # a few polls, so rates exist
        yield client
        client.close()


def test_targets_report_status_and_why(api):
    targets = {t["name"]: t for t in api.get("/api/targets").json()}
    assert targets["live"]["status"] == "up"
    assert targets["live"]["connection"]["port_kind"] == "extra_port"
    assert targets["live"]["summary"]["groups"] == 2
    assert targets["noproc"]["status"] == "up"
    assert targets["noproc"]["missing_privileges"] == ["PROCESS"]
    assert targets["gone"]["status"] == "down"
    assert "cannot connect" in targets["gone"]["reason"]
    # A down target is retried with growing pauses, and says so (the UI must not claim every 0.5 s).
    assert targets["gone"]["retry_in_s"] >= 1.0
    assert targets["live"]["retry_in_s"] is None


def test_state_queue_transactions(api):
    state = api.get("/api/targets/live/state").json()
    assert {g["group_id"] for g in state["groups"]} == {0, 1}
    assert state["throughput"]["qps"] is not None
    assert isinstance(api.get("/api/targets/live/queue").json(), list)
    trx = api.get("/api/targets/live/transactions").json()
    assert set(trx) >= {"count", "longest_age_s", "lock_waits", "items"}


def test_down_target_without_state_is_503_with_reason(api):
    response = api.get("/api/targets/gone/state")
    assert response.status_code == 503
    assert "cannot connect" in response.json()["detail"]


def test_metric_history_is_downsampled_to_points(api):
    now = time.time()
    response = api.get(
        "/api/targets/live/metrics",
        params={"metric": ["tp_group_queue_length", "qps"], "from": now - 60, "to": now, "points": 10},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["from"] == pytest.approx(now - 60) and body["step_s"] == pytest.approx(6.0)
    names = {(s["metric"], s["labels"].get("group")) for s in body["series"]}
    assert names == {("tp_group_queue_length", "0"), ("tp_group_queue_length", "1"), ("qps", None)}
    assert all(1 <= len(s["points"]) <= 11 for s in body["series"])


@pytest.mark.parametrize(
    "params, status, detail",
    [
        ({"metric": "qps; DROP TABLE samples"}, 422, "invalid metric name"),
        ({"metric": ["qps", "tp_group_queue_lenght"]}, 422, "unknown metric 'tp_group_queue_lenght'"),
        ({"metric": "qps", "from": 200, "to": 100}, 422, "'from' must be before 'to'"),
        ({"metric": "qps", "points": 1}, 422, None),
        ({}, 422, None),
    ],
)
def test_bad_metric_requests_get_clear_4xx(api, params, status, detail):
    response = api.get("/api/targets/live/metrics", params=params)
    assert response.status_code == status
    if detail:
        assert detail in response.json()["detail"]


def test_unknown_target_and_route_are_404(api):
    assert api.get("/api/targets/nope").json() == {"detail": "unknown target 'nope'"}
    assert api.get("/api/targets/nope/state").status_code == 404
    assert api.get("/api/live", params={"target": "nope"}).status_code == 404
    assert api.get("/api/nothing-here").status_code == 404


def test_live_channel_pushes_each_poll(api):
    events = []
    with api.stream("GET", "/api/live", params={"target": "live"}, timeout=10) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        deadline = time.monotonic() + 10
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
            if len(events) >= 2 or time.monotonic() > deadline:
                break
    assert len(events) == 2
    assert {e["target"] for e in events} == {"live"}
    assert events[1]["ts"] > events[0]["ts"]
    assert any(s["metric"] == "tp_group_queue_length" for s in events[0]["samples"])
    assert events[0]["state"]["groups"]


def test_no_credential_in_any_response(api):
    bodies = [
        api.get(path).text
        for path in (
            "/api/targets",
            "/api/targets/live",
            "/api/targets/live/state",
            "/api/targets/noproc",
            "/api/targets/gone",
            "/api/targets/gone/state",
            "/api/openapi.json",
        )
    ]
    for body in bodies:
        assert MONITOR_PASSWORD not in body
        assert NOPROC_PASSWORD not in body


def test_openapi_documents_the_api(api):
    paths = api.get("/api/openapi.json").json()["paths"]
    assert {"/api/targets", "/api/targets/{name}/state", "/api/targets/{name}/metrics", "/api/live"} <= set(
        paths
    )


def test_who_held_the_pool_answers_a_range_and_refuses_bad_ones(api):
    # The live target is idle: no digest held anything, and the answer says over what range.
    idle = api.get("/api/targets/live/held", params={"from": 100, "to": 200})
    assert idle.status_code == 200, idle.text
    assert idle.json() == {"from": 100.0, "to": 200.0, "sort": "stalled", "digests": []}
    assert api.get("/api/targets/live/held", params={"from": 200, "to": 100}).status_code == 422
    assert api.get("/api/targets/live/held", params={"sort": "longest"}).status_code == 422
    assert api.get("/api/targets/live/held", params={"from": 0, "to": 40 * 86400}).status_code == 422
    assert api.get("/api/targets/nope/held").status_code == 404
