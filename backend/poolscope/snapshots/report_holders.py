"""The report's "who held the pool" part: the holders of each stalled group at the moment, a timeline
of who held each group second by second from the flight recorder, and the incident's top digests."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field

from poolscope.snapshots.document import SnapshotDocument

TIMELINE_W, LANE_H, PAD_L, PAD_T, PAD_B = 560, 18, 48, 6, 22
COLORED_DIGESTS = 7  # --s1 … --s7; the rest share --s8


@dataclass
class IncidentDigest:
    """One statement shape over the flight recorder's seconds."""

    digest: str
    statement: str
    stalled_s: float = 0.0  # worker-seconds held in a stalled group
    held_s: float = 0.0  # worker-seconds held in a group with a queue or stalled
    queued_s: float = 0.0  # request-seconds queued (under the statement the connection ran last)
    max_time_s: float = 0.0
    connections: set[int] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)


def _label(group: int | None) -> str:
    return "pool" if group is None else str(group)


def incident_digests(doc: SnapshotDocument) -> list[IncidentDigest]:
    """The recorder's digests, most stalled seconds first (then held, then queued)."""
    found: dict[str, IncidentDigest] = {}
    recorded = doc.flight_recorder
    for n, entry in enumerate(recorded):
        # Each entry stands for the time until the next one (1 s; the last one too).
        dt = min(recorded[n + 1].ts - entry.ts, 2.0) if n + 1 < len(recorded) else 1.0
        for group in entry.groups:
            for h in group.holders:
                key = h.digest or "unread"
                row = found.setdefault(key, IncidentDigest(key, h.statement or "(not read)"))
                row.held_s += dt
                row.stalled_s += dt if group.stalled else 0.0
                row.max_time_s = max(row.max_time_s, h.time_s or 0.0)
                row.connections.add(h.connection_id)
                row.groups.add(_label(group.group))
            for q in group.queued:
                key = q.digest or "unread"
                row = found.setdefault(
                    key, IncidentDigest(key, q.statement or "(queued request not read yet)")
                )
                row.queued_s += dt
                if q.connection_id is not None:
                    row.connections.add(q.connection_id)
                row.groups.add(_label(group.group))
    return sorted(found.values(), key=lambda d: (-d.stalled_s, -d.held_s, -d.queued_s, d.digest))


def holders_timeline(
    doc: SnapshotDocument, colors: dict[str, int], time_label: Callable[[float], str]
) -> str:
    """An SVG lane per group: each second coloured by the digest of its longest-running holder, a
    red tick under the seconds the group was stalled, the moment dashed."""
    recorded = doc.flight_recorder
    lanes = sorted({g.group for e in recorded for g in e.groups}, key=lambda g: -1 if g is None else g)
    if not recorded or not lanes:
        return '<p class="muted">No group had a queue or a stall in the seconds recorded.</p>'
    t0, t1 = recorded[0].ts, recorded[-1].ts + 1.0
    plot_w = TIMELINE_W - PAD_L - 10
    height = PAD_T + len(lanes) * (LANE_H + 6) + PAD_B

    def x(t: float) -> float:
        return PAD_L + (t - t0) / (t1 - t0) * plot_w

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{TIMELINE_W}" height="{height}"'
        f' viewBox="0 0 {TIMELINE_W} {height}" role="img" aria-label="Who held each group" class="chart"'
        ' data-testid="report-holders-timeline">'
    ]
    for i, lane in enumerate(lanes):
        y = PAD_T + i * (LANE_H + 6)
        parts.append(f'<rect class="plot" x="{PAD_L}" y="{y}" width="{plot_w}" height="{LANE_H}"/>')
        parts.append(f'<text x="{PAD_L - 4}" y="{y + 13}" text-anchor="end">group {_label(lane)}</text>')
    width = max(plot_w / (t1 - t0), 1.0)
    for entry in recorded:
        for group in entry.groups:
            y = PAD_T + lanes.index(group.group) * (LANE_H + 6)
            if group.holders:
                top = group.holders[0]
                color = colors.get(top.digest or "unread", COLORED_DIGESTS + 1)
                who = f"{top.connection_id} {top.statement or ''}"
                parts.append(
                    f'<rect x="{x(entry.ts):.1f}" y="{y}" width="{width:.1f}" height="{LANE_H - 4}"'
                    f' fill="var(--s{color})"><title>{_e(who)}</title></rect>'
                )
            if group.stalled:
                parts.append(
                    f'<rect x="{x(entry.ts):.1f}" y="{y + LANE_H - 3}" width="{width:.1f}" height="3"'
                    ' fill="var(--bad)"><title>stalled</title></rect>'
                )
    if t0 <= doc.moment_ts <= t1:
        mx = x(doc.moment_ts)
        parts.append(
            f'<line class="moment" x1="{mx:.1f}" x2="{mx:.1f}" y1="{PAD_T}" y2="{height - PAD_B}"'
            ' stroke-dasharray="4 3"><title>the moment</title></line>'
        )
    parts.append(f'<text x="{PAD_L}" y="{height - 6}">{_e(time_label(t0))}</text>')
    parts.append(f'<text x="{PAD_L + plot_w}" y="{height - 6}" text-anchor="end">{_e(time_label(t1))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def digest_colors(digests: list[IncidentDigest]) -> dict[str, int]:
    """The top digests' series colour (1-based), the same in the timeline and its legend."""
    return {d.digest: i + 1 for i, d in enumerate(digests[:COLORED_DIGESTS])}


def legend(digests: list[IncidentDigest], colors: dict[str, int]) -> str:
    items = "".join(
        f'<span><i style="background:var(--s{colors[d.digest]})"></i>{_e(d.statement)}</span>'
        for d in digests
        if d.digest in colors and d.held_s
    )
    return f'<div class="legend">{items}</div>'


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value))
