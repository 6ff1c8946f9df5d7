"""The alert rule shape (poolscope/rules/base.py specialised): what alert rules see and return.

Pure, no I/O: rules are unit-testable from data. Each rule is one file in alerts/rules/, named
after the rule, declaring `RULE = AlertRule(...)` with its thresholds beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from poolscope.rules.base import Finding, Rule, RuleContext, Threshold, ThresholdValues
from poolscope.schemas import Severity, TargetInfo, TargetState

# breach: the firing condition holds (starts or continues pending/firing);
# hold: below the firing threshold but above the resolve threshold (hysteresis): a firing alert
# stays firing, nothing new starts.
Level = Literal["breach", "hold"]

# Hysteresis on ratios and waits, shared by the rules that read it: a firing alert stays firing
# until the value drops below threshold x this factor, so a value hovering at the threshold does
# not flap.
RESOLVE_FACTOR = Threshold(
    name="resolve_factor",
    default=0.8,
    unit="factor",
    help="ratios and waits resolve only below threshold x this (hysteresis)",
    gt=0,
    le=1,
)


@dataclass(frozen=True)
class Observation:
    """One poll as rules see it; state is None when the poll failed (target down)."""

    ts: float
    info: TargetInfo
    state: TargetState | None


@dataclass(frozen=True, kw_only=True)
class AlertContext(RuleContext):
    state: TargetState | None
    # Recent polls, oldest first, including the current one (only the current one unless the rule
    # declares reads_history).
    history: Sequence[Observation]
    thresholds: ThresholdValues  # alerts/settings.py Thresholds, with the target's overrides


@dataclass(frozen=True, kw_only=True)
class AlertFinding(Finding):
    level: Level
    value: float | None = None
    # Deduplication key inside a rule and target; group alerts carry the group id.
    group: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    # Extra annotations beside summary and description (they may change while the alert fires;
    # labels may not: they are its identity in Alertmanager).
    annotations: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PrometheusForm:
    """The rule's condition in PromQL, over a series /metrics exposes: deploy/prometheus/poolscope.rules.yml
    is generated from it (poolscope/alerts/prometheus_rules.py), with the same thresholds, for-duration,
    hysteresis, resolve delay and severity as the rule."""

    # The /metrics family compared, and the labels one alert has (target, and group for a group's).
    metric: str
    by: tuple[str, ...]
    # A state: fires while the value equals this (1: stalled, 0: down) ...
    equals: float | None = None
    # ... or a level: fires above this threshold and, once firing, holds above holds_above.
    fires_above: Threshold[Any] | None = None
    holds_above: Callable[[ThresholdValues], float] | None = None
    # The metric's value per unit of the thresholds (a wait in ms against a series in seconds: 0.001).
    scale: float = 1.0
    # Prometheus templates ({{ $labels.target }}, {{ $value }}); the thresholds are added to the
    # description from the declarations.
    summary: str
    description: str

    def __post_init__(self) -> None:
        if (self.equals is None) == (self.fires_above is None):
            raise ValueError(f"{self.metric}: a Prometheus form is a state (equals) or a level (fires_above)")
        if self.holds_above is not None and self.fires_above is None:
            raise ValueError(f"{self.metric}: holds_above needs fires_above")


@dataclass(frozen=True, kw_only=True)
class AlertRule(Rule[AlertContext, list[AlertFinding]]):
    severity: Severity
    # Rules that read TargetState are not evaluated on a failed poll (their alerts neither fire
    # nor resolve while the target is down: nothing is known).
    needs_state: bool = True
    # The threshold holding how long the condition must last before it fires; None: it fires on
    # the first poll (the value is itself a duration, e.g. a transaction's age).
    for_duration: Threshold[float] | None = None
    # Rules that read AlertContext.history (earlier polls): the engine keeps history_s of polls
    # only while one of its rules does; otherwise the history is the current poll alone.
    reads_history: bool = False
    # How Prometheus evaluates the same rule over /metrics; None: its inputs are not on /metrics.
    prometheus: PrometheusForm | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.for_duration is not None and self.for_duration not in self.thresholds:
            raise ValueError(f"{self.name}: for_duration must be one of its thresholds")
        fires_above = self.prometheus.fires_above if self.prometheus else None
        if fires_above is not None and fires_above not in self.thresholds:
            raise ValueError(f"{self.name}: the Prometheus form's fires_above must be one of its thresholds")

    def for_s(self, thresholds: ThresholdValues) -> float:
        return 0.0 if self.for_duration is None else float(thresholds.value(self.for_duration))


def near_cap(
    used: int | None, cap: int | None, ratio: float, resolve_factor: float
) -> tuple[Level, float] | None:
    """How close `used` is to its `cap` (a max_* variable): the level and used/cap, None when clear.

    Fires at ratio x cap and above; holds down to ratio x resolve_factor x cap (hysteresis).
    Unknown values, or a cap of 0 (unlimited / unreadable), never fire.
    """
    if used is None or not cap:
        return None
    share = used / cap
    level = level_of(share, ratio, ratio * resolve_factor, inclusive=True)
    return None if level is None else (level, share)


def level_of(value: float, fire_above: float, hold_above: float, inclusive: bool = False) -> Level | None:
    """breach past the firing threshold, hold inside the hysteresis band below it, None when clear."""
    if value > fire_above or (inclusive and value == fire_above):
        return "breach"
    if value > hold_above or (inclusive and value == hold_above):
        return "hold"
    return None
