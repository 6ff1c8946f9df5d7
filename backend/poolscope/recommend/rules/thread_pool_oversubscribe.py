"""thread_pool_oversubscribe: left at the default 3 unless the evidence says otherwise.

The manuals advise not to touch it. This rule only speaks when it was changed and the window
shows no sign the change helps (then back to 3), or when at 3 the pool throttles while CPUs
are idle and requests queue (then 4).
"""

from __future__ import annotations

from poolscope.recommend.base import (
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    pct,
    too_little,
)
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

DEFAULT = 3
THROTTLES_PER_S = Threshold(
    name="throttles_per_s",
    default=1.0,
    unit="throttles/s",
    help="thread creation throttled at least this often ...",
)
QUEUED_SHARE = Threshold(
    name="queued_share",
    default=0.2,
    unit="share",
    help="... with queues non-empty in at least this share of polls",
)
READ_MORE = "https://mariadb.com/kb/en/thread-pool-system-status-variables/#thread_pool_oversubscribe"


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = ctx.var("oversubscribe")
    if not ctx.server.pool_enabled or found is None:
        return Clear("the thread pool is off or this flavor has no oversubscribe")
    spec, native = found
    current = int_or_none(native)
    if current is None:
        return Clear(f"{spec.name} reads {native!r}")
    if (short := too_little(ctx, "tp_group_queue_length")) is not None:
        return short
    w = ctx.window
    queued = w.fraction_above("tp_group_queue_length", 0.0) or 0.0
    active = w.mean("tp_group_active_threads") or 0.0
    throttles = sum(g.throttles_per_s or 0.0 for g in ctx.state.groups)
    evidence = [
        ev(spec.name, current),
        ev("throttles / s now", throttles),
        ev("polls with a non-empty queue", pct(queued), "tp_group_queue_length"),
        ev("mean active workers", active, "tp_group_active_threads"),
    ]
    cpu_idle = ctx.cpus is not None and active < ctx.cpus * 0.75
    if current == DEFAULT:
        if throttles >= ctx.value(THROTTLES_PER_S) and queued >= ctx.value(QUEUED_SHARE) and cpu_idle:
            return RecommendFinding(
                variable=spec.name,
                current=native,
                proposed=str(DEFAULT + 1),
                summary=f"Try {spec.name} = {DEFAULT + 1}",
                description=(
                    f"The pool throttles {throttles:.1f} times/s while requests queue in {pct(queued)} of polls"
                    f" and only {active:.1f} workers are active on {ctx.cpus} CPUs: one more active thread per"
                    " group may use the idle CPU. Use a guarded apply."
                ),
                evidence=evidence,
                severity="info",
                read_more=READ_MORE,
                chart_metrics=["tp_group_queue_length", "tp_group_active_threads", "qps"],
            )
        return Clear(f"at the default {DEFAULT}, which the manuals advise leaving alone")
    if throttles >= ctx.value(THROTTLES_PER_S) and cpu_idle and current < DEFAULT:
        return Clear(
            f"{spec.name} {current} is below the default and the pool is throttling: raise with care"
        )
    if queued < ctx.value(QUEUED_SHARE) or not cpu_idle:
        return RecommendFinding(
            variable=spec.name,
            current=native,
            proposed=str(DEFAULT),
            summary=f"Set {spec.name} back to the default {DEFAULT}",
            description=(
                f"{spec.name} was changed to {current}, but over the last {w.seconds:.0f} s nothing shows it"
                f" helps: queues non-empty in {pct(queued)} of polls, {active:.1f} active workers"
                f"{'' if ctx.cpus is None else f' on {ctx.cpus} CPUs'}. More active threads per group than"
                " the default mostly adds contention."
            ),
            evidence=evidence,
            severity="info",
            read_more=READ_MORE,
            chart_metrics=["tp_group_queue_length", "tp_group_active_threads", "qps"],
        )
    return Clear(
        f"{spec.name} {current} (changed) and the pool still queues with idle CPUs; no evidence to move it"
    )


RULE = RecommendRule(
    name="thread_pool_oversubscribe",
    help="Oversubscribe (leave at 3)",
    evaluate=evaluate,
    thresholds=(
        THROTTLES_PER_S,
        QUEUED_SHARE,
    ),
    metrics=("tp_group_queue_length", "tp_group_active_threads"),
)
