"""The pool's threads approach thread_pool_max_threads: at the cap, new work only queues."""

from __future__ import annotations

from poolscope.alerts.model import Finding, RuleContext, Severity, int_variable, near_cap
from poolscope.alerts.settings import Thresholds


class PoolThreadsNearMax:
    name = "pool_threads_near_max"
    severity: Severity = "warning"
    help = (
        "Threadpool_threads at or above pool_threads_ratio x thread_pool_max_threads for pool_threads_for_s"
    )
    needs_state = True

    def for_s(self, thresholds: Thresholds) -> float:
        return thresholds.pool_threads_for_s

    def evaluate(self, ctx: RuleContext) -> list[Finding]:
        assert ctx.state is not None
        threads = ctx.state.threads.pool_threads
        cap = int_variable(ctx.state, "thread_pool_max_threads")
        t = ctx.thresholds
        near = near_cap(threads, cap, t.pool_threads_ratio, t.resolve_factor)
        if near is None:
            return []
        level, share = near
        return [
            Finding(
                level=level,
                value=share,
                summary=f"{ctx.target}: pool threads {threads} of max {cap}",
                description=(
                    f"Threadpool_threads is {threads}, {share:.0%} of thread_pool_max_threads {cap}"
                    f" (threshold {t.pool_threads_ratio:.0%}). At the cap no new worker starts and requests queue."
                ),
            )
        ]


RULE = PoolThreadsNearMax()
