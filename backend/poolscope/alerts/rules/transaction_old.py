"""A transaction has been open too long: it holds locks and undo, and blocks purge."""

from __future__ import annotations

from poolscope.alerts.model import RESOLVE_FACTOR, AlertContext, AlertFinding, AlertRule, level_of
from poolscope.rules.base import Threshold

# No for-duration: the age is itself a duration.
MAX_S = Threshold(
    name="trx_age_max_s",
    default=300.0,
    unit="s",
    help="a transaction open longer than this fires",
    gt=0,
)


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    assert ctx.state is not None
    trx = ctx.state.transactions
    if trx is None or trx.longest_age_s is None:
        return []
    age = trx.longest_age_s
    limit = ctx.value(MAX_S)
    level = level_of(age, limit, limit * ctx.value(RESOLVE_FACTOR))
    if level is None:
        return []
    oldest = trx.items[0] if trx.items else None
    who = (
        f" trx {oldest.trx_id} (thread {oldest.thread_id}, {oldest.user}@{oldest.host}, state {oldest.state})"
        if oldest
        else ""
    )
    return [
        AlertFinding(
            level=level,
            value=age,
            summary=f"{ctx.target}: transaction open {age:.0f} s",
            description=f"The oldest open transaction{who} is {age:.0f} s old (threshold {limit:g} s).",
        )
    ]


RULE = AlertRule(
    name="transaction_old",
    severity="warning",
    help="an InnoDB transaction open longer than trx_age_max_s",
    evaluate=evaluate,
    thresholds=(MAX_S, RESOLVE_FACTOR),
)
