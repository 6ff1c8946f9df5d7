"""deploy/prometheus/poolscope.rules.yml is the alert rules' declarations rendered
(poolscope/alerts/prometheus_rules.py): the committed file is what they give, and a changed
threshold, for-duration, resolve delay or severity changes the Prometheus rule with it."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
import yaml

from poolscope.alerts.model import AlertRule, PrometheusForm
from poolscope.alerts.prometheus_rules import duration, number, render
from poolscope.alerts.rules import RULES, queue_length_high
from poolscope.alerts.settings import AlertSettings
from poolscope.api.prometheus import FAMILIES
from tests.deploy.promql import metric_names
from tests.deploy.support import DEPLOY

SHIPPED = DEPLOY / "prometheus" / "poolscope.rules.yml"


def alerts(text: str) -> dict[str, dict[str, Any]]:
    groups = yaml.safe_load(text)["groups"]
    return {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}


def numbers(expr: str) -> list[float]:
    return [float(n) for n in re.findall(r"(?:>|==)\s*([0-9.]+)", expr)]


def test_the_shipped_file_is_the_declarations_rendered():
    assert SHIPPED.read_text() == render(RULES), "run `make prometheus-rules` and commit the result"


def test_every_rule_with_a_prometheus_form_is_there_and_no_other():
    shipped = alerts(SHIPPED.read_text())
    declared = {r.name for r in RULES if r.prometheus is not None}
    assert declared == {"group_stalled", "queue_length_high", "queue_wait_long", "target_down"}
    assert set(shipped) == declared | {"poolscope_down"}
    # The rules without one are named in the header, so a reader knows they are missing on purpose.
    for rule in RULES:
        if rule.prometheus is None:
            assert rule.name in SHIPPED.read_text().split("groups:")[0]


def test_changed_settings_change_the_prometheus_rules():
    settings = AlertSettings(
        thresholds={
            "queue_length_max": 50,
            "queue_length_resolve": 30,
            "queue_length_for_s": 1.5,
            "queue_wait_max_ms": 500.0,
            "resolve_factor": 0.5,
            "target_down_for_s": 0.0,
            "stall_for_s": 4.0,
        },
        resolve_after_s=30.0,
    )
    changed = alerts(render(RULES, settings))
    assert numbers(changed["queue_length_high"]["expr"]) == [50, 30]
    assert numbers(changed["queue_wait_long"]["expr"]) == [0.5, 0.25]
    assert changed["queue_length_high"]["for"] == "1500ms"
    assert changed["group_stalled"]["for"] == "4s"
    assert "for" not in changed["target_down"]
    assert {r["keep_firing_for"] for name, r in changed.items() if name != "poolscope_down"} == {"30s"}
    assert (
        "above 50 requests for 1.5 s; resolves at 30 requests or below"
        in changed["queue_length_high"]["annotations"]["description"]
    )


def test_a_changed_severity_or_hysteresis_is_rendered():
    rule = queue_length_high.RULE
    assert rule.prometheus is not None
    louder = dataclasses.replace(
        rule,
        severity="critical",
        prometheus=dataclasses.replace(rule.prometheus, holds_above=None),
    )
    alert = alerts(render([louder]))["queue_length_high"]
    assert alert["labels"] == {"severity": "critical"}
    assert "ALERTS" not in alert["expr"] and numbers(alert["expr"]) == [20]


def test_every_alert_reads_a_family_metrics_exposes():
    for name, alert in alerts(SHIPPED.read_text()).items():
        if name == "poolscope_down":  # Prometheus' own `up`
            continue
        read = metric_names(alert["expr"]) - {"ALERTS"}
        assert read and read <= set(FAMILIES), f"{name} reads {read - set(FAMILIES)}, not on /metrics"


def test_a_prometheus_form_is_a_state_or_a_level_on_the_rules_own_thresholds():
    with pytest.raises(ValueError, match="a state"):
        PrometheusForm(metric="m", by=("target",), summary="s", description="d")
    with pytest.raises(ValueError, match="a state"):
        PrometheusForm(
            metric="m",
            by=("target",),
            equals=1,
            fires_above=queue_length_high.MAX,
            summary="s",
            description="d",
        )
    with pytest.raises(ValueError, match="one of its thresholds"):
        AlertRule(
            name="r",
            severity="warning",
            help="h",
            evaluate=lambda ctx: [],
            prometheus=PrometheusForm(
                metric="m", by=("target",), fires_above=queue_length_high.MAX, summary="s", description="d"
            ),
        )


@pytest.mark.parametrize(
    ("value", "text"), [(20, "20"), (1.6000000000000001, "1.6"), (2000.0, "2000"), (4294967295, "4294967295")]
)
def test_numbers_read_as_written(value: float, text: str):
    assert number(value) == text


def test_durations_are_prometheus_durations():
    assert [duration(s) for s in (10, 3.0, 1.5, 0.25)] == ["10s", "3s", "1500ms", "250ms"]
