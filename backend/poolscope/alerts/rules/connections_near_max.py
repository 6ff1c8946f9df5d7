"""Connections approach max_connections: at the limit, clients get 'Too many connections'."""

from __future__ import annotations

from poolscope.alerts.model import (
    RESOLVE_FACTOR,
    AlertContext,
    AlertFinding,
    AlertRule,
    near_cap,
)
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

RATIO = Threshold(
    name="connections_ratio",
    default=0.9,
    unit="share",
    help="Threads_connected at or above this share of max_connections",
    gt=0,
    le=1,
)
FOR_S = Threshold(
    name="connections_for_s", default=30.0, unit="s", help="... for this long fires", ge=0, le=3600
)


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    assert ctx.state is not None
    connected = ctx.state.threads.connected
    cap = int_or_none(ctx.state.variables.get("max_connections"))
    ratio = ctx.value(RATIO)
    near = near_cap(connected, cap, ratio, ctx.value(RESOLVE_FACTOR))
    if near is None:
        return []
    level, share = near
    return [
        AlertFinding(
            level=level,
            value=share,
            summary=f"{ctx.target}: {connected} of max_connections {cap}",
            description=(
                f"Threads_connected is {connected}, {share:.0%} of max_connections {cap}"
                f" (threshold {ratio:.0%})."
            ),
        )
    ]


RULE = AlertRule(
    name="connections_near_max",
    severity="warning",
    help="Threads_connected at or above connections_ratio x max_connections for connections_for_s",
    evaluate=evaluate,
    thresholds=(RATIO, FOR_S, RESOLVE_FACTOR),
    for_duration=FOR_S,
)
