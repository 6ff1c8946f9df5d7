"""Poolscope's own health, as /metrics exposes it (rendered by api/prometheus.py from the
target's info and state, the alert engine and the notifiers, not from stored samples)."""

from __future__ import annotations

from poolscope.metrics import Metric

METRICS = (
    Metric(
        "poolscope_build_info",
        "always 1; the version label says which Poolscope answers",
        labels=("version",),
        prometheus="poolscope_build_info",
        stored=False,
    ),
    Metric(
        "poolscope_poll_duration_seconds",
        "wall time of the last poll",
        unit="s",
        labels=("target",),
        prometheus="poolscope_poll_duration_seconds",
        stored=False,
    ),
    Metric(
        "poolscope_last_success_timestamp_seconds",
        "time of the last successful poll",
        unit="s",
        labels=("target",),
        prometheus="poolscope_last_success_timestamp_seconds",
        stored=False,
    ),
    Metric(
        "poolscope_collector_success",
        "1 when the collector ran and parsed in the last poll",
        labels=("target", "collector"),
        prometheus="poolscope_collector_success",
        stored=False,
    ),
    Metric(
        "poolscope_collector_duration_seconds",
        "collector time in the last poll",
        unit="s",
        labels=("target", "collector"),
        prometheus="poolscope_collector_duration_seconds",
        stored=False,
    ),
    Metric(
        "poolscope_tp_group_stalled",
        "1 when Poolscope judged the group stalled (STALLS rose or no dequeue), as the group_stalled alert does",
        labels=("target", "group"),
        prometheus="poolscope_tp_group_stalled",
        stored=False,
    ),
    Metric(
        "poolscope_tp_group_oldest_queued_seconds",
        "wait of the group's oldest queued connection",
        unit="s",
        labels=("target", "group"),
        prometheus="poolscope_tp_group_oldest_queued_seconds",
        stored=False,
    ),
    Metric(
        "poolscope_alerts",
        "alerts by state (firing, pending) per target, rule and severity",
        labels=("target", "rule", "severity", "state"),
        prometheus="poolscope_alerts",
        stored=False,
    ),
    Metric(
        "poolscope_alert_evaluations_total",
        "polls evaluated by the alert engine",
        kind="counter",
        prometheus="poolscope_alert_evaluations_total",
        stored=False,
    ),
    Metric(
        "poolscope_webhook_deliveries_total",
        "webhook notifications delivered or given up, per receiver",
        kind="counter",
        labels=("receiver", "outcome"),
        prometheus="poolscope_webhook_deliveries_total",
        stored=False,
    ),
    Metric(
        "poolscope_webhook_queue_length",
        "notifications waiting for a receiver",
        labels=("receiver",),
        prometheus="poolscope_webhook_queue_length",
        stored=False,
    ),
    Metric(
        "poolscope_alertmanager_posts_total",
        "POSTs of alerts to an Alertmanager's v2 API, delivered (2xx) or failed",
        kind="counter",
        labels=("alertmanager", "outcome"),
        prometheus="poolscope_alertmanager_posts_total",
        stored=False,
    ),
)
