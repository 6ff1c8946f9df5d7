"""A thread group is stalled: its STALLS counter rose, or its queue made no progress beyond the stall limit.

IS_STALLED alone is not used (REFERENCE.md §1: it is set for an instant). The verdict comes from
analysis/stalls.py (StallDetector), computed by the poller; this rule turns it into an alert.
"""

from __future__ import annotations

from poolscope.alerts.model import Finding, RuleContext, Severity, int_variable
from poolscope.alerts.settings import Thresholds

# The server-flag-only verdict is the instantaneous IS_STALLED: not enough on its own.
ALERTING_REASONS = {
    "stalls_counter": "STALLS counter rose",
    "no_dequeue": "no dequeue for longer than the stall limit",
}


class GroupStalled:
    name = "group_stalled"
    severity: Severity = "critical"
    help = "a thread group stalled (STALLS rose, or a non-empty queue had no dequeue for longer than thread_pool_stall_limit)"
    needs_state = True

    def for_s(self, thresholds: Thresholds) -> float:
        return thresholds.stall_for_s

    def evaluate(self, ctx: RuleContext) -> list[Finding]:
        assert ctx.state is not None
        # In ms whatever the flavor's unit (MySQL Enterprise counts 10 ms: poolscope/flavors.py).
        pool = ctx.state.pool
        stall_limit = (
            pool.stall_limit_ms
            if pool is not None and pool.stall_limit_ms is not None
            else int_variable(ctx.state, "thread_pool_stall_limit")
        )
        out = []
        for group in ctx.state.groups:
            if group.stall_reason not in ALERTING_REASONS:
                continue
            oldest = f"{group.oldest_queued_ms:.0f} ms" if group.oldest_queued_ms is not None else "n/a"
            out.append(
                Finding(
                    level="breach",
                    group=str(group.group_id),
                    value=group.stalls_per_s,
                    summary=f"{ctx.target}: thread group {group.group_id} stalled",
                    description=(
                        f"Group {group.group_id}: {ALERTING_REASONS[group.stall_reason]}"  # type: ignore[index]
                        f" (stalls/s {group.stalls_per_s or 0:.2f}, queue length {group.queue_length},"
                        f" oldest queued {oldest}, active threads {group.active_threads}/{group.threads},"
                        f" thread_pool_stall_limit {'?' if stall_limit is None else f'{stall_limit:g}'} ms)."
                        " Long statements hold every worker of the group; queued requests wait."
                    ),
                    labels={"stall_reason": str(group.stall_reason)},
                )
            )
        return out


RULE = GroupStalled()
