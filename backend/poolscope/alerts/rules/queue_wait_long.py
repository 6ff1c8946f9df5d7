"""The oldest queued connection of a group has waited too long for a worker."""

from __future__ import annotations

from poolscope.alerts.model import (
    RESOLVE_FACTOR,
    AlertContext,
    AlertFinding,
    AlertRule,
    PrometheusForm,
    level_of,
)
from poolscope.rules.base import Threshold, ThresholdValues

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


def hold_ms(thresholds: ThresholdValues) -> float:
    """A firing alert holds while the wait is longer than this (hysteresis)."""
    return thresholds.value(MAX_MS) * thresholds.value(RESOLVE_FACTOR)


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    assert ctx.state is not None
    limit = ctx.value(MAX_MS)
    hold = hold_ms(ctx.thresholds)
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
    prometheus=PrometheusForm(
        metric="poolscope_tp_group_oldest_queued_seconds",
        by=("target", "group"),
        fires_above=MAX_MS,
        holds_above=hold_ms,
        scale=0.001,
        summary=(
            "{{ $labels.target }}: group {{ $labels.group }} oldest queued request waits"
            " {{ $value | humanizeDuration }}"
        ),
        description=(
            "The oldest queued connection of group {{ $labels.group }} of {{ $labels.target }} has waited"
            " {{ $value | humanizeDuration }} for a worker."
        ),
    ),
)
