"""max_connections when client connections approach it: then monitoring and admins are locked out too."""

from __future__ import annotations

from poolscope.recommend.base import (
    Clear,
    RecommendContext,
    RecommendFinding,
    RecommendRule,
    ev,
    nice_round,
    read_more,
    too_little,
)
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

NEAR_SHARE = Threshold(
    name="near_share",
    default=0.85,
    unit="share",
    help="connections peaking at or above this share of max_connections propose raising it",
)
AT_SHARE = Threshold(
    name="at_share", default=0.95, unit="share", help="... and at or above this share it is critical"
)
MAX_VALUE = 100000


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = ctx.var("max_connections")
    if found is None:
        return Clear("the server has no max_connections")
    spec, native = found
    limit = int_or_none(native)
    if not limit:
        return Clear(f"{spec.name} reads {native!r}")
    if (short := too_little(ctx, "threads_connected")) is not None:
        return short
    w = ctx.window
    peak = w.peak("threads_connected") or 0.0
    aborted = w.mean("aborted_connects_per_s") or 0.0
    if peak < ctx.value(NEAR_SHARE) * limit:
        return Clear(f"connections peaked at {peak:.0f} of {limit} ({peak / limit:.0%})")
    proposed = min(MAX_VALUE, nice_round(max(peak * 1.5, limit * 1.25)))
    extra = ctx.var("extra_max_connections")
    admin_way = (
        f" The extra_port allows {extra[1]} more connection(s) for admins."
        if extra and ctx.server.extra_port
        else " Without an extra_port, only one more connection is reserved (for SUPER): the monitoring"
        " and admin logins compete with the application for the last slots."
    )
    return RecommendFinding(
        variable=spec.name,
        current=native,
        proposed=str(proposed),
        summary=f"Raise {spec.name} from {limit} to {proposed}",
        description=(
            f"Connections peaked at {peak:.0f} of {limit} ({peak / limit:.0%}) over the last {w.seconds:.0f} s"
            f" ({aborted:.2f} aborted connects/s).{admin_way} Check memory per connection first; with the"
            " thread pool on, more connections do not mean more threads."
        ),
        evidence=[
            ev(spec.name, limit),
            ev("peak connections", peak, "threads_connected"),
            ev("aborted connects / s", aborted, "aborted_connects_per_s"),
        ],
        severity="critical" if peak >= ctx.value(AT_SHARE) * limit else "warning",
        read_more=read_more(ctx, spec.name),
        chart_metrics=["threads_connected", "aborted_connects_per_s"],
    )


RULE = RecommendRule(
    name="max_connections",
    help="Connection headroom",
    evaluate=evaluate,
    thresholds=(
        NEAR_SHARE,
        AT_SHARE,
    ),
    metrics=("threads_connected", "aborted_connects_per_s"),
)
