"""thread_cache_size from the one-thread-per-connection miss ratio, only where that ratio means something.

Under the pool Threads_created counts the pool's own workers and pooled connections ignore the
cache (its lifetime miss ratio read a meaningless 0.194), so the rule stays silent there.
"""

from __future__ import annotations

import math

from poolscope.recommend.base import (
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    pct,
    read_more,
    too_little,
)
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

# MySQLTuner flags a hit rate ≤ 50%; below this churn the ratio is noise.
MISS_RATIO = Threshold(
    name="miss_ratio",
    default=0.5,
    unit="share",
    help="thread cache misses per new connection at or above this propose a bigger cache",
)
MIN_CONNECTIONS_PER_S = Threshold(
    name="min_connections_per_s",
    default=1.0,
    unit="connections/s",
    help="below this connection churn the miss ratio is noise",
)
MAX_CACHE = 16384


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = ctx.var("thread_cache_size")
    if found is None:
        return Clear("the server has no thread_cache_size")
    spec, native = found
    ratio = ctx.state.ratios.thread_cache_miss
    if ratio.regime != "one-thread-per-connection":
        return Clear("under the thread pool pooled connections ignore the thread cache")
    current = int_or_none(native)
    if current is None:
        return Clear(f"{spec.name} reads {native!r}")
    if (short := too_little(ctx, "thread_cache_miss_ratio")) is not None:
        return short
    w = ctx.window
    miss = w.mean("thread_cache_miss_ratio")
    churn = w.mean("connections_per_s") or 0.0
    churn_peak = w.peak("connections_per_s") or 0.0
    if miss is None or miss < ctx.value(MISS_RATIO) or churn < ctx.value(MIN_CONNECTIONS_PER_S):
        return Clear(f"thread cache miss ratio {pct(miss)} at {churn:.1f} connections/s")
    proposed = min(MAX_CACHE, max(16, current * 2, math.ceil(churn_peak)))
    if proposed <= current:
        return Clear(f"{spec.name} is already {current}")
    return RecommendFinding(
        variable=spec.name,
        current=native,
        proposed=str(proposed),
        summary=f"Raise {spec.name} from {current} to {proposed}",
        description=(
            f"{pct(miss)} of new connections created a thread over the last {w.seconds:.0f} s"
            f" ({churn:.1f} connections/s, peak {churn_peak:.0f}/s) with one thread per connection: the cache"
            f" of {current} threads is too small for this churn. Hit rates at or below 50% are worth fixing."
        ),
        evidence=[
            ev(spec.name, current),
            ev("thread cache miss ratio (window mean)", pct(miss), "thread_cache_miss_ratio"),
            ev("connections / s (mean)", churn, "connections_per_s"),
            ev("connections / s (peak)", churn_peak, "connections_per_s"),
        ],
        severity="warning" if miss >= 0.8 else "info",
        read_more=read_more(ctx, spec.name),
        chart_metrics=["thread_cache_miss_ratio", "connections_per_s", "threads_created_per_s"],
    )


RULE = RecommendRule(
    name="thread_cache_size",
    help="Thread cache (one thread per connection)",
    evaluate=evaluate,
    thresholds=(
        MISS_RATIO,
        MIN_CONNECTIONS_PER_S,
    ),
    metrics=("thread_cache_miss_ratio", "connections_per_s"),
)
