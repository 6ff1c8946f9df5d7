"""The alert rules: one file each, named after its rule, found here (poolscope/rules/base.py discover)."""

from __future__ import annotations

import sys
from typing import Any

from poolscope.alerts.model import AlertRule
from poolscope.rules.base import Threshold, discover

RULES: tuple[AlertRule, ...] = discover(sys.modules[__name__], AlertRule)


def all_rules() -> list[AlertRule]:
    return list(RULES)


def declared_thresholds() -> list[Threshold[Any]]:
    """Every alert rule's thresholds, each once (a shared one, like resolve_factor, is one object)."""
    out: list[Threshold[Any]] = []
    for rule in RULES:
        out += [t for t in rule.thresholds if not any(t is seen for seen in out)]
    return out
