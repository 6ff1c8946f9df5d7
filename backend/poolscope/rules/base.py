"""What every rule is, alert or recommendation: a name, a help line, its named thresholds and a pure
evaluate(context) -> findings, declared in one file named after the rule.

A rule does no I/O, so it is unit-testable from data. The engines (alerts/engine.py,
recommend/engine.py) build the context and act on the findings; `discover()` finds every rule of a
package, so adding a rule is its file plus its test.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from poolscope.schemas import TargetInfo

N = TypeVar("N", int, float)


@dataclass(frozen=True, kw_only=True)
class Threshold(Generic[N]):
    """A named setting a rule compares against, with its documented default and valid range."""

    name: str
    default: N
    unit: str  # "s", "ms", "share" (0..1), "requests", "factor"
    help: str
    ge: float | None = None
    gt: float | None = None
    le: float | None = None

    def field(self) -> tuple[type, Any]:
        """The pydantic field for a thresholds model: type of the default, range, help."""
        return (
            type(self.default),
            Field(
                default=self.default,
                ge=self.ge,
                gt=self.gt,
                le=self.le,
                description=f"{self.help} ({self.unit})",
            ),
        )


class ThresholdValues(BaseModel):
    """The thresholds in effect; its fields come from the rules' declarations (thresholds_model)."""

    model_config = ConfigDict(extra="forbid")

    def value(self, threshold: Threshold[N]) -> N:
        return getattr(self, threshold.name)  # type: ignore[no-any-return]


def thresholds_model(name: str, doc: str, declared: Iterable[Threshold[Any]]) -> type[ThresholdValues]:
    """A settings model with one validated field per declared threshold, in declaration order."""
    fields: dict[str, Any] = {}
    for threshold in declared:
        if threshold.name in fields:
            raise ValueError(f"threshold {threshold.name!r} is declared twice")
        fields[threshold.name] = threshold.field()
    return create_model(name, __base__=ThresholdValues, __doc__=doc, **fields)


@dataclass(frozen=True, kw_only=True)
class RuleContext:
    """What every rule sees: the target, the time of evaluation and the target's status."""

    target: str
    now: float
    info: TargetInfo
    # The thresholds in effect; None: every threshold at its declared default (recommendation
    # thresholds are not configurable yet).
    thresholds: ThresholdValues | None = None

    def value(self, threshold: Threshold[N]) -> N:
        """A rule reads its thresholds through their declarations: typed, and named in one place."""
        return threshold.default if self.thresholds is None else self.thresholds.value(threshold)


@dataclass(frozen=True, kw_only=True)
class Finding:
    """What every finding says: one line, and the why with the evidence numbers."""

    summary: str
    description: str


C = TypeVar("C", bound=RuleContext)
R = TypeVar("R")


@dataclass(frozen=True, kw_only=True)
class Rule(Generic[C, R]):
    name: str  # also the name of the rule's file
    help: str
    evaluate: Callable[[C], R]
    thresholds: tuple[Threshold[Any], ...] = ()

    def __post_init__(self) -> None:
        names = [t.name for t in self.thresholds]
        if len(names) != len(set(names)):
            raise ValueError(f"{self.name}: a threshold name is declared twice")


RuleT = TypeVar("RuleT", bound=Rule[Any, Any])


def discover(package: ModuleType, kind: type[RuleT]) -> tuple[RuleT, ...]:
    """Every `RULE` of the package's modules, by file name; each file must be named after its rule."""
    rules: list[RuleT] = []
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, kind):
            raise TypeError(f"{module.__name__} must define RULE = {kind.__name__}(...)")
        if rule.name != module_info.name:
            raise ValueError(f"{module.__name__} holds rule {rule.name!r}: name the file after its rule")
        rules.append(rule)
    return tuple(rules)
