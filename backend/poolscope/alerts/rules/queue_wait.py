"""The oldest queued connection of a group has waited too long for a worker."""

from __future__ import annotations

from poolscope.alerts.model import Finding, RuleContext, Severity, level_of
from poolscope.alerts.settings import Thresholds


class QueueWait:
    name = "queue_wait_long"
    severity: Severity = "warning"
    help = "oldest queued connection of a group waiting longer than queue_wait_max_ms for queue_wait_for_s"
    needs_state = True

    def for_s(self, thresholds: Thresholds) -> float:
        return thresholds.queue_wait_for_s

    def evaluate(self, ctx: RuleContext) -> list[Finding]:
        assert ctx.state is not None
        t = ctx.thresholds
        coarse = ctx.info.server is not None and ctx.info.server.queue_time_mode == "coarse"
        out = []
        for group in ctx.state.groups:
            waited = group.oldest_queued_ms
            if waited is None:
                continue
            level = level_of(waited, t.queue_wait_max_ms, t.queue_wait_max_ms * t.resolve_factor)
            if level is None:
                continue
            waiter = next((q for q in ctx.state.queue if q.group_id == group.group_id), None)
            who = f" ({waiter.user}@{waiter.host}, db {waiter.db})" if waiter and waiter.user else ""
            out.append(
                Finding(
                    level=level,
                    group=str(group.group_id),
                    value=waited,
                    summary=f"{ctx.target}: group {group.group_id} oldest queued request waits {waited:.0f} ms",
                    description=(
                        f"The oldest queued connection of group {group.group_id}{who} has waited"
                        f" {waited:.0f} ms (threshold {t.queue_wait_max_ms:.0f} ms)."
                        + (
                            " Queue times are coarse (thread_pool_exact_stats=OFF) and overstate waits."
                            if coarse
                            else ""
                        )
                    ),
                )
            )
        return out


RULE = QueueWait()
