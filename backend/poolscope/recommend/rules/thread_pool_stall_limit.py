"""thread_pool_stall_limit against statement times, queue waits and the stall rate.

Too high: a group stuck on long statements lets its queue wait for the whole limit before the
pool adds a worker (seed 001: 500 → 30 ms raised QPS 22K → 52K). Too low: ordinary statements
count as stalls and the pool keeps creating threads.

Percona 8.4.10+ has no per-group queue and no longest current wait: its whole-pool queue count
stands in for the groups' queues, and the mean wait of the requests dequeued per poll stands in
for the longest wait (a lower bound of it, so the rule can only under-react there).
"""

from __future__ import annotations

from poolscope.flavors import VariableSpec
from poolscope.recommend.base import (
    QUEUE_METRICS,
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    nice_round,
    no_queue_data,
    pct,
    pool_setting,
    queue_metric,
    read_more,
    too_little,
)
from poolscope.rules.base import Threshold

# Lower when, with requests queued in ≥ this share of polls, the longest wait reached this share
# of the limit or groups were judged stalled (no dequeues for longer than the limit).
QUEUED_SHARE = Threshold(
    name="queued_share",
    default=0.1,
    unit="share",
    help="lower when requests queued in at least this share of polls ...",
)
WAIT_SHARE_OF_LIMIT = Threshold(
    name="wait_share_of_limit",
    default=0.8,
    unit="share",
    help="... and the longest wait reached this share of the limit ...",
)
STALLED_SHARE = Threshold(
    name="stalled_share", default=0.05, unit="share", help="... or groups were stalled in this share of polls"
)
# Never propose below this (the seeds' best value) nor bother lowering a limit already this low.
FLOOR_MS = Threshold(
    name="floor_ms",
    default=30.0,
    unit="ms",
    help="never propose below this, nor lower a limit already this low",
)
# Raise when stalls are at least this share of dequeues (most statements outlive the limit).
STALLS_PER_DEQUEUE = Threshold(
    name="stalls_per_dequeue",
    default=0.1,
    unit="share",
    help="raise when stalls are at least this share of dequeues",
)
LONGEST_WAIT = "tp_queue_wait_max_ms"
# Percona 8.4.10+: mean queue wait per poll (percona_threadpool_status), a lower bound of the longest.
MEAN_WAIT = "tp_queue_wait_window_avg_ms"


def _proposal(spec: VariableSpec, ms: float) -> tuple[str, float]:
    """The value to set for about `ms` in the flavor's unit and range, and the ms it stands for."""
    raw = spec.from_ms(ms)
    return str(raw), raw * (spec.unit_ms or 1.0)


def _wait_metric(ctx: RecommendContext) -> tuple[str, str]:
    if ctx.window.count(LONGEST_WAIT) or not ctx.window.count(MEAN_WAIT):
        return LONGEST_WAIT, "longest queue wait"
    return MEAN_WAIT, "mean queue wait per poll (Percona; the longest was at least this)"


def _mean_statement_ms(ctx: RecommendContext) -> float | None:
    """Mean statement execution time over the window by Little's law: running statements ÷ QPS.

    A PROCESSLIST snapshot would mostly catch the long statements (they are the ones running
    when you look); this weighs every statement once. Poolscope's own poll is one of the
    running threads, hence the - 1.
    """
    running = ctx.window.mean("threads_running")
    qps = ctx.window.mean("qps")
    if running is None or not qps or qps <= 0:
        return None
    return max(running - 1.0, 0.0) / qps * 1000.0


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = pool_setting(ctx, "stall_limit", "stall limit")
    if isinstance(found, Clear):
        return found
    spec, native = found
    limit_ms = spec.to_ms(native)
    if limit_ms is None:
        return Clear(f"{spec.name} reads {native!r}")
    if (unreported := no_queue_data(ctx)) is not None:
        return unreported
    queue = queue_metric(ctx)
    if (short := too_little(ctx, queue)) is not None:
        return short
    w = ctx.window
    wait_metric, wait_label = _wait_metric(ctx)
    queued = w.fraction_above(queue, 0.0) or 0.0
    stalled = w.fraction_above("tp_group_stalled", 0.0) or 0.0
    wait_peak = w.peak(wait_metric)
    stalls = w.mean("tp_group_stalls_per_s") or 0.0
    dequeues = w.mean("tp_group_dequeues_per_s") or 0.0
    typical = _mean_statement_ms(ctx)
    evidence = [
        ev(f"{spec.name}", f"{limit_ms:.0f} ms{spec.native(native)}"),
        ev("polls with a non-empty queue", pct(queued), queue),
        ev("polls with a stalled group", pct(stalled), "tp_group_stalled"),
        ev(wait_label, None if wait_peak is None else f"{wait_peak:.0f} ms", wait_metric),
        ev("stalls / s (all groups)", stalls, "tp_group_stalls_per_s"),
        ev(
            "mean statement time (running ÷ QPS)",
            None if typical is None else f"{typical:.1f} ms",
            "threads_running",
        ),
    ]
    chart = [wait_metric, queue, "tp_group_stalled", "tp_group_stalls_per_s", "qps"]
    floor_ms = ctx.value(FLOOR_MS)
    waits_long = wait_peak is not None and wait_peak >= ctx.value(WAIT_SHARE_OF_LIMIT) * limit_ms
    if (
        limit_ms > floor_ms
        and queued >= ctx.value(QUEUED_SHARE)
        and (waits_long or stalled >= ctx.value(STALLED_SHARE))
    ):
        wanted_ms = max(floor_ms, float(nice_round(2 * typical)) if typical is not None else floor_ms)
        # In the flavor's unit and range (MySQL Enterprise: 10 ms units, at least 4; Percona: >= 10).
        proposed, target_ms = _proposal(spec, wanted_ms)
        if target_ms <= limit_ms / 2:
            return RecommendFinding(
                variable=spec.name,
                current=native,
                proposed=proposed,
                unit=spec.unit_label or None,
                summary=f"Lower {spec.name} from {limit_ms:.0f} ms to {target_ms:.0f} ms{spec.native(proposed)}",
                description=(
                    f"Over the last {w.seconds:.0f} s requests queued in {pct(queued)} of polls, the {wait_label}"
                    f" reached {wait_peak or 0:.0f} ms against a limit of {limit_ms:.0f} ms, and groups"
                    f" were stalled in {pct(stalled)} of polls. A group busy with a long statement makes its"
                    f" queue wait the full limit before a new worker starts. Proposed: twice the mean"
                    f" statement time ({'n/a' if typical is None else f'{typical:.1f} ms'}), at least"
                    f" {floor_ms:.0f} ms, so ordinary statements finish within it and long ones stop"
                    " blocking their group."
                ),
                evidence=evidence,
                severity="warning" if stalled < 0.2 else "critical",
                apply="live" if spec.dynamic else "restart",
                read_more=read_more(ctx, spec.name),
                chart_metrics=chart,
            )
    if dequeues > 0 and stalls / dequeues >= ctx.value(STALLS_PER_DEQUEUE) and limit_ms < 10 * floor_ms:
        proposed, target_ms = _proposal(spec, float(nice_round(limit_ms * 2)))
        return RecommendFinding(
            variable=spec.name,
            current=native,
            proposed=proposed,
            unit=spec.unit_label or None,
            summary=f"Raise {spec.name} from {limit_ms:.0f} ms to {target_ms:.0f} ms{spec.native(proposed)}",
            description=(
                f"{stalls:.1f} stalls/s against {dequeues:.1f} dequeues/s over the last {w.seconds:.0f} s:"
                f" {stalls / dequeues:.0%} of requests outlive the {limit_ms:.0f} ms limit, so the pool keeps"
                " waking or creating workers for ordinary statements."
            ),
            evidence=[*evidence, ev("dequeues / s", dequeues, "tp_group_dequeues_per_s")],
            severity="info",
            apply="live" if spec.dynamic else "restart",
            read_more=read_more(ctx, spec.name),
            chart_metrics=chart,
        )
    return Clear(
        f"{wait_label} {wait_peak or 0:.0f} ms vs limit {limit_ms:.0f} ms, stalled in {pct(stalled)} of"
        f" polls, {stalls:.2f} stalls/s"
    )


RULE = RecommendRule(
    name="thread_pool_stall_limit",
    help="Stall limit vs statement times",
    evaluate=evaluate,
    thresholds=(
        QUEUED_SHARE,
        WAIT_SHARE_OF_LIMIT,
        STALLED_SHARE,
        FLOOR_MS,
        STALLS_PER_DEQUEUE,
    ),
    metrics=(
        *QUEUE_METRICS,
        "tp_group_stalled",
        LONGEST_WAIT,
        MEAN_WAIT,
        "tp_group_stalls_per_s",
        "tp_group_dequeues_per_s",
        "threads_running",
        "qps",
    ),
)
