"""The pool's threads approach thread_pool_max_threads: at the cap, new work only queues."""

from __future__ import annotations

from poolscope.alerts.model import (
    RESOLVE_FACTOR,
    AlertContext,
    AlertFinding,
    AlertRule,
    near_cap,
)
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

RATIO = Threshold(
    name="pool_threads_ratio",
    default=0.9,
    unit="share",
    help="Threadpool_threads at or above this share of thread_pool_max_threads",
    gt=0,
    le=1,
)
FOR_S = Threshold(
    name="pool_threads_for_s", default=30.0, unit="s", help="... for this long fires", ge=0, le=3600
)


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    assert ctx.state is not None
    threads = ctx.state.threads.pool_threads
    cap = int_or_none(ctx.state.variables.get("thread_pool_max_threads"))
    ratio = ctx.value(RATIO)
    near = near_cap(threads, cap, ratio, ctx.value(RESOLVE_FACTOR))
    if near is None:
        return []
    level, share = near
    return [
        AlertFinding(
            level=level,
            value=share,
            summary=f"{ctx.target}: pool threads {threads} of max {cap}",
            description=(
                f"Threadpool_threads is {threads}, {share:.0%} of thread_pool_max_threads {cap}"
                f" (threshold {ratio:.0%}). At the cap no new worker starts and requests queue."
            ),
        )
    ]


RULE = AlertRule(
    name="pool_threads_near_max",
    severity="warning",
    help="Threadpool_threads at or above pool_threads_ratio x thread_pool_max_threads for pool_threads_for_s",
    evaluate=evaluate,
    thresholds=(RATIO, FOR_S, RESOLVE_FACTOR),
    for_duration=FOR_S,
)
