"""A transaction has been open too long: it holds locks and undo, and blocks purge."""

from __future__ import annotations

from poolscope.alerts.model import Finding, RuleContext, Severity, level_of
from poolscope.alerts.settings import Thresholds


class TransactionAge:
    name = "transaction_old"
    severity: Severity = "warning"
    help = "an InnoDB transaction open longer than trx_age_max_s"
    needs_state = True

    def for_s(self, thresholds: Thresholds) -> float:
        return 0.0  # the age is itself a duration

    def evaluate(self, ctx: RuleContext) -> list[Finding]:
        assert ctx.state is not None
        trx = ctx.state.transactions
        t = ctx.thresholds
        if trx is None or trx.longest_age_s is None:
            return []
        age = trx.longest_age_s
        level = level_of(age, t.trx_age_max_s, t.trx_age_max_s * t.resolve_factor)
        if level is None:
            return []
        oldest = trx.items[0] if trx.items else None
        who = (
            f" trx {oldest.trx_id} (thread {oldest.thread_id}, {oldest.user}@{oldest.host}, state {oldest.state})"
            if oldest
            else ""
        )
        return [
            Finding(
                level=level,
                value=age,
                summary=f"{ctx.target}: transaction open {age:.0f} s",
                description=f"The oldest open transaction{who} is {age:.0f} s old (threshold {t.trx_age_max_s:g} s).",
            )
        ]


RULE = TransactionAge()
