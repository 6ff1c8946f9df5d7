"""Webhook receiver settings and the Alertmanager v4 payload, from data (delivery itself: test_stall_incident.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from poolscope.alerts.notifiers.webhook import ZERO_TIME, alertmanager_payload
from poolscope.alerts.settings import AlertSettings, WebhookReceiver
from poolscope.schemas import Alert


def test_receiver_url_is_shown_without_its_secrets():
    r = WebhookReceiver(name="x", url="https://user:pw@hooks.example.com:8443/p/q?token=abc")
    assert r.safe_url() == "https://hooks.example.com:8443/…"
    assert WebhookReceiver(name="y", url="http://[::1]:9000/").safe_url() == "http://[::1]:9000/"
    assert "abc" not in repr(r) and "pw" not in repr(r)


@pytest.mark.parametrize("url", ["ftp://h/x", "not a url", "http:///nohost"])
def test_receiver_url_must_be_http(url):
    with pytest.raises(ValidationError, match="webhook url must be http"):
        WebhookReceiver(name="x", url=url)


def test_receiver_names_are_unique():
    with pytest.raises(ValidationError, match="unique"):
        AlertSettings(webhooks=[{"name": "a", "url": "http://h/1"}, {"name": "a", "url": "http://h/2"}])


def test_resolved_payload_has_an_end_time_and_the_group_label():
    alert = Alert(
        fingerprint="f",
        target="db1",
        rule="queue_length_high",
        group="3",
        severity="warning",
        status="resolved",
        summary="s",
        description="d",
        started_at=100.0,
        fired_at=110.0,
        resolved_at=170.5,
        last_active_at=165.0,
        labels={"extra": "1"},
    )
    body = alertmanager_payload(alert, "ops", "http://poolscope:8000")
    item = body["alerts"][0]
    assert body["status"] == item["status"] == "resolved"
    assert item["startsAt"] == "1970-01-01T00:01:50.000Z"
    assert item["endsAt"] == "1970-01-01T00:02:50.500Z" != ZERO_TIME
    assert item["labels"] == {
        "alertname": "queue_length_high",
        "target": "db1",
        "severity": "warning",
        "group": "3",
        "extra": "1",
    }
    assert body["commonAnnotations"] == {"summary": "s", "description": "d"}
