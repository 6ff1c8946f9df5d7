"""The recommendation rule shape (poolscope/rules/base.py specialised) and the helpers rules share.

A rule is a pure function from a RecommendContext to a RecommendFinding (a change to propose) or a
Clear (why not). Each rule is one file in recommend/rules/, named after the rule, declaring
`RULE = RecommendRule(...)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from poolscope.flavors import VariableSpec
from poolscope.recommend.flavors import spec
from poolscope.recommend.models import ApplyKind, Evidence
from poolscope.recommend.window import Window
from poolscope.rules.base import Finding, Rule, RuleContext
from poolscope.schemas import ServerInfo, Severity, TargetState

#: Fewer polls than this in the window is too little evidence to recommend a change.
MIN_POLLS = 10


@dataclass(frozen=True, kw_only=True)
class RecommendContext(RuleContext):
    server: ServerInfo
    state: TargetState
    window: Window
    cpus: int | None  # CPUs of the server's host, when known
    cpus_source: str | None = None  # "configured" | "local host"

    @property
    def variables(self) -> dict[str, str]:
        return self.state.variables

    def var(self, key: str) -> tuple[VariableSpec, str] | None:
        """The flavor's variable for a logical setting and its current value, if the server has it."""
        found = spec(self.server, key)
        if found is None or found.name not in self.variables:
            return None
        return found, self.variables[found.name]


@dataclass(frozen=True, kw_only=True)
class RecommendFinding(Finding):
    """A change to propose; summary and description become the recommendation's title and why."""

    variable: str
    current: str | None
    proposed: str
    evidence: list[Evidence]
    severity: Severity
    read_more: str
    chart_metrics: list[str]
    apply: ApplyKind = "live"
    unit: str | None = None
    # The lines to put in the config when the change is not one variable = value (turning the
    # pool on: poolscope/enable_pool.py); None: "[section] variable = proposed".
    config_snippet: str | None = None


@dataclass
class Clear:
    """Nothing to recommend, and why (becomes the note when a recommendation goes away)."""

    reason: str


@dataclass(frozen=True, kw_only=True)
class RecommendRule(Rule[RecommendContext, RecommendFinding | Clear]):
    # Metrics the rule reads from the window (the engine fetches their union once).
    metrics: tuple[str, ...] = ()


def ev(label: str, value: object, metric: str | None = None) -> Evidence:
    return Evidence(label=label, value=fmt(value), metric=metric)


def fmt(value: object) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        if abs(value) >= 100 or value == int(value):
            return f"{value:,.0f}"
        return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"
    return str(value)


def pct(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{fraction * 100:.0f}%"


def nice_round(value: float) -> int:
    """Round up to 1, 2 or 5 × a power of ten: proposals people can read and remember."""
    if value <= 1:
        return 1
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * exp:
            return int(step * exp)
    return int(10 * exp)


# Requests waiting in the pool, per poll: per group where the server has groups (MariaDB, MySQL
# Enterprise), else the whole pool's count (Percona 8.4.10+ reports only that).
QUEUE_BY_GROUP = "tp_group_queue_length"
QUEUE_WHOLE_POOL = "tp_queued_connections"
QUEUE_METRICS = (QUEUE_BY_GROUP, QUEUE_WHOLE_POOL)


def queue_metric(ctx: RecommendContext) -> str:
    """The queue series this server has: the window's per-poll totals of either mean 'requests queued'."""
    return QUEUE_BY_GROUP if ctx.window.count(QUEUE_BY_GROUP) else QUEUE_WHOLE_POOL


def too_little(ctx: RecommendContext, metric: str) -> Clear | None:
    polls = ctx.window.count(metric)
    if polls < MIN_POLLS:
        return Clear(
            f"only {polls} polls of {metric} in the last {ctx.window.seconds:.0f} s; waiting for more"
        )
    return None
