"""The target cannot be polled: unreachable, refusing the login, or timing out."""

from __future__ import annotations

from poolscope.alerts.model import AlertContext, AlertFinding, AlertRule, PrometheusForm
from poolscope.rules.base import Threshold

FOR_S = Threshold(
    name="target_down_for_s", default=10.0, unit="s", help="unreachable this long fires", ge=0, le=3600
)


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    if ctx.info.status != "down":
        return []
    since = ctx.info.last_success_at
    down_for = f" (last successful poll {ctx.now - since:.0f} s ago)" if since else ""
    return [
        AlertFinding(
            level="breach",
            value=0.0,
            summary=f"{ctx.target}: target down",
            description=f"Poolscope cannot poll {ctx.target}: {ctx.info.reason or 'unknown reason'}{down_for}.",
        )
    ]


RULE = AlertRule(
    name="target_down",
    severity="critical",
    help="the target could not be polled for target_down_for_s",
    evaluate=evaluate,
    thresholds=(FOR_S,),
    for_duration=FOR_S,
    needs_state=False,
    prometheus=PrometheusForm(
        metric="poolscope_target_up",
        by=("target",),
        equals=0,
        summary="{{ $labels.target }}: target down",
        description=(
            "Poolscope cannot poll {{ $labels.target }}; its dashboard (/targets/{{ $labels.target }}) says why."
        ),
    ),
)
