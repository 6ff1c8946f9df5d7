"""thread_pool_oversubscribe: left at the default 3 unless the evidence says otherwise.

The manuals advise not to touch it. This rule only speaks when it was changed and the window
shows no sign the change helps (then back to 3), or when at 3 the pool holds requests back
while CPUs are idle and requests queue (then 4). "Held back" is what each flavor reports:
MariaDB's per-group THROTTLES (thread creation throttled), Percona 8.4.10+'s
Threadpool_requests_starved_in_queue (normal-priority requests kept waiting because the group is
at the oversubscribe limit: percona-server sql/threadpool_unix.cc, too_many_busy_threads()),
with the whole pool's active threads (Threadpool_threads − Threadpool_idle_threads).
"""

from __future__ import annotations

from dataclasses import dataclass

from poolscope.flavors import CAP_GROUPS, CAP_QUEUE_DEPTH
from poolscope.recommend.base import (
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    pct,
    pool_name,
    pool_setting,
    read_more,
    too_little,
)
from poolscope.recommend.models import Evidence
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

DEFAULT = 3
THROTTLES_PER_S = Threshold(
    name="throttles_per_s",
    default=1.0,
    unit="throttles/s",
    help="thread creation throttled at least this often (MariaDB) ...",
)
STARVED_SHARE = Threshold(
    name="starved_share",
    default=0.2,
    unit="share",
    help="... or requests starved at the limit in at least this share of polls (Percona 8.4.10+) ...",
)
QUEUED_SHARE = Threshold(
    name="queued_share",
    default=0.2,
    unit="share",
    help="... with queues non-empty in at least this share of polls",
)


@dataclass
class _Reading:
    """What the window says, from whichever source this flavor has."""

    held_back: bool  # the pool kept requests waiting at the oversubscribe limit
    queued: float  # share of polls with requests queued
    active: float  # mean active pool threads
    evidence: list[Evidence]
    charts: list[str]


def _groups(ctx: RecommendContext, name: str, current: int) -> _Reading:
    w = ctx.window
    queued = w.fraction_above("tp_group_queue_length", 0.0) or 0.0
    active = w.mean("tp_group_active_threads") or 0.0
    throttles = sum(g.throttles_per_s or 0.0 for g in ctx.state.groups)
    return _Reading(
        held_back=throttles >= ctx.value(THROTTLES_PER_S),
        queued=queued,
        active=active,
        evidence=[
            ev(name, current),
            ev("throttles / s now", throttles),
            ev("polls with a non-empty queue", pct(queued), "tp_group_queue_length"),
            ev("mean active workers", active, "tp_group_active_threads"),
        ],
        charts=["tp_group_queue_length", "tp_group_active_threads", "qps"],
    )


def _starved(ctx: RecommendContext, name: str, current: int) -> _Reading:
    w = ctx.window
    starved = w.fraction_above("pool_queue_starved", 0.0) or 0.0
    queued = w.fraction_above("tp_queued_connections", 0.0) or 0.0
    active = max((w.mean("pool_threads") or 0.0) - (w.mean("pool_idle_threads") or 0.0), 0.0)
    return _Reading(
        held_back=starved >= ctx.value(STARVED_SHARE),
        queued=queued,
        active=active,
        evidence=[
            ev(name, current),
            ev("polls with requests starved at the limit", pct(starved), "pool_queue_starved"),
            ev("polls with a non-empty queue", pct(queued), "tp_queued_connections"),
            ev("mean active pool threads", active, "pool_threads"),
        ],
        charts=["pool_queue_starved", "tp_queued_connections", "pool_threads", "qps"],
    )


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = pool_setting(ctx, "oversubscribe", "oversubscribe")
    if isinstance(found, Clear):
        return found
    spec, native = found
    current = int_or_none(native)
    if current is None:
        return Clear(f"{spec.name} reads {native!r}")
    caps = set(ctx.server.capabilities)
    if CAP_GROUPS in caps:
        short, reading = too_little(ctx, "tp_group_queue_length"), _groups
    elif CAP_QUEUE_DEPTH in caps:
        short, reading = too_little(ctx, "pool_queue_starved"), _starved
    else:
        return Clear(
            f"{pool_name(ctx)} reports neither per-group throttles nor Threadpool_requests_starved_in_queue"
            " (Percona 8.4.10-10+), so nothing shows whether the oversubscribe limit holds requests back:"
            " this rule does not apply here"
        )
    if short is not None:
        return short
    r = reading(ctx, spec.name, current)
    w = ctx.window
    cpu_idle = ctx.cpus is not None and r.active < ctx.cpus * 0.75
    link = read_more(ctx, spec.name)
    if current == DEFAULT:
        if r.held_back and r.queued >= ctx.value(QUEUED_SHARE) and cpu_idle:
            return RecommendFinding(
                variable=spec.name,
                current=native,
                proposed=str(DEFAULT + 1),
                summary=f"Try {spec.name} = {DEFAULT + 1}",
                description=(
                    f"The pool holds requests back at the limit while requests queue in {pct(r.queued)} of polls"
                    f" and only {r.active:.1f} threads are active on {ctx.cpus} CPUs: one more active thread per"
                    " group may use the idle CPU. Use a guarded apply."
                ),
                evidence=r.evidence,
                severity="info",
                read_more=link,
                chart_metrics=r.charts,
            )
        return Clear(f"at the default {DEFAULT}, which the manuals advise leaving alone")
    if r.held_back and cpu_idle and current < DEFAULT:
        return Clear(
            f"{spec.name} {current} is below the default and the pool holds requests back: raise with care"
        )
    if r.queued < ctx.value(QUEUED_SHARE) or not cpu_idle:
        return RecommendFinding(
            variable=spec.name,
            current=native,
            proposed=str(DEFAULT),
            summary=f"Set {spec.name} back to the default {DEFAULT}",
            description=(
                f"{spec.name} was changed to {current}, but over the last {w.seconds:.0f} s nothing shows it"
                f" helps: queues non-empty in {pct(r.queued)} of polls, {r.active:.1f} active threads"
                f"{'' if ctx.cpus is None else f' on {ctx.cpus} CPUs'}. More active threads per group than"
                " the default mostly adds contention."
            ),
            evidence=r.evidence,
            severity="info",
            read_more=link,
            chart_metrics=r.charts,
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
        STARVED_SHARE,
        QUEUED_SHARE,
    ),
    metrics=(
        "tp_group_queue_length",
        "tp_group_active_threads",
        "pool_queue_starved",
        "tp_queued_connections",
        "pool_threads",
        "pool_idle_threads",
    ),
)
