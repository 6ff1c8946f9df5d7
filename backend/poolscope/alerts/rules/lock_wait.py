"""A transaction waits for a row lock too long: someone holds it and is not finishing.

The statement is quoted with its literals replaced by `?`: alert texts go to webhook receivers
and the alert history, where values from the application (names, ids, amounts) do not belong;
the full text stays on the Transactions page.
"""

from __future__ import annotations

from poolscope.alerts.model import Finding, RuleContext, Severity, level_of
from poolscope.alerts.settings import Thresholds
from poolscope.snapshots.redact import redact_sql


class LockWait:
    name = "lock_wait_long"
    severity: Severity = "warning"
    help = "a transaction in LOCK WAIT longer than lock_wait_max_s"
    needs_state = True

    def for_s(self, thresholds: Thresholds) -> float:
        return 0.0  # the wait time is itself a duration

    def evaluate(self, ctx: RuleContext) -> list[Finding]:
        assert ctx.state is not None
        trx = ctx.state.transactions
        t = ctx.thresholds
        if trx is None:
            return []
        waits = [i for i in trx.items if i.wait_s is not None]
        if not waits:
            return []
        worst = max(waits, key=lambda i: i.wait_s or 0.0)
        wait = worst.wait_s or 0.0
        level = level_of(wait, t.lock_wait_max_s, t.lock_wait_max_s * t.resolve_factor)
        if level is None:
            return []
        return [
            Finding(
                level=level,
                value=wait,
                summary=f"{ctx.target}: lock wait {wait:.0f} s",
                description=(
                    f"Transaction {worst.trx_id} (thread {worst.thread_id}, {worst.user}@{worst.host}) has waited"
                    f" {wait:.0f} s for a lock (threshold {t.lock_wait_max_s:g} s);"
                    f" {trx.lock_waits} transaction(s) in lock wait. Query: {redact_sql(worst.query) or 'n/a'}"
                ),
            )
        ]


RULE = LockWait()
