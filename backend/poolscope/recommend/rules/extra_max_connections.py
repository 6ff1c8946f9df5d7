"""extra_max_connections when the admin port has no room for both monitoring and an admin.

The extra_port lets monitoring (and the apply credential) skip the pool's queue, but it allows
only extra_max_connections logins (default 1): Poolscope takes one, so an admin in an incident
falls back to the queued normal port — or Poolscope itself does.
"""

from __future__ import annotations

from poolscope.recommend.base import Clear, RecommendContext, RecommendFinding, RecommendRule, ev, read_more
from poolscope.rules.base import Threshold
from poolscope.values import int_or_none

# Poolscope's monitoring connection + the apply credential + one human admin.
WANTED_SLOTS = Threshold(
    name="wanted_slots",
    default=3,
    unit="connections",
    help="extra_port connections wanted (monitoring, apply credential, one admin)",
)


def evaluate(ctx: RecommendContext) -> RecommendFinding | Clear:
    found = ctx.var("extra_max_connections")
    if found is None or not ctx.server.extra_port:
        return Clear("the server has no extra_port")
    spec, native = found
    current = int_or_none(native)
    if current is None:
        return Clear(f"{spec.name} reads {native!r}")
    connection = ctx.info.connection
    fell_back = connection is not None and connection.port_kind == "port" and bool(connection.note)
    if current >= ctx.value(WANTED_SLOTS) and not fell_back:
        return Clear(f"{spec.name} {current} leaves room for monitoring and admins")
    proposed = max(ctx.value(WANTED_SLOTS), current + 2)
    why = (
        f"Poolscope polls on extra_port {ctx.server.extra_port}, which allows {current} connection(s):"
        " an admin (or the credential that applies changes) has no slot left and would wait in the very"
        " queue it needs to fix."
    )
    if fell_back and connection is not None:
        why = (
            f"Poolscope could not use extra_port {ctx.server.extra_port} and polls on the normal port, inside"
            f" the pool's queue ({connection.note}). {spec.name} is {current}."
        )
    return RecommendFinding(
        variable=spec.name,
        current=native,
        proposed=str(proposed),
        summary=f"Raise {spec.name} from {current} to {proposed}",
        description=why,
        evidence=[
            ev(spec.name, current),
            ev("extra_port", ctx.server.extra_port),
            ev("Poolscope polls on", "normal port (fell back)" if fell_back else "extra_port"),
        ],
        severity="warning" if fell_back or current <= 1 else "info",
        read_more=read_more(ctx, spec.name),
        chart_metrics=["poll_duration_ms"],
    )


RULE = RecommendRule(
    name="extra_max_connections", help="Admin port headroom", evaluate=evaluate, thresholds=(WANTED_SLOTS,)
)
