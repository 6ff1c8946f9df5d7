"""Poolscope's own health, as /metrics exposes it (rendered by api/prometheus.py from the
target's info and state, the alert engine and the notifiers, not from stored samples)."""

from __future__ import annotations

from typing import Any

from poolscope.metrics import Metric


def _family(name: str, help_text: str, **details: Any) -> Metric:
    """A /metrics family of Poolscope's own: named as Prometheus sees it, not a stored series."""
    return Metric(name, help_text, prometheus=name, stored=False, **details)


METRICS = (
    _family(
        "poolscope_build_info",
        "always 1; the version label says which Poolscope answers",
        labels=("version",),
    ),
    _family(
        "poolscope_target_info",
        "always 1, one series per configured target; its tags as labels tag_<name> (. and - in a "
        "name become _), for joins such as `* on(target) group_left(tag_cluster) poolscope_target_info`",
        labels=("target",),
    ),
    _family(
        "poolscope_poll_duration_seconds",
        "wall time of the last poll",
        unit="s",
        labels=("target",),
    ),
    _family(
        "poolscope_last_success_timestamp_seconds",
        "time of the last successful poll",
        unit="s",
        labels=("target",),
    ),
    _family(
        "poolscope_collector_success",
        "1 when the collector ran and parsed in the last poll",
        labels=("target", "collector"),
    ),
    _family(
        "poolscope_collector_duration_seconds",
        "collector time in the last poll",
        unit="s",
        labels=("target", "collector"),
    ),
    _family(
        "poolscope_tp_group_stalled",
        "1 when Poolscope judged the group stalled (STALLS rose or no dequeue), as the group_stalled alert does",
        labels=("target", "group"),
    ),
    _family(
        "poolscope_tp_group_oldest_queued_seconds",
        "wait of the group's oldest queued connection",
        unit="s",
        labels=("target", "group"),
    ),
    _family(
        "poolscope_alerts",
        "alerts by state (firing, pending) per target, rule and severity",
        labels=("target", "rule", "severity", "state"),
    ),
    _family(
        "poolscope_alert_evaluations_total",
        "polls evaluated by the alert engine",
        kind="counter",
    ),
    _family(
        "poolscope_webhook_deliveries_total",
        "webhook notifications delivered or given up, per receiver",
        kind="counter",
        labels=("receiver", "outcome"),
    ),
    _family(
        "poolscope_webhook_queue_length",
        "notifications waiting for a receiver",
        labels=("receiver",),
    ),
    _family(
        "poolscope_login_attempts_total",
        "login attempts answered, by outcome: ok, or wrong (name or password); refused ones are in"
        " poolscope_limit_refusals_total",
        kind="counter",
        labels=("outcome",),
    ),
    _family(
        "poolscope_limit_refusals_total",
        "requests refused by a limit (429), per limit: login_backoff (address and name), login_address,"
        " login_in_flight, mutations, preview, live_user",
        kind="counter",
        labels=("limit",),
    ),
    _family(
        "poolscope_login_slowed_total",
        "login attempts held back because their user name was under attack (never refused for that)",
        kind="counter",
    ),
    _family(
        "poolscope_login_backoff_pairs",
        "client address and user name pairs that must wait before their next login attempt",
    ),
    _family(
        "poolscope_login_names_slowed",
        "user names whose login attempts are slowed down now",
    ),
    _family(
        "poolscope_alertmanager_posts_total",
        "POSTs of alerts to an Alertmanager's v2 API, delivered (2xx) or failed",
        kind="counter",
        labels=("alertmanager", "outcome"),
    ),
    _family(
        "poolscope_store_up",
        "1 when the store answers reads and every process that writes to it can (0: unreachable, disk full, ...)",
    ),
    _family(
        "poolscope_store_failing_since_timestamp_seconds",
        "while the store fails: when it started failing",
        unit="s",
    ),
    _family(
        "poolscope_store_buffered_samples",
        "samples held for the store by a process that cannot write them yet, per process",
        labels=("node",),
    ),
    _family(
        "poolscope_store_buffered_bytes",
        "bytes held for the store (in memory and in the spool file), per process",
        unit="bytes",
        labels=("node",),
    ),
    _family(
        "poolscope_store_dropped_samples_total",
        "samples dropped because the buffer for the store was full, per process since it started",
        kind="counter",
        labels=("node",),
    ),
    _family(
        "poolscope_target_data_age_seconds",
        "age of the target's last poll the store holds; past 2 poll intervals its other series are left out",
        unit="s",
        labels=("target",),
    ),
)
