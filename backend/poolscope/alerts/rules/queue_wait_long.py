"""The oldest queued connection of a group has waited too long for a worker."""

from __future__ import annotations

from poolscope.alerts.model import RESOLVE_FACTOR, AlertContext, AlertFinding, AlertRule, level_of
from poolscope.rules.base import Threshold

MAX_MS = Threshold(
    name="queue_wait_max_ms",
    default=2000.0,
    unit="ms",
    help="oldest queued connection waiting longer fires",
    gt=0,
)
FOR_S = Threshold(
    name="queue_wait_for_s", default=3.0, unit="s", help="... for this long fires", ge=0, le=3600
)


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    assert ctx.state is not None
    limit = ctx.value(MAX_MS)
    hold = limit * ctx.value(RESOLVE_FACTOR)
    coarse = ctx.info.server is not None and ctx.info.server.queue_time_mode == "coarse"
    out = []
    for group in ctx.state.groups:
        waited = group.oldest_queued_ms
        if waited is None:
            continue
        level = level_of(waited, limit, hold)
        if level is None:
            continue
        waiter = next((q for q in ctx.state.queue if q.group_id == group.group_id), None)
        who = f" ({waiter.user}@{waiter.host}, db {waiter.db})" if waiter and waiter.user else ""
        out.append(
            AlertFinding(
                level=level,
                group=str(group.group_id),
                value=waited,
                summary=f"{ctx.target}: group {group.group_id} oldest queued request waits {waited:.0f} ms",
                description=(
                    f"The oldest queued connection of group {group.group_id}{who} has waited"
                    f" {waited:.0f} ms (threshold {limit:.0f} ms)."
                    + (
                        " Queue times are coarse (thread_pool_exact_stats=OFF) and overstate waits."
                        if coarse
                        else ""
                    )
                ),
            )
        )
    return out


RULE = AlertRule(
    name="queue_wait_long",
    severity="warning",
    help="oldest queued connection of a group waiting longer than queue_wait_max_ms for queue_wait_for_s",
    evaluate=evaluate,
    thresholds=(MAX_MS, FOR_S, RESOLVE_FACTOR),
    for_duration=FOR_S,
)
