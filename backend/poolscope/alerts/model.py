"""What alert rules see and return: a pure interface, no I/O (rules are unit-testable from data)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from poolscope.alerts.settings import Thresholds
from poolscope.schemas import TargetInfo, TargetState

Severity = Literal["critical", "warning"]
# breach: the firing condition holds (starts or continues pending/firing);
# hold: below the firing threshold but above the resolve threshold (hysteresis): a firing alert
# stays firing, nothing new starts.
Level = Literal["breach", "hold"]


@dataclass(frozen=True)
class Observation:
    """One poll as rules see it; state is None when the poll failed (target down)."""

    ts: float
    info: TargetInfo
    state: TargetState | None


@dataclass(frozen=True)
class RuleContext:
    target: str
    now: float
    info: TargetInfo
    state: TargetState | None
    # Recent polls, oldest first, including the current one.
    history: Sequence[Observation]
    thresholds: Thresholds


@dataclass(frozen=True)
class Finding:
    level: Level
    summary: str
    description: str
    value: float | None = None
    # Deduplication key inside a rule and target; group alerts carry the group id.
    group: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


class Rule(Protocol):
    name: str
    severity: Severity
    help: str
    # Rules that read TargetState are not evaluated on a failed poll (their alerts neither fire
    # nor resolve while the target is down: nothing is known).
    needs_state: bool

    def for_s(self, thresholds: Thresholds) -> float: ...

    def evaluate(self, ctx: RuleContext) -> list[Finding]: ...


def int_variable(state: TargetState, name: str) -> int | None:
    raw = state.variables.get(name)
    if raw is None:
        return None
    try:
        return int(float(raw))
    except ValueError:
        return None


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
