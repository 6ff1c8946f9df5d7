"""Alerts, their live events, silences and webhook deliveries (docs/API.md "Alerts")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# How loud a rule's finding is, loudest first: alert rules and recommendation rules alike (the
# built-in alert rules use critical and warning).
Severity = Literal["critical", "warning", "info"]
AlertStatus = Literal["pending", "firing", "resolved"]
AlertTransition = Literal[
    "pending", "firing", "resolved", "acknowledged", "silenced", "unsilenced", "updated"
]


class Alert(BaseModel):
    """One alert instance: a rule's finding for one target (and group), through its lifecycle."""

    id: int | None = None  # assigned when it fires (pending alerts live in memory only)
    fingerprint: str  # stable per target + rule + group: the deduplication key
    target: str
    rule: str
    group: str | None = None
    severity: Severity
    status: AlertStatus
    summary: str
    description: str
    value: float | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    started_at: float  # the condition was first seen (pending)
    fired_at: float | None = None
    resolved_at: float | None = None
    last_active_at: float  # the condition (or its hysteresis band) was last seen
    poll_ts: float | None = None  # the poll whose evaluation made it fire
    flapping: bool = False
    acked_by: str | None = None
    acked_at: float | None = None
    silenced_by: int | None = None  # id of the silence that mutes it
    snapshot_id: int | None = None  # incident snapshot captured when it fired


class AlertEvent(BaseModel):
    """What the live channel pushes (`event: alert`) when an alert changes."""

    target: str
    ts: float
    transition: AlertTransition
    alert: Alert


class Silence(BaseModel):
    id: int
    target: str | None = None  # None = any
    rule: str | None = None
    group: str | None = None
    starts_at: float
    ends_at: float
    created_by: str
    comment: str = ""

    def matches(self, alert: Alert, now: float) -> bool:
        return (
            self.starts_at <= now < self.ends_at
            and self.target in (None, alert.target)
            and self.rule in (None, alert.rule)
            and self.group in (None, alert.group)
        )


class Delivery(BaseModel):
    """One attempt to deliver one alert notification to one webhook receiver."""

    id: int
    receiver: str
    alert_id: int | None
    fingerprint: str
    alert_status: str
    outcome: Literal["delivered", "retrying", "failed", "dropped"]
    attempt: int
    http_status: int | None = None
    error: str | None = None
    at: float
    duration_ms: float | None = None
