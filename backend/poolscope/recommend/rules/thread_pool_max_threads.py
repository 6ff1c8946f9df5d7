"""thread_pool_max_threads when the pool's threads approach the cap (then new work just waits)."""

from __future__ import annotations

from poolscope.recommend.base import (
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    nice_round,
    pool_setting,
    read_more,
    too_little,
)
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

NEAR_SHARE = Threshold(
    name="near_share",
    default=0.8,
    unit="share",
    help="pool threads peaking at or above this share of the cap propose raising it",
)
AT_SHARE = Threshold(
    name="at_share", default=0.95, unit="share", help="... and at or above this share it is critical"
)
CEILING = 65536


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = pool_setting(ctx, "max_threads", "thread cap")
    if isinstance(found, Clear):
        return found
    spec, native = found
    cap = int_or_none(native)
    if cap is None or cap <= 0:
        return Clear(f"{spec.name} reads {native!r}")
    if (short := too_little(ctx, "pool_threads")) is not None:
        return short
    peak = ctx.window.peak("pool_threads") or 0.0
    mean = ctx.window.mean("pool_threads") or 0.0
    if peak < ctx.value(NEAR_SHARE) * cap:
        return Clear(f"pool threads peaked at {peak:.0f} of {cap} ({peak / cap:.0%})")
    proposed = min(CEILING, nice_round(cap * 2))
    if proposed <= cap:
        return Clear(f"{spec.name} is already at its maximum {cap}")
    return RecommendFinding(
        variable=spec.name,
        current=native,
        proposed=str(proposed),
        summary=f"Raise {spec.name} from {cap} to {proposed}",
        description=(
            f"The pool had up to {peak:.0f} threads (mean {mean:.1f}) over the last {ctx.window.seconds:.0f} s,"
            f" {peak / cap:.0%} of the cap {cap}. At the cap, statements that wait (locks, I/O) cannot be"
            " covered by new workers and every group's queue stops moving. Check memory per thread first;"
            " hitting the cap constantly usually also means contention worth finding."
        ),
        evidence=[
            ev(spec.name, cap),
            ev("peak pool threads", peak, "pool_threads"),
            ev("mean pool threads", mean, "pool_threads"),
        ],
        severity="critical" if peak >= ctx.value(AT_SHARE) * cap else "warning",
        read_more=read_more(ctx, spec.name),
        chart_metrics=["pool_threads", "tp_group_queue_length", "qps"],
    )


RULE = RecommendRule(
    name="thread_pool_max_threads",
    help="Thread cap headroom",
    evaluate=evaluate,
    thresholds=(
        NEAR_SHARE,
        AT_SHARE,
    ),
    metrics=("pool_threads",),
)
