"""Poolscope's alert rules as Prometheus rules: deploy/prometheus/poolscope.rules.yml is rendered here
from each rule's declaration (AlertRule.prometheus), so its thresholds, for-durations, hysteresis,
resolve delay and severities are the built-in engine's.

scripts/gen-prometheus-rules.py writes the file at the thresholds' defaults and `make lint` fails
when the committed one differs; promtool's unit tests of it are deploy/prometheus/poolscope.rules.test.yml.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable

from poolscope.alerts.model import AlertRule, PrometheusForm
from poolscope.alerts.settings import AlertSettings
from poolscope.rules.base import ThresholdValues

INTERVAL = "2s"  # both groups' evaluation interval (why: the alerts group's comment below)

# Per-target sums for the dashboard (deploy/grafana/poolscope.json) and ad-hoc queries.
RECORDING = (
    ("target:poolscope_tp_group_queue_length:sum", "sum by (target) (poolscope_tp_group_queue_length)"),
    ("target:poolscope_tp_group_active_threads:sum", "sum by (target) (poolscope_tp_group_active_threads)"),
    ("target:poolscope_tp_group_threads:sum", "sum by (target) (poolscope_tp_group_threads)"),
    ("target:poolscope_tp_group_stalled:sum", "sum by (target) (poolscope_tp_group_stalled)"),
    (
        "target:poolscope_tp_group_oldest_queued_seconds:max",
        "max by (target) (poolscope_tp_group_oldest_queued_seconds)",
    ),
    (
        "target:poolscope_tp_group_stalls_per_second:sum",
        "sum by (target) (poolscope_tp_group_stalls_per_second)",
    ),
    (
        "target:poolscope_last_success_age_seconds:max",
        "max by (target) (time() - poolscope_last_success_timestamp_seconds)",
    ),
)

WATCHER = """\
      # Not one of Poolscope's own rules: nobody watches the watcher otherwise.
      - alert: poolscope_down
        expr: up{job="poolscope"} == 0
        for: 1m
        labels:
          severity: critical
        annotations:
          summary: "Poolscope at {{ $labels.instance }} does not answer scrapes"
          description: >-
            Prometheus cannot scrape {{ $labels.instance }}/metrics: no thread pool metrics and no
            Poolscope alerts until it is back.
"""


def number(value: float) -> str:
    """A PromQL / prose number: 20, 1.6 (not 1.6000000000000001, not 2e+03)."""
    text = f"{value:.12g}"
    return repr(float(value)) if "e" in text else text


def duration(seconds: float) -> str:
    """A Prometheus duration: 10s, 1500ms."""
    return f"{seconds:g}s" if float(seconds).is_integer() else f"{round(seconds * 1000)}ms"


def expression(rule: AlertRule, form: PrometheusForm, thresholds: ThresholdValues) -> str:
    value = f"max by ({', '.join(form.by)}) ({form.metric})"
    if form.equals is not None:
        return f"{value} == {number(form.equals)}"
    assert form.fires_above is not None
    fires = f"{value} > {number(thresholds.value(form.fires_above) * form.scale)}"
    if form.holds_above is None:
        return fires
    # Hysteresis, as the engine's: once firing, the alert holds while the value stays above the
    # lower threshold; the rule reads its own firing state from the ALERTS series.
    holds = number(form.holds_above(thresholds) * form.scale)
    firing = f'ALERTS{{alertname="{rule.name}", alertstate="firing"}}'
    return f"{fires}\nor (\n  {value} > {holds}\n  and on ({', '.join(form.by)}) {firing}\n)"


def thresholds_sentence(rule: AlertRule, form: PrometheusForm, thresholds: ThresholdValues) -> str:
    """The thresholds in words, in their declared units: "Threshold: above 20 requests for 10 s; ..."."""
    for_s = rule.for_s(thresholds)
    lasting = f" for {number(for_s)} s" if for_s else ""
    if form.fires_above is None:
        return f"Fires after {number(for_s)} s." if for_s else ""
    unit = form.fires_above.unit
    text = f"Threshold: above {number(thresholds.value(form.fires_above))} {unit}{lasting}"
    if form.holds_above is not None:
        text += f"; resolves at {number(form.holds_above(thresholds))} {unit} or below"
    return text + "."


def wrap(text: str, first: str, rest: str) -> str:
    """Lines of at most 100 columns, never breaking inside a template's {{ ... }}."""
    words = re.sub(r"\{\{.*?\}\}", lambda m: m.group(0).replace(" ", "\0"), text)
    lines = textwrap.wrap(words, width=100, initial_indent=first, subsequent_indent=rest)
    return "\n".join(lines).replace("\0", " ")


def block(text: str, indent: int) -> str:
    """A folded YAML block (>-)."""
    return ">-\n" + wrap(text, " " * indent, " " * indent)


def alert(rule: AlertRule, form: PrometheusForm, settings: AlertSettings) -> str:
    thresholds = settings.thresholds
    expr = expression(rule, form, thresholds)
    if "\n" in expr:
        expr = "|\n" + textwrap.indent(expr, " " * 10)
    for_s = rule.for_s(thresholds)
    description = " ".join(filter(None, [form.description, thresholds_sentence(rule, form, thresholds)]))
    lines = [
        f"      - alert: {rule.name}",
        f"        expr: {expr}",
        *([f"        for: {duration(for_s)}"] if for_s else []),
        f"        keep_firing_for: {duration(settings.resolve_after_s)}",
        "        labels:",
        f"          severity: {rule.severity}",
        "        annotations:",
        f"          summary: {json.dumps(form.summary)}",
        f"          description: {block(description, 12)}",
    ]
    return "\n".join(lines) + "\n"


def header(rules: Iterable[AlertRule], settings: AlertSettings) -> str:
    rules = list(rules)
    shown = [r for r in rules if r.prometheus is not None]
    width = max(len(r.name) for r in shown) + 2
    lines = [
        "# Poolscope's built-in alert rules, for Prometheus, over the names Poolscope's /metrics exposes.",
        "# Generated by scripts/gen-prometheus-rules.py from the rules' declarations",
        "# (backend/poolscope/alerts/rules/<rule>.py, each rule's `prometheus=`): do not edit; change the",
        "# rule and run `make prometheus-rules`. Same alert names, labels (target, group, severity),",
        "# thresholds, for-durations and hysteresis as Poolscope's own engine, at their defaults:",
        "#",
        *(wrap(r.help, f"#   {r.name.ljust(width)}", "#   " + " " * width) for r in shown),
        "#",
        f"# Poolscope resolves an alert after its condition has been clear for {number(settings.resolve_after_s)} s:"
        " keep_firing_for.",
        '# The hysteresis ("resolves at") reads the rule\'s own firing state from the ALERTS series.',
        wrap(
            "Not here: per-target overrides (alerts.overrides), flap damping (alerts.flap_*), and the rules"
            f" whose inputs /metrics does not expose: {', '.join(r.name for r in rules if r.prometheus is None)}.",
            "# ",
            "# ",
        ),
        "#",
        "# Check:  promtool check rules poolscope.rules.yml && promtool test rules poolscope.rules.test.yml",
        "# Group and target label values come from the exporter's series; `max by` drops job/instance so",
        "# that two Poolscope replicas watching the same target give one alert.",
        "",
    ]
    return "\n".join(lines) + "\n"


def render(rules: Iterable[AlertRule], settings: AlertSettings | None = None) -> str:
    """The rules file for these rules, at these settings' thresholds (default: the declared defaults)."""
    settings = settings or AlertSettings()
    rules = list(rules)
    out = [header(rules, settings), "groups:\n  - name: poolscope.recording\n"]
    out.append(f"    interval: {INTERVAL}\n    rules:\n")
    for record, expr in RECORDING:
        out.append(f"      - record: {record}\n        expr: {expr}\n")
    out += [
        "\n  - name: poolscope.alerts\n",
        "    # Poolscope polls every second and fires a stall on the first poll that shows it: evaluate\n",
        "    # (and scrape, see prometheus.yml) every couple of seconds, or short stalls go unseen.\n",
        f"    interval: {INTERVAL}\n    rules:\n",
    ]
    alerts = [alert(r, r.prometheus, settings) for r in rules if r.prometheus is not None]
    out.append("\n".join([*alerts, WATCHER]))
    return "".join(out)
