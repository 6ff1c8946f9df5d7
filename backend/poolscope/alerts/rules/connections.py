"""Connections approach max_connections: at the limit, clients get 'Too many connections'."""

from __future__ import annotations

from poolscope.alerts.model import Finding, RuleContext, Severity, int_variable, near_cap
from poolscope.alerts.settings import Thresholds


class ConnectionsNearMax:
    name = "connections_near_max"
    severity: Severity = "warning"
    help = "Threads_connected at or above connections_ratio x max_connections for connections_for_s"
    needs_state = True

    def for_s(self, thresholds: Thresholds) -> float:
        return thresholds.connections_for_s

    def evaluate(self, ctx: RuleContext) -> list[Finding]:
        assert ctx.state is not None
        connected = ctx.state.threads.connected
        cap = int_variable(ctx.state, "max_connections")
        t = ctx.thresholds
        near = near_cap(connected, cap, t.connections_ratio, t.resolve_factor)
        if near is None:
            return []
        level, share = near
        return [
            Finding(
                level=level,
                value=share,
                summary=f"{ctx.target}: {connected} of max_connections {cap}",
                description=(
                    f"Threads_connected is {connected}, {share:.0%} of max_connections {cap}"
                    f" (threshold {t.connections_ratio:.0%})."
                ),
            )
        ]


RULE = ConnectionsNearMax()
