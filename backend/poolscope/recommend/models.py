"""The shapes of recommendations as the API and UI see them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from poolscope.schemas import Severity
from poolscope.schemas.base import Schema

ApplyKind = Literal["live", "restart"]


class Evidence(Schema):
    """One number a recommendation rests on, with where it comes from."""

    label: str
    """What the number is, e.g. "longest queue wait (ms)"."""
    value: str
    """The number, formatted for reading."""
    metric: str | None = None
    """The chart series it was computed from, if any."""


class EvidenceWindow(Schema):
    """The span of history the evidence comes from."""

    from_: float = Field(serialization_alias="from")
    """Start of the window, Unix time in seconds."""
    to: float
    """End of the window."""
    seconds: float
    """Its length, in s."""
    polls: int
    """How many polls the window held (few = weak evidence)."""


class Recommendation(Schema):
    """A change the rules propose for one target, with the why and the evidence."""

    id: str
    """`<target>:<rule>`, stable while the recommendation holds."""
    rule: str
    """The recommendation rule that made it (see the rule reference)."""
    target: str
    """The target's name."""
    variable: str
    """The server's own name for the variable on this flavor."""
    current: str | None
    """Its current value as the server reports it; null when the server has none."""
    proposed: str
    """The value proposed."""
    unit: str | None = None
    """The variable's unit where the rule states one (stall limit: `ms`, or `×10 ms` on MySQL
    Enterprise)."""
    title: str
    """One line: the change."""
    why: str
    """The reasoning, with the evidence numbers."""
    evidence: list[Evidence]
    """The numbers it rests on."""
    window: EvidenceWindow
    """The window of history the evidence was read from (recommend_window_s)."""
    severity: Severity
    """info, warning or critical."""
    apply: ApplyKind
    """`live`: SET GLOBAL applies it now; `restart`: a config file change and a restart."""
    applicable: bool
    """One-click apply is possible here (live, allow-listed, applying configured)."""
    not_applicable_reason: str | None = None
    """Why it cannot be applied with one click, when it cannot."""
    read_more: str
    """A link to the vendor's documentation of the variable."""
    chart_metrics: list[str]
    """The metrics to chart beside it."""
    chart_url: str
    """The target page at the window the evidence comes from."""
    config_snippet: str
    """The config file lines that make the change permanent (MariaDB has no SET PERSIST)."""
    persist_sql: str | None = None
    """MySQL / Percona 8.0+: the SET PERSIST statement that keeps a live change across restarts;
    null elsewhere."""
    first_seen: float
    """When it was first made, Unix time in seconds."""
    last_seen: float
    """When an evaluation last confirmed it."""


class VanishedRecommendation(Schema):
    """A recommendation that no longer holds, and why."""

    id: str
    """`<target>:<rule>`, as it was while it held."""
    rule: str
    """The rule that had made it."""
    target: str
    """The target's name."""
    variable: str
    """The variable it was about."""
    title: str
    """Its title while it held."""
    proposed: str
    """The value it proposed."""
    first_seen: float
    """When it was first made, Unix time in seconds."""
    gone_at: float
    """When it stopped holding."""
    why_gone: str
    """Why it no longer holds (e.g. "thread_pool_exact_stats changed from OFF to ON")."""


class RuleStatus(Schema):
    """What each rule concluded at the last evaluation (also when it recommends nothing)."""

    rule: str
    """The rule's name."""
    recommends: bool
    """It proposes a change now."""
    note: str
    """Its conclusion: the change, or why there is none."""


class RecommendationsOut(Schema):
    """A target's recommendations: active, vanished, and every rule's conclusion."""

    target: str
    """The target's name."""
    evaluated_at: float | None
    """When the rules last ran for it, Unix time in seconds; null: not yet."""
    active: list[Recommendation]
    """The recommendations that hold now."""
    vanished: list[VanishedRecommendation]
    """Recommendations that no longer hold."""
    rules: list[RuleStatus]
    """Each rule's conclusion at the last evaluation."""
    note: str | None = None
    """Why there is nothing to evaluate yet."""
