"""The target cannot be polled: unreachable, refusing the login, or timing out."""

from __future__ import annotations

from poolscope.alerts.model import Finding, RuleContext, Severity
from poolscope.alerts.settings import Thresholds


class TargetDown:
    name = "target_down"
    severity: Severity = "critical"
    help = "the target could not be polled for target_down_for_s"
    needs_state = False

    def for_s(self, thresholds: Thresholds) -> float:
        return thresholds.target_down_for_s

    def evaluate(self, ctx: RuleContext) -> list[Finding]:
        if ctx.info.status != "down":
            return []
        since = ctx.info.last_success_at
        down_for = f" (last successful poll {ctx.now - since:.0f} s ago)" if since else ""
        return [
            Finding(
                level="breach",
                value=0.0,
                summary=f"{ctx.target}: target down",
                description=f"Poolscope cannot poll {ctx.target}: {ctx.info.reason or 'unknown reason'}{down_for}.",
            )
        ]


RULE = TargetDown()
