"""A thread group is stalled: its STALLS counter rose, or its queue made no progress beyond the stall limit.

IS_STALLED alone is not used: it is set for an instant (0-2 of ~400 samples in a provoked stall). The verdict comes from
analysis/stalls.py (StallDetector), computed by the poller; this rule turns it into an alert.
"""

from __future__ import annotations

from poolscope.alerts.model import AlertContext, AlertFinding, AlertRule, PrometheusForm
from poolscope.analysis.digest import digest_of
from poolscope.flavors import stall_limit_ms
from poolscope.rules.base import Threshold
from poolscope.schemas import Holder

# The server-flag-only verdict is the instantaneous IS_STALLED: not enough on its own.
ALERTING_REASONS = {
    "stalls_counter": "STALLS counter rose",
    "no_dequeue": "no dequeue for longer than the stall limit",
}

# The stall verdict already needs the server's STALLS counter to rise or the queue to make no
# progress for longer than thread_pool_stall_limit, so it fires on the first poll that shows it
# (the 2 s promise); resolve_after_s keeps one clear poll from resolving it.
FOR_S = Threshold(
    name="stall_for_s", default=0.0, unit="s", help="group stalled for this long before firing", ge=0, le=3600
)


def _stall_limit(ctx: AlertContext) -> str:
    """thread_pool_stall_limit in ms whatever the flavor's unit (MySQL Enterprise counts 10 ms)."""
    assert ctx.state is not None
    pool = ctx.state.pool
    ms = pool.stall_limit_ms if pool is not None else None
    if ms is None:
        ms = stall_limit_ms(ctx.info.server, ctx.state.variables)
    if ms is not None:
        return f"{ms:g} ms"
    # A flavor Poolscope does not know: the raw value, without claiming a unit.
    return ctx.state.variables.get("thread_pool_stall_limit", "?")


def _top_holder(ctx: AlertContext, group_id: int) -> Holder | None:
    """The group's longest-running holder (the whole pool's where the server has no per-group view)."""
    assert ctx.state is not None
    for held in ctx.state.holders:
        if held.group_id in (group_id, None) and held.holders:
            return max(held.holders, key=lambda h: h.time_s or 0.0)
    return None


def _holder_notes(holder: Holder) -> tuple[str, dict[str, str]]:
    """The sentence naming the top holder (and its blocker), and the same as annotations. Statements
    are their shapes, literals replaced by ?: alert texts leave Poolscope."""
    who = f"connection {holder.connection_id} ({holder.user or '?'}@{holder.host or '?'})"
    shape = holder.digest_text or "(statement not read)"
    running = f"{holder.time_s:.0f} s" if holder.time_s is not None else "?"
    annotations = {
        "top_holder": f"{who}: {shape} for {running}",
        "top_holder_connection": str(holder.connection_id),
        "top_holder_digest": holder.digest or "",
    }
    sentence = f" Held longest by {who}: {shape} (digest {holder.digest or 'n/a'}) for {running}"
    blocker = next((b for b in holder.blockers if b.connection_id is not None), None)
    if blocker is not None:
        statement = digest_of(blocker.statement).text if blocker.statement else "idle in its transaction"
        named = f"connection {blocker.connection_id} ({blocker.user or '?'}): {statement}"
        annotations["top_holder_blocker"] = named
        sentence += f"; it waits on a {blocker.kind.replace('_', ' ')} held by {named}"
    return sentence + ".", annotations


def evaluate(ctx: AlertContext) -> list[AlertFinding]:
    assert ctx.state is not None
    stall_limit = _stall_limit(ctx)
    out = []
    for group in ctx.state.groups:
        reason = group.stall_reason
        if reason is None or reason not in ALERTING_REASONS:
            continue
        oldest = f"{group.oldest_queued_ms:.0f} ms" if group.oldest_queued_ms is not None else "n/a"
        top = _top_holder(ctx, group.group_id)
        held, annotations = _holder_notes(top) if top is not None else ("", {})
        out.append(
            AlertFinding(
                level="breach",
                group=str(group.group_id),
                value=group.stalls_per_s,
                summary=f"{ctx.target}: thread group {group.group_id} stalled",
                description=(
                    f"Group {group.group_id}: {ALERTING_REASONS[reason]}"
                    f" (stalls/s {group.stalls_per_s or 0:.2f}, queue length {group.queue_length},"
                    f" oldest queued {oldest}, active threads {group.active_threads}/{group.threads},"
                    f" thread_pool_stall_limit {stall_limit})."
                    " Long statements hold every worker of the group; queued requests wait."
                    f"{held}"
                ),
                labels={"stall_reason": str(reason)},
                annotations=annotations,
            )
        )
    return out


RULE = AlertRule(
    name="group_stalled",
    severity="critical",
    help="a thread group stalled (STALLS rose, or a non-empty queue had no dequeue for longer than thread_pool_stall_limit)",
    evaluate=evaluate,
    thresholds=(FOR_S,),
    for_duration=FOR_S,
    # api/prometheus.py exposes the same verdict per group: 1 for an alerting stall reason.
    prometheus=PrometheusForm(
        metric="poolscope_tp_group_stalled",
        by=("target", "group"),
        equals=1,
        summary="{{ $labels.target }}: thread group {{ $labels.group }} stalled",
        description=(
            "Group {{ $labels.group }} of {{ $labels.target }}: its STALLS counter rose, or its queue made"
            " no progress for longer than thread_pool_stall_limit. Long statements hold every worker of"
            " the group; queued requests wait."
        ),
    ),
)
