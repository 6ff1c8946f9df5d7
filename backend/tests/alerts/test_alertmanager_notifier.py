"""The Alertmanager notifier's bookkeeping, from plain alerts: what it posts on each transition and
on each resend. (Against a real Alertmanager and a real stall: tests/deploy/test_alertmanager.py.)"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from poolscope.alerts.notifiers.alertmanager import (
    RESOLVED_RESEND_S,
    AlertmanagerNotifier,
    postable_alert,
    shown_url,
)
from poolscope.alerts.notifiers.webhook import alertmanager_payload
from poolscope.alerts.settings import AlertmanagerSettings
from poolscope.config import Settings
from poolscope.schemas import Alert
from poolscope.store.live import LiveHub

T0 = 1_700_000_000.0


def _alert(status: str = "firing", **values: object) -> Alert:
    base: dict[str, object] = {
        "fingerprint": "fp1",
        "target": "db1",
        "rule": "group_stalled",
        "group": "0",
        "severity": "critical",
        "status": status,
        "summary": "db1: thread group 0 stalled",
        "description": "Group 0: STALLS counter rose",
        "labels": {"stall_reason": "stalls_counter"},
        "started_at": T0,
        "fired_at": T0 if status != "pending" else None,
        "last_active_at": T0,
    }
    base.update(values)
    return Alert(**base)  # type: ignore[arg-type]


class Engine:
    def __init__(self) -> None:
        self.alerts: list[Alert] = []

    def current(self) -> list[Alert]:
        return list(self.alerts)


def _notifier(engine: Engine, resend_s: float = 60) -> AlertmanagerNotifier:
    settings = AlertmanagerSettings(urls=["http://127.0.0.1:9093"], resend_interval_s=resend_s)
    return AlertmanagerNotifier(settings, "http://poolscope:8000", LiveHub(), engine.current)


def _sent(notifier: AlertmanagerNotifier) -> list[list[dict]]:
    batches = []
    while not notifier._queue.empty():
        batches.append(notifier._queue.get_nowait())
    return batches


def test_postable_alert_is_alertmanagers_v2_shape():
    body = postable_alert(_alert(), T0 + 240, "http://poolscope:8000")
    assert body == {
        "labels": {
            "alertname": "group_stalled",
            "target": "db1",
            "severity": "critical",
            "stall_reason": "stalls_counter",
            "group": "0",
        },
        "annotations": {
            "summary": "db1: thread group 0 stalled",
            "description": "Group 0: STALLS counter rose",
        },
        "startsAt": "2023-11-14T22:13:20.000Z",
        "endsAt": "2023-11-14T22:17:20.000Z",
        "generatorURL": "http://poolscope:8000/alerts",
    }


def test_the_rules_annotations_go_beside_summary_and_description_in_both_payloads():
    alert = _alert(annotations={"top_holder_digest": "7fde", "top_holder_connection": "12"})
    expected = {
        "top_holder_digest": "7fde",
        "top_holder_connection": "12",
        "summary": "db1: thread group 0 stalled",
        "description": "Group 0: STALLS counter rose",
    }
    assert postable_alert(alert, T0 + 240, "http://poolscope:8000")["annotations"] == expected
    hook = alertmanager_payload(alert, "pager", "http://poolscope:8000")
    assert hook["alerts"][0]["annotations"] == hook["commonAnnotations"] == expected


def test_firing_then_resolved_are_posted_in_order_with_endsat():
    engine = Engine()
    notifier = _notifier(engine)
    notifier.observe(_alert("pending"), T0)  # pending: Alertmanager hears nothing
    assert _sent(notifier) == []
    notifier.observe(_alert(), T0 + 1)
    notifier.observe(_alert("resolved", resolved_at=T0 + 9), T0 + 10)
    firing, resolved = _sent(notifier)
    assert firing[0]["endsAt"] == "2023-11-14T22:17:21.000Z"  # 4 resends ahead
    assert resolved[0]["endsAt"] == "2023-11-14T22:13:29.000Z"  # when it resolved
    assert firing[0]["labels"] == resolved[0]["labels"]
    # Resent with each resend for 15 minutes, then forgotten.
    assert [a["endsAt"] for a in notifier.reconcile(T0 + 70)] == ["2023-11-14T22:13:29.000Z"]
    assert notifier.reconcile(T0 + 10 + RESOLVED_RESEND_S + 1) == []


def test_resend_reposts_firing_alerts_and_ends_one_whose_resolution_was_missed():
    engine = Engine()
    notifier = _notifier(engine)
    engine.alerts = [_alert()]
    (again,) = notifier.reconcile(T0 + 60)
    assert again["endsAt"] == "2023-11-14T22:18:20.000Z"
    engine.alerts = []  # resolved, but the event never arrived
    (ended,) = notifier.reconcile(T0 + 120)
    assert ended["endsAt"] == "2023-11-14T22:15:20.000Z"


def test_a_silenced_alert_is_posted_ended_and_again_firing_when_unsilenced():
    engine = Engine()
    notifier = _notifier(engine)
    notifier.observe(_alert(silenced_by=None), T0)
    notifier.observe(_alert(silenced_by=7), T0 + 5)
    notifier.observe(_alert(silenced_by=None), T0 + 8)
    firing, ended, again = _sent(notifier)
    assert ended[0]["endsAt"] == "2023-11-14T22:13:25.000Z"
    assert again[0]["endsAt"] > again[0]["startsAt"] == firing[0]["startsAt"]
    # A silence from the start: never posted.
    other = _notifier(Engine())
    other.observe(_alert(silenced_by=3), T0)
    assert _sent(other) == []


def test_urls_are_validated_without_echoing_them():
    with pytest.raises(ValidationError) as error:  # the way a config file is read: through Settings
        Settings(alerts={"alertmanager": {"urls": ["http://127.0.0.1:9093", "ftp://user:s3cret@host/"]}})
    assert "alertmanager url #2 must be http(s)" in str(error.value)
    assert "s3cret" not in str(error.value)
    assert shown_url("https://user:s3cret@am.example:9093/prefix?token=x") == "https://am.example:9093"
