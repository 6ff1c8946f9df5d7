"""deploy/prometheus/ passes promtool: the config and rules check, and the rule unit tests (series
that fire, hold and resolve every alert) pass; so do the rules rendered at other settings than the
defaults. Debian's prometheus package ships promtool."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from poolscope.alerts.prometheus_rules import render
from poolscope.alerts.rules import RULES, all_rules
from poolscope.alerts.settings import AlertSettings
from tests.deploy.support import DEPLOY, require_tool

PROMETHEUS = DEPLOY / "prometheus"


def _promtool(*args: str, cwd: Path = PROMETHEUS) -> str:
    result = subprocess.run(
        [require_tool("promtool"), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"promtool {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_config_and_rules_check():
    assert "SUCCESS" in _promtool("check", "config", "prometheus.yml")
    assert "SUCCESS" in _promtool("check", "rules", "poolscope.rules.yml")


def test_rule_unit_tests_pass():
    assert "SUCCESS" in _promtool("test", "rules", "poolscope.rules.test.yml")


def test_rules_rendered_at_other_settings_check(tmp_path: Path):
    """Fractional durations and thresholds, a rule with no for-duration: still valid rules."""
    settings = AlertSettings(
        thresholds={"queue_length_for_s": 1.5, "queue_wait_max_ms": 250.0, "target_down_for_s": 0.0},
        resolve_after_s=0.5,
    )
    (tmp_path / "rules.yml").write_text(render(RULES, settings))
    assert "SUCCESS" in _promtool("check", "rules", "rules.yml", cwd=tmp_path)


def test_alerts_mirror_the_builtin_rules_and_each_is_unit_tested():
    rules = yaml.safe_load((PROMETHEUS / "poolscope.rules.yml").read_text())
    alerts = {r["alert"]: r for g in rules["groups"] for r in g["rules"] if "alert" in r}
    builtin = {r.name: r for r in all_rules() if r.prometheus is not None}
    assert builtin, "no built-in rule has a Prometheus form"
    for name, rule in builtin.items():
        assert alerts[name]["labels"]["severity"] == rule.severity
    tests = yaml.safe_load((PROMETHEUS / "poolscope.rules.test.yml").read_text())["tests"]
    for name in alerts:
        expectations = [
            t for test in tests for t in test.get("alert_rule_test", []) if t["alertname"] == name
        ]
        assert any(t["exp_alerts"] for t in expectations), f"{name} is never seen firing"
        last = max(expectations, key=lambda t: int(t["eval_time"].rstrip("s")))
        assert last["exp_alerts"] == [], f"{name} is never seen resolved"


def _seconds(value: str | None) -> float:
    return float(value.rstrip("s")) if value else 0.0


def test_thresholds_and_durations_are_the_builtin_defaults():
    """The rendered numbers are the rules' defaults (a check of the renderer, from the settings' side)."""
    rules = yaml.safe_load((PROMETHEUS / "poolscope.rules.yml").read_text())
    alerts = {r["alert"]: r for g in rules["groups"] for r in g["rules"] if "alert" in r}
    settings = AlertSettings()
    t = settings.thresholds

    def numbers(name: str) -> list[float]:
        return [float(n) for n in re.findall(r"(?:[<>]=?|==)\s*([0-9.]+)", alerts[name]["expr"])]

    assert numbers("group_stalled") == [1]
    assert numbers("queue_length_high") == [t.queue_length_max, t.queue_length_resolve]
    assert numbers("queue_wait_long") == [
        t.queue_wait_max_ms / 1000,
        t.queue_wait_max_ms / 1000 * t.resolve_factor,
    ]
    assert numbers("target_down") == [0]
    for name, for_s in (
        ("group_stalled", t.stall_for_s),
        ("queue_length_high", t.queue_length_for_s),
        ("queue_wait_long", t.queue_wait_for_s),
        ("target_down", t.target_down_for_s),
    ):
        assert _seconds(alerts[name].get("for")) == for_s, name
        assert _seconds(alerts[name]["keep_firing_for"]) == settings.resolve_after_s, name
