"""Alertmanager as a receiver: a stall provoked on the sandbox MariaDB reaches Debian's real
prometheus-alertmanager through its v2 API, with Poolscope's labels and annotations, and so does
its resolution (the alert leaves Alertmanager's active list, and Alertmanager's own resolved
notification carries Poolscope's resolution time)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
import yaml

from poolscope.config import Settings, TargetConfig
from poolscope_dev.sandbox import MONITOR_PASSWORD
from tests.alerts.support import Receiver, incident_load
from tests.deploy.support import DEPLOY, get_json, prometheus_server
from tests.poller.helpers import global_variables
from tests.served import served
from tests.waiting import wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """Where Alertmanager sends its own notifications (webhook receiver on loopback)."""
    hook = Receiver()
    try:
        yield hook
    finally:
        hook.close()


@pytest.fixture
def alertmanager(receiver: Receiver, tmp_path) -> Iterator[str]:
    """Alertmanager on loopback with deploy/alertmanager/alertmanager.yml, its receivers pointed at
    the test's, notifying within a second; no cluster port."""
    config = yaml.safe_load((DEPLOY / "alertmanager" / "alertmanager.yml").read_text())
    config["route"].update(group_wait="1s", group_interval="1s")
    for route in config["route"].get("routes", []):
        route["group_interval"] = "1s"
    for item in config["receivers"]:
        for hook in item["webhook_configs"]:
            hook["url"] = receiver.url
    (tmp_path / "prometheus-alertmanager.yml").write_text(yaml.safe_dump(config))
    flags = (f"--storage.path={tmp_path / 'data'}", "--cluster.listen-address=")
    with prometheus_server("prometheus-alertmanager", tmp_path, *flags) as base:
        yield base


def _ts(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _stall_alerts(base: str) -> list[dict[str, Any]]:
    return get_json(f"{base}/api/v2/alerts", filter='alertname="group_stalled"') or []


def _notified(receiver: Receiver, status: str, fingerprint_labels: dict[str, str]) -> dict[str, Any] | None:
    for body in receiver.bodies:
        for alert in body["alerts"]:
            if alert["status"] == status and alert["labels"] == fingerprint_labels:
                return alert  # type: ignore[no-any-return]
    return None


def test_provoked_stall_reaches_alertmanager_and_resolves(
    alertmanager: str, receiver: Receiver, mariadb, monitor_dsn, tmp_path
) -> None:
    settings = Settings(
        poll_interval_s=0.5,
        store_url=f"sqlite+aiosqlite:///{tmp_path / 'store.db'}",
        targets=[TargetConfig(name="db1", dsn=monitor_dsn)],
        alerts={
            "resolve_after_s": 2.0,
            # Firing alerts stay valid for 4 resends (240 s): longer than this test waits for the
            # resolution, so what resolves the alert in Alertmanager is Poolscope's post.
            "alertmanager": {"urls": [alertmanager], "resend_interval_s": 60},
        },
    )
    with served(settings) as api:
        with (
            global_variables(mariadb, thread_pool_size=1, thread_pool_stall_limit=100),
            incident_load(mariadb),
        ):
            (in_am,) = wait_for(
                lambda: _stall_alerts(alertmanager), 60, "no group_stalled alert reached Alertmanager"
            )[:1]
            mine = next(
                a
                for a in api.get("/api/alerts").json()["active"]
                if a["rule"] == "group_stalled" and a["group"] == in_am["labels"]["group"]
            )
        labels = in_am["labels"]
        assert labels["alertname"] == "group_stalled"
        assert labels["target"] == "db1" and labels["severity"] == "critical"
        assert labels["group"] == mine["group"] and labels["stall_reason"] in ("stalls_counter", "no_dequeue")
        assert (
            in_am["annotations"]["summary"] == mine["summary"] == f"db1: thread group {mine['group']} stalled"
        )
        assert in_am["annotations"]["description"].startswith(f"Group {mine['group']}: ")
        assert in_am["status"]["state"] == "active"
        assert in_am["generatorURL"].endswith("/alerts")
        assert _ts(in_am["startsAt"]) == pytest.approx(mine["fired_at"], abs=0.001)
        # Valid for four resend intervals, as Prometheus sends them.
        assert _ts(in_am["endsAt"]) > mine["fired_at"] + 200

        firing = wait_for(
            lambda: _notified(receiver, "firing", labels), 30, "Alertmanager never notified the firing alert"
        )
        assert firing["annotations"]["summary"] == in_am["annotations"]["summary"]

        # The stall is over: Poolscope resolves the alert and tells Alertmanager.
        resolved = wait_for(
            lambda: _notified(receiver, "resolved", labels), 90, "Alertmanager never heard the resolution"
        )
        stored = next(a for a in api.get("/api/alerts/history").json() if a["id"] == mine["id"])
        assert stored["status"] == "resolved"
        assert _ts(resolved["endsAt"]) == pytest.approx(stored["resolved_at"], abs=0.001)
        assert resolved["labels"] == firing["labels"]
        assert resolved["annotations"].keys() == firing["annotations"].keys()
        assert resolved["annotations"]["summary"] == firing["annotations"]["summary"]
        assert resolved["startsAt"] == firing["startsAt"]
        assert not [a for a in _stall_alerts(alertmanager) if a["labels"] == labels]

        metrics = api.get("/metrics").text
        shown = alertmanager.removeprefix("http://")
        delivered = f'poolscope_alertmanager_posts_total{{alertmanager="http://{shown}",outcome="delivered"}}'
        assert delivered in metrics and f"{delivered} 0\n" not in metrics
    assert MONITOR_PASSWORD not in json.dumps(receiver.bodies)
