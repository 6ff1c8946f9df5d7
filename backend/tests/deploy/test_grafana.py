"""deploy/grafana/poolscope.json queries only metrics Poolscope's /metrics exposes (or the
recording rules beside it define), and offers the per-target variable. That every query returns
data from a real Prometheus scraping Poolscope is in test_prometheus.py."""

from __future__ import annotations

import yaml

from poolscope.api.prometheus import FAMILIES
from tests.deploy.promql import dashboard, dashboard_queries, metric_names
from tests.deploy.support import DEPLOY


def test_metric_names_are_read_from_promql():
    assert metric_names('sum by (target) (poolscope_alerts{target=~"$target", state="firing"})') == {
        "poolscope_alerts"
    }
    assert metric_names("rate(x_total[$__rate_interval]) / on (a, b) group_left (c) y:z:sum > bool 0") == {
        "x_total",
        "y:z:sum",
    }
    assert metric_names('time() - last_ts{job="a{b}"} offset 5m and up') == {"last_ts", "up"}


def test_every_dashboard_metric_is_exposed():
    recorded = {
        rule["record"]
        for group in yaml.safe_load((DEPLOY / "prometheus" / "poolscope.rules.yml").read_text())["groups"]
        for rule in group["rules"]
        if "record" in rule
    }
    used: dict[str, set[str]] = {}
    for title, expr in dashboard_queries():
        names = metric_names(expr)
        assert names, f"{title}: no metric in {expr!r}"
        for name in names:
            used.setdefault(name, set()).add(title)
    unknown = {name: titles for name, titles in used.items() if name not in FAMILIES and name not in recorded}
    assert not unknown, f"the dashboard queries metrics /metrics does not expose: {unknown}"
    # The panels the issue asks for are there.
    for name in (
        "poolscope_tp_group_queue_length",
        "poolscope_tp_group_active_threads",
        "poolscope_tp_group_stalled",
        "poolscope_tp_group_oldest_queued_seconds",
        "poolscope_poll_duration_seconds",
        "poolscope_last_success_timestamp_seconds",
        "poolscope_collector_success",
    ):
        assert name in used, f"no panel shows {name}"


def test_per_target_variable_filters_every_target_metric():
    doc = dashboard()
    variables = {v["name"]: v for v in doc["templating"]["list"]}
    assert variables["target"]["definition"] == "label_values(poolscope_target_up, target)"
    assert variables["target"]["multi"] and variables["target"]["includeAll"]
    assert variables["datasource"]["query"] == "prometheus"
    for panel in doc["panels"]:
        for target in panel.get("targets", []):
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
            expr = target["expr"]
            # Every per-target metric is narrowed to the chosen targets.
            if any(
                name not in ("poolscope_build_info", "poolscope_alert_evaluations_total")
                for name in metric_names(expr)
            ):
                assert 'target=~"$target"' in expr, f"{panel['title']}: {expr}"
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids))
