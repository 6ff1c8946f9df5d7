"""A thread group's queue stays long: requests wait for a worker for seconds, not moments."""

from __future__ import annotations

from poolscope.alerts.model import Finding, RuleContext, Severity, level_of
from poolscope.alerts.settings import Thresholds


class QueueLength:
    name = "queue_length_high"
    severity: Severity = "warning"
    help = "a group's QUEUE_LENGTH above queue_length_max for queue_length_for_s (resolves at queue_length_resolve)"
    needs_state = True

    def for_s(self, thresholds: Thresholds) -> float:
        return thresholds.queue_length_for_s

    def evaluate(self, ctx: RuleContext) -> list[Finding]:
        assert ctx.state is not None
        t = ctx.thresholds
        out = []
        for group in ctx.state.groups:
            level = level_of(group.queue_length, t.queue_length_max, t.queue_length_resolve)
            if level is None:
                continue
            out.append(
                Finding(
                    level=level,
                    group=str(group.group_id),
                    value=float(group.queue_length),
                    summary=f"{ctx.target}: group {group.group_id} queue length {group.queue_length}",
                    description=(
                        f"Group {group.group_id} has {group.queue_length} queued requests"
                        f" (threshold {t.queue_length_max} for {t.queue_length_for_s:g} s;"
                        f" {group.active_threads} active of {group.threads} threads,"
                        f" dequeues/s {group.dequeues_per_s or 0:.0f})."
                    ),
                )
            )
        return out


RULE = QueueLength()
