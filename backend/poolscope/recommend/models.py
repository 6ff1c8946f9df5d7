"""The shapes of recommendations as the API and UI see them (docs/API.md "Recommendations")."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from poolscope.schemas import Severity

ApplyKind = Literal["live", "restart"]


class Evidence(BaseModel):
    """One number a recommendation rests on, with where it comes from."""

    label: str
    value: str
    metric: str | None = None  # the chart series it was computed from, if any


class EvidenceWindow(BaseModel):
    from_: float = Field(serialization_alias="from")
    to: float
    seconds: float
    polls: int  # how many polls the window held (few = weak evidence)


class Recommendation(BaseModel):
    id: str  # "<target>:<rule>", stable while the recommendation holds
    rule: str
    target: str
    variable: str  # the server's own name for it on this flavor
    current: str | None
    proposed: str
    unit: str | None = None
    title: str
    why: str
    evidence: list[Evidence]
    window: EvidenceWindow
    severity: Severity
    apply: ApplyKind  # "live": SET GLOBAL now; "restart": config file + restart
    applicable: bool  # one-click apply possible here (live, allow-listed, applying configured)
    not_applicable_reason: str | None = None
    read_more: str
    chart_metrics: list[str]
    chart_url: str  # the target page at the window the evidence comes from
    config_snippet: str  # to make it permanent (MariaDB has no SET PERSIST)
    persist_sql: str | None = None  # MySQL 8: SET PERSIST ...
    first_seen: float
    last_seen: float


class VanishedRecommendation(BaseModel):
    """A recommendation that no longer holds, and why."""

    id: str
    rule: str
    target: str
    variable: str
    title: str
    proposed: str
    first_seen: float
    gone_at: float
    why_gone: str


class RuleStatus(BaseModel):
    """What each rule concluded at the last evaluation (also when it recommends nothing)."""

    rule: str
    recommends: bool
    note: str


class RecommendationsOut(BaseModel):
    target: str
    evaluated_at: float | None
    active: list[Recommendation]
    vanished: list[VanishedRecommendation]
    rules: list[RuleStatus]
    note: str | None = None  # why there is nothing to evaluate yet
