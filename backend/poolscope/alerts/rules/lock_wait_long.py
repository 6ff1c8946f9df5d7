"""A transaction waits for a row lock too long: someone holds it and is not finishing.

The statement is quoted with its literals replaced by `?`: alert texts go to webhook receivers
and the alert history, where values from the application (names, ids, amounts) do not belong;
the full text stays on the Transactions page.
"""

from __future__ import annotations

from poolscope.alerts.model import RESOLVE_FACTOR, AlertContext, AlertFinding, AlertRule, level_of
from poolscope.rules.base import Threshold
from poolscope.snapshots.redact import redact_sql

# No for-duration: the wait time is itself a duration.
MAX_S = Threshold(
    name="lock_wait_max_s",
    default=30.0,
    unit="s",
    help="a transaction in lock wait longer than this fires",
    gt=0,
)


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    assert ctx.state is not None
    trx = ctx.state.transactions
    if trx is None:
        return []
    waits = [i for i in trx.items if i.wait_s is not None]
    if not waits:
        return []
    worst = max(waits, key=lambda i: i.wait_s or 0.0)
    wait = worst.wait_s or 0.0
    limit = ctx.value(MAX_S)
    level = level_of(wait, limit, limit * ctx.value(RESOLVE_FACTOR))
    if level is None:
        return []
    return [
        AlertFinding(
            level=level,
            value=wait,
            summary=f"{ctx.target}: lock wait {wait:.0f} s",
            description=(
                f"Transaction {worst.trx_id} (thread {worst.thread_id}, {worst.user}@{worst.host}) has waited"
                f" {wait:.0f} s for a lock (threshold {limit:g} s);"
                f" {trx.lock_waits} transaction(s) in lock wait. Query: {redact_sql(worst.query) or 'n/a'}"
            ),
        )
    ]


RULE = AlertRule(
    name="lock_wait_long",
    severity="warning",
    help="a transaction in LOCK WAIT longer than lock_wait_max_s",
    evaluate=evaluate,
    thresholds=(MAX_S, RESOLVE_FACTOR),
)
