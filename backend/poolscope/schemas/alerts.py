"""Alerts, their live events, silences and webhook deliveries."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from poolscope.schemas.base import Schema

# How loud a rule's finding is, loudest first: alert rules and recommendation rules alike (the
# built-in alert rules use critical and warning).
Severity = Literal["critical", "warning", "info"]
AlertStatus = Literal["pending", "firing", "resolved"]
AlertTransition = Literal[
    "pending", "firing", "resolved", "acknowledged", "silenced", "unsilenced", "updated"
]


class Alert(Schema):
    """One alert instance: a rule's finding for one target (and group), through its lifecycle."""

    id: int | None = None
    """Assigned when it fires; null while pending (pending alerts live in memory only)."""
    fingerprint: str
    """Stable per target + rule + group: the deduplication key."""
    target: str
    """The target's name."""
    rule: str
    """The alert rule that found it (see the alert rule reference)."""
    group: str | None = None
    """The thread group, for per-group rules."""
    severity: Severity
    """The rule's severity."""
    status: AlertStatus
    """`pending` (condition seen, not yet held for the rule's for-duration), `firing` or
    `resolved`."""
    summary: str
    """One line: what is wrong, where."""
    description: str
    """The why, with the evidence numbers (SQL with its literals replaced by ?)."""
    value: float | None = None
    """The value that crossed the threshold, in the rule's unit."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Extra labels the rule adds (e.g. stall_reason), sent to Alertmanager and webhooks."""
    annotations: dict[str, str] = Field(default_factory=dict)
    """Extra annotations the rule adds at its latest evaluation, sent to Alertmanager and webhooks
    beside summary and description (group_stalled: top_holder, top_holder_connection,
    top_holder_digest, top_holder_blocker). Not stored: the description names the same."""
    started_at: float
    """When the condition was first seen (pending), Unix time in seconds."""
    fired_at: float | None = None
    """When it started firing."""
    resolved_at: float | None = None
    """When it resolved."""
    last_active_at: float
    """When the condition (or its hysteresis band) was last seen."""
    poll_ts: float | None = None
    """The poll whose evaluation made it fire."""
    flapping: bool = False
    """It fired flap_max_fires times within flap_window_s: it resolves only after
    flap_resolve_after_s clear."""
    acked_by: str | None = None
    """The user who acknowledged it."""
    acked_at: float | None = None
    """When it was acknowledged."""
    silenced_by: int | None = None
    """The id of the silence that mutes it."""
    snapshot_id: int | None = None
    """The incident snapshot captured (or linked) when it fired."""


class AlertEvent(Schema):
    """What the live channel pushes (`event: alert`) when an alert changes."""

    target: str
    """The target's name."""
    ts: float
    """When the change happened, Unix time in seconds."""
    transition: AlertTransition
    """What changed: pending, firing, resolved, acknowledged, silenced, unsilenced, or updated
    (e.g. a snapshot was linked). A client keeps alerts by fingerprint and drops one on
    `resolved`."""
    alert: Alert
    """The alert after the change."""


class Silence(Schema):
    """Mutes the notifications of the alerts it matches while it lasts (they still show)."""

    id: int
    """The silence's id."""
    target: str | None = None
    """Matches alerts of this target; null: any."""
    rule: str | None = None
    """Matches alerts of this rule; null: any."""
    group: str | None = None
    """Matches alerts of this thread group; null: any."""
    starts_at: float
    """When it starts, Unix time in seconds."""
    ends_at: float
    """When it ends."""
    created_by: str
    """The user who made it."""
    comment: str = ""
    """Why, as its author wrote it."""

    def matches(self, alert: Alert, now: float) -> bool:
        return (
            self.starts_at <= now < self.ends_at
            and self.target in (None, alert.target)
            and self.rule in (None, alert.rule)
            and self.group in (None, alert.group)
        )


class Delivery(Schema):
    """One attempt to deliver one alert notification to one webhook receiver."""

    id: int
    """The attempt's id."""
    receiver: str
    """The webhook receiver's name."""
    alert_id: int | None
    """The alert notified."""
    fingerprint: str
    """The alert's fingerprint."""
    alert_status: str
    """The status notified: firing or resolved."""
    outcome: Literal["delivered", "retrying", "failed", "dropped"]
    """`delivered`; `retrying` (this attempt failed, another follows); `failed` (gave up after
    max_attempts); `dropped` (the receiver's queue was full)."""
    attempt: int
    """Which attempt this was, from 1 (0 for a dropped notification)."""
    http_status: int | None = None
    """The receiver's HTTP status, if it answered."""
    error: str | None = None
    """What went wrong, if anything."""
    at: float
    """When the attempt ended, Unix time in seconds."""
    duration_ms: float | None = None
    """How long the attempt took, in ms."""
