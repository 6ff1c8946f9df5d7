"""The alerts API over a real app and MariaDB: reads for logged-in users, operator-only silences with clear
4xx, no secret in the rules answer."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from poolscope.alerts.repository import AlertRepository
from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from poolscope.schemas import Alert
from tests.served import login, served

OPERATOR_PW = "alerts-operator-pw"
VIEWER_PW = "alerts-viewer-pw"


@pytest.fixture(scope="module")
def store_url(tmp_path_factory):
    return f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('alerts') / 'store.db'}"


@pytest.fixture(scope="module")
def app(monitor_dsn, store_url):
    settings = Settings(
        poll_interval_s=0.5,
        store_url=store_url,
        targets=[TargetConfig(name="db1", dsn=monitor_dsn)],
        users=[
            UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW)),
            UserConfig(name="vi", role="viewer", password_hash=hash_password(VIEWER_PW)),
        ],
        alerts={
            "webhooks": [
                {
                    "name": "chat",
                    "url": "https://hooks.example.com/x?token=s3cr3t",
                    "headers": {"Authorization": "Bearer t0k3n"},
                }
            ],
            "overrides": {"db1": {"queue_length_max": 50}},
        },
    )
    with served(settings, login_as=("vi", VIEWER_PW)) as client:
        yield client


def test_reads_need_a_login_and_rules_hide_receiver_secrets(app):
    with httpx.Client(base_url=str(app.base_url), timeout=10) as anonymous:
        assert anonymous.get("/api/alerts").status_code == 401
        assert anonymous.get("/api/alerts/rules").status_code == 401
    assert app.get("/api/alerts").json() == {"active": [], "silences": []}
    rules = app.get("/api/alerts/rules")
    assert rules.status_code == 200
    body = rules.json()
    assert {r["name"] for r in body["rules"]} >= {"group_stalled", "target_down", "lock_wait_long"}
    assert body["overrides"] == {"db1": {"queue_length_max": 50}}
    assert body["receivers"] == [
        {"name": "chat", "url": "https://hooks.example.com/…", "send_resolved": True}
    ]
    assert "s3cr3t" not in rules.text and "t0k3n" not in rules.text


def test_silences_need_an_operator_and_say_what_is_wrong(app):
    with httpx.Client(base_url=str(app.base_url), timeout=10) as viewer_client:
        viewer = login(viewer_client, "vi", VIEWER_PW)
        refused = viewer_client.post(
            "/api/alerts/silences", json={"target": "db1", "duration_s": 3600}, headers=viewer
        )
        assert refused.status_code == 403
    headers = login(app, "op", OPERATOR_PW)
    for body, status, detail in [
        ({"duration_s": 3600}, 422, "at least one of target, rule, group"),
        ({"target": "nope", "duration_s": 3600}, 404, "unknown target"),
        ({"rule": "nope", "duration_s": 3600}, 422, "unknown rule"),
        ({"target": "db1", "duration_s": 5}, 422, "greater than or equal to 60"),
    ]:
        response = app.post("/api/alerts/silences", json=body, headers=headers)
        assert response.status_code == status, response.text
        assert detail in str(response.json()["detail"])
    assert app.get("/api/alerts").json()["silences"] == []
    created = app.post(
        "/api/alerts/silences",
        json={"target": "db1", "rule": "group_stalled", "duration_s": 3600, "comment": "maintenance"},
        headers=headers,
    )
    assert created.status_code == 201
    silence = created.json()
    assert silence["created_by"] == "op" and silence["ends_at"] > silence["starts_at"]
    assert [s["id"] for s in app.get("/api/alerts").json()["silences"]] == [silence["id"]]
    assert app.delete(f"/api/alerts/silences/{silence['id']}", headers=headers).status_code == 200
    assert app.get("/api/alerts").json()["silences"] == []
    assert app.delete("/api/alerts/silences/99999", headers=headers).status_code == 404
    assert app.post("/api/alerts/99999/ack", headers=headers).status_code == 404


def test_live_channel_can_carry_only_alert_events(app):
    assert app.get("/api/live", params={"events": "nonsense"}).status_code == 422


def _stored_alert(n: int, fired_at: float, resolved_at: float | None) -> Alert:
    return Alert(
        fingerprint=f"bands-{n}",
        target="bands",
        rule="group_stalled",
        group="0",
        severity="critical",
        status="resolved" if resolved_at else "firing",
        summary=f"alert {n}",
        description="",
        started_at=fired_at,
        fired_at=fired_at,
        resolved_at=resolved_at,
        last_active_at=resolved_at or fired_at,
    )


def test_history_lists_the_alerts_firing_at_some_moment_of_a_range(app, store_url):
    async def insert() -> None:
        db = create_async_engine(store_url)
        repo = AlertRepository(db)
        for n, (fired, resolved) in enumerate([(1000.0, 1100.0), (2000.0, 2100.0), (3000.0, None)]):
            await repo.insert(_stored_alert(n, fired, resolved))
        await db.dispose()

    asyncio.run(insert())

    def summaries(**params: float) -> list[str]:
        answer = app.get("/api/alerts/history", params={"target": "bands", **params})
        assert answer.status_code == 200, answer.text
        return [a["summary"] for a in answer.json()]

    assert summaries() == ["alert 2", "alert 1", "alert 0"]
    # Overlap, not containment: an alert that began before `from` or ends after `to` is in.
    assert summaries(**{"from": 1050, "to": 2050}) == ["alert 1", "alert 0"]
    assert summaries(**{"from": 2101, "to": 2999}) == []
    # One still firing is in every range after it fired.
    assert summaries(**{"from": 5000, "to": 6000}) == ["alert 2"]
    wrong = app.get("/api/alerts/history", params={"from": 10, "to": 5})
    assert wrong.status_code == 422 and "from" in wrong.text
