"""A thread group's queue stays long: requests wait for a worker for seconds, not moments."""

from __future__ import annotations

from poolscope.alerts.model import AlertContext, AlertFinding, AlertRule, PrometheusForm, level_of
from poolscope.rules.base import Threshold, ThresholdValues

MAX = Threshold(
    name="queue_length_max", default=20, unit="requests", help="a group's QUEUE_LENGTH above this ...", ge=1
)
FOR_S = Threshold(
    name="queue_length_for_s", default=10.0, unit="s", help="... for this long fires", ge=0, le=3600
)
RESOLVE = Threshold(
    name="queue_length_resolve",
    default=10,
    unit="requests",
    help="resolves only at or below this (hysteresis)",
    ge=0,
)


def hold(thresholds: ThresholdValues) -> float:
    """A firing alert holds while the queue is longer than this (hysteresis)."""
    return thresholds.value(RESOLVE)


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    assert ctx.state is not None
    limit, for_s, resolve = ctx.value(MAX), ctx.value(FOR_S), hold(ctx.thresholds)
    out = []
    for group in ctx.state.groups:
        level = level_of(group.queue_length, limit, resolve)
        if level is None:
            continue
        out.append(
            AlertFinding(
                level=level,
                group=str(group.group_id),
                value=float(group.queue_length),
                summary=f"{ctx.target}: group {group.group_id} queue length {group.queue_length}",
                description=(
                    f"Group {group.group_id} has {group.queue_length} queued requests"
                    f" (threshold {limit} for {for_s:g} s;"
                    f" {group.active_threads} active of {group.threads} threads,"
                    f" dequeues/s {group.dequeues_per_s or 0:.0f})."
                ),
            )
        )
    return out


RULE = AlertRule(
    name="queue_length_high",
    severity="warning",
    help="a group's QUEUE_LENGTH above queue_length_max for queue_length_for_s (resolves at queue_length_resolve)",
    evaluate=evaluate,
    thresholds=(MAX, FOR_S, RESOLVE),
    for_duration=FOR_S,
    prometheus=PrometheusForm(
        metric="poolscope_tp_group_queue_length",
        by=("target", "group"),
        fires_above=MAX,
        holds_above=hold,
        summary="{{ $labels.target }}: group {{ $labels.group }} queue length {{ $value }}",
        description="Group {{ $labels.group }} of {{ $labels.target }} has {{ $value }} queued requests.",
    ),
)
