"""Priority for open transactions when they wait in the queue behind new work.

A connection inside a transaction holds locks; queued behind new statements it keeps them
longer and throughput collapses at high concurrency (seeds 001/004: ~70% of peak at 8192
connections without, ~97% with). MariaDB: thread_pool_priority=auto; Percona/AliSQL:
thread_pool_high_prio_mode=transactions.
"""

from __future__ import annotations

from poolscope.recommend.base import (
    QUEUE_METRICS,
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    no_queue_data,
    pct,
    pool_setting,
    queue_metric,
    read_more,
    too_little,
)
from poolscope.rules.base import Threshold

RECOMMENDED = {"thread_pool_priority": "auto", "thread_pool_high_prio_mode": "transactions"}
QUEUED_SHARE = Threshold(
    name="queued_share", default=0.1, unit="share", help="requests queued in at least this share of polls ..."
)
MEAN_OPEN_TRX = Threshold(
    name="mean_open_trx",
    default=1.0,
    unit="transactions",
    help="... with at least this many transactions open on average",
)


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = pool_setting(ctx, "priority", "transaction priority")
    if isinstance(found, Clear):
        return found
    spec, current = found
    wanted = RECOMMENDED.get(spec.name)
    if wanted is None:
        return Clear(f"no recommendation known for {spec.name}")
    if current.lower() == wanted:
        kickup = ctx.var("prio_kickup_timer")
        return Clear(
            f"{spec.name} is already {wanted}"
            + (f" (low-priority requests are promoted after {kickup[1]} ms)" if kickup else "")
        )
    # Per group (MariaDB, MySQL Enterprise) or the whole pool's count (Percona 8.4.10+).
    if (unreported := no_queue_data(ctx)) is not None:
        return unreported
    queue = queue_metric(ctx)
    if (short := too_little(ctx, queue)) is not None:
        return short
    w = ctx.window
    queued = w.fraction_above(queue, 0.0) or 0.0
    open_trx = w.mean("trx_active") or 0.0
    lock_waits = w.mean("trx_lock_waits") or 0.0
    trx_threads = {t.thread_id for t in (ctx.state.transactions.items if ctx.state.transactions else [])}
    queued_in_trx = sum(1 for q in ctx.state.queue if q.connection_id in trx_threads)
    if queued_in_trx == 0 and (queued < ctx.value(QUEUED_SHARE) or open_trx < ctx.value(MEAN_OPEN_TRX)):
        return Clear(
            f"{spec.name}={current}, but transactions did not wait in the queue (queue non-empty in"
            f" {pct(queued)} of polls, {open_trx:.1f} open transactions on average)"
        )
    return RecommendFinding(
        variable=spec.name,
        current=current,
        proposed=wanted,
        summary=f"Set {spec.name} = {wanted} so open transactions go first",
        description=(
            f"With {spec.name}={current}, connections inside a transaction queue behind new work: over the last"
            f" {w.seconds:.0f} s the queue was non-empty in {pct(queued)} of polls with {open_trx:.1f} open"
            f" transactions on average ({lock_waits:.1f} waiting for locks), and {queued_in_trx} queued"
            f" connection(s) hold an open transaction now. Giving them priority releases their locks sooner."
            " SET GLOBAL reaches new connections; existing ones keep their session value."
        ),
        evidence=[
            ev(spec.name, current),
            ev("polls with a non-empty queue", pct(queued), queue),
            ev("mean open transactions", open_trx, "trx_active"),
            ev("mean lock waits", lock_waits, "trx_lock_waits"),
            ev("queued connections in a transaction now", queued_in_trx),
        ],
        severity="warning",
        read_more=read_more(ctx, spec.name),
        chart_metrics=[queue, "trx_active", "trx_lock_waits", "qps"],
    )


RULE = RecommendRule(
    name="transaction_priority",
    help="Priority for open transactions",
    evaluate=evaluate,
    thresholds=(
        QUEUED_SHARE,
        MEAN_OPEN_TRX,
    ),
    metrics=(*QUEUE_METRICS, "trx_active", "trx_lock_waits"),
)
