"""The alert rules, one module each; a new rule is a module plus a line here."""

from __future__ import annotations

from poolscope.alerts.model import Rule
from poolscope.alerts.rules import (
    connections,
    group_stalled,
    lock_wait,
    pool_threads,
    queue_length,
    queue_wait,
    target_down,
    transaction_age,
)

RULES: tuple[Rule, ...] = (
    group_stalled.RULE,
    queue_length.RULE,
    queue_wait.RULE,
    transaction_age.RULE,
    lock_wait.RULE,
    pool_threads.RULE,
    connections.RULE,
    target_down.RULE,
)


def all_rules() -> list[Rule]:
    return list(RULES)
