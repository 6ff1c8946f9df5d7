"""An API process (role "api") serves the UI from what a separate poller process wrote to the store:
targets, state, /metrics, alerts and the live channel; never a credential."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from poolscope.alerts.engine import AlertEngine
from poolscope.alerts.repository import AlertRepository
from poolscope.alerts.settings import AlertSettings
from poolscope.auth.passwords import hash_password
from poolscope.config import load_settings
from poolscope.schemas import AlertEvent
from poolscope.store.feed import AlertEventLog
from poolscope.store.latest import target_latest
from tests.alerts.states import pending_change, stalled
from tests.served import login, ready_app
from tests.stores import make_store
from tests.waiting import await_for, wait_for

BACKEND = Path(__file__).resolve().parents[2]
SECRET = "Sw0rdf1sh-not-for-eyes"
OPERATOR_PW = "op-api-role-pw"


@pytest.fixture
def config(tmp_path, store_url) -> Path:
    path = tmp_path / "poolscope.toml"
    path.write_text(
        f'poll_interval_s = 0.5\nstore_url = "{store_url}"\n'
        '[[targets]]\nname = "fx"\ndsn = "fixture://mariadb/10.11"\n'
        # Nothing listens on port 1: a down target whose DSN holds a password.
        f'[[targets]]\nname = "down"\ndsn = "mysql://monitor:{SECRET}@127.0.0.1:1/"\n'
        f'[[users]]\nname = "op"\nrole = "operator"\npassword_hash = \'{hash_password(OPERATOR_PW)}\'\n'
    )
    return path


@contextlib.contextmanager
def poller_process(config: Path) -> Iterator[subprocess.Popen]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.live.poller_process", str(config)],
        cwd=BACKEND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "polling"
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def read_frames(client: httpx.Client, wanted: int, timeout_s: float = 20.0) -> list[tuple[str, dict]]:
    frames: list[tuple[str, dict]] = []
    deadline = time.monotonic() + timeout_s
    with client.stream("GET", "/api/live", timeout=timeout_s) as response:
        assert response.status_code == 200
        kind = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                frames.append((kind, json.loads(line[6:])))
            if len(frames) >= wanted or time.monotonic() > deadline:
                break
    return frames


async def write_alerts(store_url: str) -> None:
    """An alert engine elsewhere fires on fx; a pending change is logged (as the pollers log them)."""
    store = make_store(store_url)
    try:
        engine = AlertEngine(AlertSettings(), store.hub, AlertRepository(store.engine))
        alert_log = AlertEventLog(store.hub, store.latest_rows)
        await alert_log.start()
        now = time.time()
        await engine.evaluate(stalled(now).model_copy(update={"target": "fx"}))
        store.hub.publish(pending_change("down", now))

        async def logged_changes() -> list[AlertEvent]:
            return [
                AlertEvent.model_validate_json(d) for d in await store.latest_rows.alert_events_after(now)
            ]

        await await_for(
            logged_changes,
            5,
            "the log never wrote both changes",
            until=lambda got: {e.alert.fingerprint for e in got} >= {"p1", engine.current()[0].fingerprint},
        )
        await alert_log.stop()
    finally:
        await store.close()


def test_an_api_process_serves_what_a_poller_process_wrote(config, store_url):
    settings = load_settings(config)
    with poller_process(config), ready_app(settings, role="api") as base, httpx.Client(base_url=base) as http:
        csrf = login(http, "op", OPERATOR_PW)
        targets = wait_for(
            lambda: {t["name"]: t for t in http.get("/api/targets").json()},
            30,
            lambda t: f"fx not up or down not down: {t!r}",
            until=lambda t: t["fx"]["status"] == "up" and t["down"]["status"] == "down",
        )
        assert targets["fx"]["server"] is not None
        state = http.get("/api/targets/fx/state")
        assert state.status_code == 200 and state.json()["groups"]
        assert http.get("/api/targets/down/state").status_code == 503
        metrics = http.get("/metrics").text
        assert 'poolscope_last_success_timestamp_seconds{target="fx"}' in metrics
        assert "poolscope_tp_group_" in metrics

        frames = read_frames(http, wanted=4)
        polls = [data for kind, data in frames if kind == "poll"]
        assert {p["target"] for p in polls} <= {"fx", "down"} and len(polls) >= 3
        fx = [p for p in polls if p["target"] == "fx"]
        assert fx and fx[-1]["state"]["groups"] and fx[-1]["target_info"]["status"] == "up"
        assert [p["ts"] for p in fx] == sorted(p["ts"] for p in fx)

        asyncio.run(write_alerts(store_url))
        alerts = http.get("/api/alerts").json()
        by_rule = {(a["target"], a["rule"]): a for a in alerts["active"]}
        assert by_rule[("fx", "group_stalled")]["status"] == "firing"
        assert {a["fingerprint"]: a["status"] for a in alerts["active"]}["p1"] == "pending"
        statuses = [a["status"] for a in alerts["active"]]
        assert statuses == sorted(statuses, key=["firing", "pending"].index)
        firing = by_rule[("fx", "group_stalled")]
        assert [a["id"] for a in http.get("/api/alerts/history").json()] == [firing["id"]]
        assert "group_stalled" in {r["name"] for r in http.get("/api/alerts/rules").json()["rules"]}
        # Acknowledged here, in the API process: stored, and sent to every live channel.
        with http.stream("GET", "/api/live", params={"events": "alert"}, timeout=20) as live:
            acked = http.post(f"/api/alerts/{firing['id']}/ack", headers=csrf)
            assert acked.status_code == 200 and acked.json()["acked_by"]
            # The poller process may send its own alert changes meanwhile (the down target's).
            changes = (json.loads(line[6:]) for line in live.iter_lines() if line.startswith("data: "))
            change = next(c for c in changes if c["transition"] == "acknowledged")
        assert change["transition"] == "acknowledged" and change["alert"]["id"] == firing["id"]
        now_active = {a["fingerprint"]: a for a in http.get("/api/alerts").json()["active"]}
        assert now_active[firing["fingerprint"]]["acked_by"] == acked.json()["acked_by"]
        assert http.post("/api/alerts/999999/ack", headers=csrf).status_code == 404

        answers = [http.get(p).text for p in ("/api/targets", "/api/targets/down", "/metrics", "/api/alerts")]
        for text in [*answers, json.dumps(frames)]:
            assert SECRET not in text
    rows = asyncio.run(latest_rows(store_url))
    assert len(rows) == 2 and SECRET not in repr(rows)


async def latest_rows(store_url: str) -> list:
    store = make_store(store_url)
    try:
        async with store.engine.connect() as conn:
            return list((await conn.execute(select(target_latest))).all())
    finally:
        await store.close()
