"""thread_pool_size against the host's CPUs: CPUs sit idle while requests queue → more groups."""

from __future__ import annotations

from poolscope.recommend.base import (
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    no_group_data,
    pct,
    pool_setting,
    read_more,
    too_little,
)
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

# Queues non-empty in at least this share of polls, while on average fewer than this share of
# the CPUs had an active worker: the pool leaves CPU unused.
QUEUED_SHARE = Threshold(
    name="queued_share",
    default=0.2,
    unit="share",
    help="queues non-empty in at least this share of polls ...",
)
IDLE_CPU_SHARE = Threshold(
    name="idle_cpu_share",
    default=0.75,
    unit="share",
    help="... while fewer than this share of the CPUs had an active worker",
)


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = pool_setting(ctx, "pool_size", "pool size")
    if isinstance(found, Clear):
        return found
    spec, current_text = found
    size = int_or_none(current_text)
    if ctx.cpus is None:
        return Clear("the server host's CPU count is unknown (set cpus on the target)")
    if size is None:
        return Clear(f"{spec.name} reads {current_text!r}")
    if (unreported := no_group_data(ctx, "queued requests with active workers")) is not None:
        return unreported
    if (short := too_little(ctx, "tp_group_queue_length")) is not None:
        return short
    w = ctx.window
    queued = w.fraction_above("tp_group_queue_length", 0.0) or 0.0
    active = w.mean("tp_group_active_threads") or 0.0
    if size >= ctx.cpus:
        return Clear(f"{spec.name} {size} ≥ {ctx.cpus} CPUs")
    if queued < ctx.value(QUEUED_SHARE) or active >= ctx.cpus * ctx.value(IDLE_CPU_SHARE):
        return Clear(
            f"queues non-empty in {pct(queued)} of polls, {active:.1f} active workers on {ctx.cpus} CPUs:"
            " no idle CPU with waiting requests"
        )
    return RecommendFinding(
        variable=spec.name,
        current=str(size),
        proposed=str(ctx.cpus),
        summary=f"Raise {spec.name} to the {ctx.cpus} CPUs",
        description=(
            f"Requests waited in the queue in {pct(queued)} of polls over the last {w.seconds:.0f} s while on"
            f" average only {active:.1f} workers were active on {ctx.cpus} CPUs ({ctx.cpus_source}). Each"
            f" group runs about one statement at a time, so {size} groups leave CPUs idle. One group per"
            " CPU is the documented default."
        ),
        evidence=[
            ev("CPUs", ctx.cpus),
            ev(spec.name, size),
            ev("polls with a non-empty queue", pct(queued), "tp_group_queue_length"),
            ev("mean active workers (all groups)", active, "tp_group_active_threads"),
        ],
        severity="warning",
        apply="live" if spec.dynamic else "restart",
        read_more=read_more(ctx, spec.name),
        chart_metrics=["tp_group_queue_length", "tp_group_active_threads", "qps"],
    )


RULE = RecommendRule(
    name="thread_pool_size",
    help="Thread groups vs CPUs",
    evaluate=evaluate,
    thresholds=(
        QUEUED_SHARE,
        IDLE_CPU_SHARE,
    ),
    metrics=("tp_group_queue_length", "tp_group_active_threads"),
)
