"""The metric names a PromQL expression reads, and the queries of deploy/grafana/poolscope.json."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.deploy.support import DEPLOY

DASHBOARD = DEPLOY / "grafana" / "poolscope.json"

KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "and",
    "or",
    "unless",
    "offset",
}
# Grafana's built-in variables, as Prometheus is given them when Grafana runs the query.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "2s", "$__range": "5m"}


def metric_names(expr: str) -> set[str]:
    """Selectors in `expr`: what is left once strings, label matchers, ranges, grouping clauses,
    variables, numbers and function calls are taken out."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    text = re.sub(r"\$\w+", " ", text)
    names = set()
    for match in re.finditer(r"(?<![\w.])([A-Za-z_:][\w:]*)\s*(\()?", text):
        if match.group(2) is None and match.group(1) not in KEYWORDS:
            names.add(match.group(1))
    return names


def dashboard() -> dict[str, Any]:
    return json.loads(Path(DASHBOARD).read_text())


def dashboard_queries() -> list[tuple[str, str]]:
    """(panel title, expr) for every query of every panel, and the template variables' queries."""
    doc = dashboard()
    out = [(panel["title"], target["expr"]) for panel in doc["panels"] for target in panel.get("targets", [])]
    for variable in doc["templating"]["list"]:
        if variable["type"] == "query":
            match = re.fullmatch(r"label_values\((.+),\s*\w+\)", variable["definition"])
            assert match, variable["definition"]
            out.append((f"${variable['name']}", match.group(1)))
    return out


def as_prometheus_query(expr: str, target: str) -> str:
    """The expr as Grafana sends it with $target set to one target."""
    for name, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(name, value)
    return expr.replace("$target", re.escape(target))
