"""The incident story against a real MariaDB: a provoked stall fires an alert, it reaches webhook
receivers in Alertmanager's v4 format (a hanging and a dead receiver do not hold up the good one
or polling), an automatic snapshot names the queued connections and their SQL, and the alert
resolves after the stall ends."""

from __future__ import annotations

import threading

import pytest

from poolscope.auth.passwords import hash_password
from poolscope.config import Settings, TargetConfig, UserConfig
from poolscope_dev.sandbox import MONITOR_PASSWORD, free_port
from tests.alerts.support import MARKER, Receiver, SseReader, incident_load
from tests.poller.helpers import global_variables
from tests.served import login, served
from tests.waiting import wait_for

OPERATOR_PW = "incident-operator-pw"


@pytest.mark.slow
def test_provoked_stall_alerts_notifies_snapshots_and_resolves(mariadb, monitor_dsn, tmp_path):
    good = Receiver()
    hang = threading.Event()
    hanging = Receiver(hold=hang)
    dead_url = f"http://127.0.0.1:{free_port()}/hook"
    settings = Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
        targets=[TargetConfig(name="db1", dsn=monitor_dsn)],
        users=[UserConfig(name="op", role="operator", password_hash=hash_password(OPERATOR_PW))],
        alerts={
            "resolve_after_s": 2.0,
            "webhooks": [
                {"name": "good", "url": good.url},
                {"name": "hanging", "url": hanging.url, "timeout_s": 60},
                {"name": "dead", "url": dead_url, "max_attempts": 3, "backoff_initial_s": 0.2},
            ],
        },
        snapshots={"window_before_s": 30, "window_after_s": 3, "auto_cooldown_s": 600},
    )
    try:
        with served(settings, login_as=("op", OPERATOR_PW)) as api:
            headers = login(api, "op", OPERATOR_PW)
            sse = SseReader(str(api.base_url), "?target=db1", headers=dict(api.headers))
            with (
                global_variables(mariadb, thread_pool_size=1, thread_pool_stall_limit=100),
                incident_load(mariadb),
            ):
                firing = wait_for(
                    lambda: [
                        a for a in api.get("/api/alerts").json()["active"] if a["rule"] == "group_stalled"
                    ],
                    60,
                    "no group_stalled alert fired during a provoked stall",
                )[0]
                assert firing["status"] == "firing" and firing["severity"] == "critical"
                # It fires on the evaluation of the poll that showed the stall (stall_for_s = 0).
                assert firing["fired_at"] == firing["poll_ts"] == firing["started_at"]
                polls_before = len(sse.of("poll"))

                body = wait_for(
                    lambda: _payload(good, "firing"), 30, "the good receiver got no firing payload"
                )
                # Polling goes on while a receiver hangs on the same alert.
                wait_for(
                    lambda: len(sse.of("poll")) > polls_before + 2,
                    15,
                    "polling stopped while a receiver hung",
                )
                assert hanging.in_flight >= 1 and not hanging.bodies

                acked = api.post(f"/api/alerts/{firing['id']}/ack", headers=headers)
                assert acked.status_code == 200, acked.text
                assert acked.json()["acked_by"] == "op"

            # The stall is over: the alert resolves and the good receiver hears it, still while the
            # other receiver hangs.
            resolved_body = wait_for(lambda: _payload(good, "resolved"), 90, "the alert never resolved")
            assert hanging.in_flight >= 1 and not hanging.bodies
            alert_events = [e for e in sse.of("alert") if e["alert"]["fingerprint"] == firing["fingerprint"]]
            assert [e["transition"] for e in alert_events][:1] == ["firing"]
            assert "resolved" in [e["transition"] for e in alert_events]
            assert "acknowledged" in [e["transition"] for e in alert_events]

            # The poller judges a poll before the store has it, and writes the alert's change after
            # (store/writer.py): the stored resolution may follow the live event by a moment.
            def stored_resolved() -> dict | None:
                history = api.get("/api/alerts/history", params={"target": "db1"}).json()
                found = next(a for a in history if a["id"] == firing["id"])
                return found if found["status"] == "resolved" else None

            stored = wait_for(stored_resolved, 30, "the resolution was never stored")
            assert stored["resolved_at"] >= stored["fired_at"]
            assert stored["acked_by"] == "op"

            _assert_alertmanager_v4(body, "firing", firing)
            _assert_alertmanager_v4(resolved_body, "resolved", firing)

            dead_log = wait_for(
                lambda: [
                    d
                    for d in api.get("/api/alerts/deliveries", params={"receiver": "dead"}).json()
                    if d["outcome"] == "failed"
                ],
                30,
                "the dead receiver's failure was never logged",
            )
            assert dead_log[0]["attempt"] == 3 and dead_log[0]["error"]
            outcomes = {
                d["outcome"] for d in api.get("/api/alerts/deliveries", params={"receiver": "dead"}).json()
            }
            assert "retrying" in outcomes
            good_log = api.get("/api/alerts/deliveries", params={"receiver": "good"}).json()
            assert {d["alert_status"] for d in good_log if d["outcome"] == "delivered"} >= {
                "firing",
                "resolved",
            }

            # The hanging receiver, once it answers, gets its (queued) notifications in order.
            hang.set()

            def stall_statuses() -> list[str]:
                seen = [
                    b["status"]
                    for b in hanging.bodies
                    if b["alerts"][0]["fingerprint"] == firing["fingerprint"]
                ]
                # A request that timed out while hanging is retried: the same status may come twice.
                return [s for i, s in enumerate(seen) if i == 0 or seen[i - 1] != s]

            wait_for(lambda: "resolved" in stall_statuses(), 60, "the released receiver never got its queue")
            assert stall_statuses()[:2] == ["firing", "resolved"]

            # The automatic snapshot: linked to the alert, names who waited and what they ran.
            # (One is captured per auto_cooldown_s: the first stall alert of the target gets it, and so
            # does every other alert whose poll its window covers; this window ends 3 s after its
            # moment, so a stall that fired again later links none and it may be another alert than
            # `firing`. tests/snapshots/test_service.py has the cooldown's cases.)
            linked = wait_for(
                lambda: next(
                    (
                        a
                        for a in api.get("/api/alerts/history").json()
                        if a["rule"] == "group_stalled" and a["snapshot_id"]
                    ),
                    None,
                ),
                30,
                "no automatic snapshot was linked to a stall alert",
            )
            snapshot_id = linked["snapshot_id"]
            listed = {s["id"]: s for s in api.get("/api/snapshots").json()}
            assert listed[snapshot_id]["trigger"] == "alert"
            doc = wait_for(
                lambda: api.get(f"/api/snapshots/{snapshot_id}").json(),
                30,
                "the snapshot's window never completed",
                until=lambda d: d["window"]["complete"],
            )
            queue = doc["state"]["queue"]
            # The poll that fired may come as its queue drains (the stall counter rises after the
            # fact, under load a poll later): the queued connections of the run-up are then in the
            # snapshot's flight recorder, each second's queue as the poller read it.
            recorded = [q for e in doc["flight_recorder"] for g in e["groups"] for q in g["queued"]]
            assert queue or recorded, "the snapshot names no queued connection"
            if queue:
                named = [q for q in queue if q["user"] == "sbtest" and q["host"] and q["connection_id"]]
                assert named, f"no queued connection is named: {queue}"
                with_sql = [q for q in named if MARKER in (q["last_sql"] or q["info"] or "")]
                assert with_sql, f"no queued connection carries its SQL: {queue}"
            else:
                named = [q for q in recorded if q["user"] == "sbtest" and q["host"] and q["connection_id"]]
                assert named, f"no queued connection is named in the flight recorder: {recorded}"
            assert any(g["stalled"] for g in doc["state"]["groups"])
            assert doc["server_tables"]["global_status"]["Threads_connected"]
            assert doc["server_tables"]["global_variables"]["thread_pool_size"] == "1"
            assert any(MARKER in (r.get("info") or "") for r in doc["server_tables"]["processlist"])
            assert doc["target_info"]["server"]["flavor"] == "mariadb"
            assert any(s["metric"] == "tp_group_stalled" for s in doc["series"])
            assert doc["window"]["to"] - doc["window"]["from"] == pytest.approx(33)
            assert any(a["id"] == linked["id"] for a in doc["alerts"])
            assert doc["alert_id"] == linked["id"]
            assert doc["variable_changes"] == []  # nothing was applied to this target in the window
            raw = api.get(f"/api/snapshots/{snapshot_id}").text
            assert MONITOR_PASSWORD not in raw and OPERATOR_PW not in raw
            history = api.get("/api/alerts/history", params={"target": "db1"}).json()
            fired = sorted({(a["rule"], a["group"]) for a in history})
            print("alerts fired during the incident:", fired)
            sse.close()
    finally:
        good.close()
        hanging.close()


def _payload(receiver: Receiver, status: str) -> dict | None:
    return next(
        (
            b
            for b in receiver.bodies
            if b["status"] == status and b["commonLabels"].get("alertname") == "group_stalled"
        ),
        None,
    )


def _assert_alertmanager_v4(body: dict, status: str, alert: dict) -> None:
    assert body["version"] == "4"
    assert body["status"] == status
    assert body["receiver"] == "good"
    assert body["groupLabels"] == {"alertname": "group_stalled", "target": "db1"}
    assert body["groupKey"] == '{}:{alertname="group_stalled", target="db1"}'
    assert body["truncatedAlerts"] == 0
    assert body["externalURL"].startswith("http://")
    (item,) = body["alerts"]
    assert item["status"] == status
    assert item["labels"]["alertname"] == "group_stalled"
    assert item["labels"]["target"] == "db1"
    assert item["labels"]["severity"] == "critical"
    assert item["labels"]["group"] == alert["group"]
    assert item["fingerprint"] == alert["fingerprint"]
    assert item["annotations"]["summary"] and item["annotations"]["description"]
    assert item["startsAt"].endswith("Z")
    if status == "firing":
        assert item["endsAt"] == "0001-01-01T00:00:00Z"
    else:
        assert item["endsAt"] > item["startsAt"]
    assert item["generatorURL"].endswith("/alerts")
