"""A self-contained HTML report of a snapshot: inline CSS and SVG charts, no script or network needed.

It opens from disk (file://) in any browser, e.g. from the archive a colleague mailed. It reads like
the target page: each line named and each axis in units from the metric catalog, round ticks, times
in the zone the viewer chose in the UI, a light and a dark theme (the system's, or switched in the
page by CSS alone: the report runs no script).
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from poolscope.metrics.catalog import CATALOG
from poolscope.schemas import SeriesOut
from poolscope.snapshots.document import SnapshotDocument
from poolscope.snapshots.report_holders import digest_colors, holders_timeline, incident_digests, legend

WIDTH, HEIGHT = 560, 170
PAD_L, PAD_R, PAD_T, PAD_B = 48, 10, 10, 22
# Series colours are the theme's (--s1 … in CSS below), so both themes keep their contrast.
SERIES_COLORS = 8

# (title, metrics); per-group metrics draw one line per group. Names and units come from the catalog.
CHARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Queue length per group", ("tp_group_queue_length",)),
    ("Stalled groups (1 = stalled)", ("tp_group_stalled",)),
    ("Active threads per group", ("tp_group_active_threads",)),
    ("Longest queue wait", ("tp_queue_wait_max_ms",)),
    ("Queued connections", ("tp_queued_connections",)),
    ("Threads", ("threads_connected", "threads_running", "pool_threads")),
    ("Throughput", ("qps", "tps")),
    ("Transactions", ("trx_active", "trx_lock_waits")),
    ("Poll duration", ("poll_duration_ms",)),
)

UNIT_WORDS = {
    "": "",
    "per_s": "per second",
    "ms": "ms",
    "s": "s",
    "us": "µs",
    "ratio": "share",
    "pages": "pages",
}

Theme = Literal["system", "light", "dark"]


@dataclass(frozen=True)
class ReportView:
    """How the reader sees times and colours: the zone the UI showed (its offset from UTC at the
    snapshot's moment, and its name there), and the theme chosen there."""

    tz_offset_min: int = 0
    tz_name: str = "UTC"
    theme: Theme = "system"

    def key(self) -> str:
        """Part of the report cache's key: one rendering per view."""
        return f"{self.tz_offset_min}|{self.tz_name}|{self.theme}"

    def time(self, ts: float, fmt: str) -> str:
        """A Unix time as wall-clock text in this view's zone; a time no calendar holds (a snapshot
        stored by an older version may have one) is shown as the number instead of failing."""
        try:
            zone = dt.timezone(dt.timedelta(minutes=self.tz_offset_min))
            return dt.datetime.fromtimestamp(ts, zone).strftime(fmt)
        except (OverflowError, ValueError, OSError):
            return f"{ts:g}"


UTC_VIEW = ReportView()

# The report's own policy, in the file so it holds when opened from disk: no script and no network at
# all; its inline CSS and SVG only. (frame-ancestors cannot be set from a meta tag: the HTTP answer
# adds it, api/snapshots.py.)
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

# Both themes in one sheet: light-dark() picks by the color-scheme in force, which is the system's
# unless a theme radio (in the header) is checked. The UI's own colours are the same in spirit.
CSS = """
:root{color-scheme:light dark;--bg:light-dark(#f6f7f9,#111217);--panel:light-dark(#fff,#181b21);
--text:light-dark(#111827,#d8dce3);--muted:light-dark(#4b5563,#9aa3b1);--rule:light-dark(#e5e7eb,#2a2f38);
--head:light-dark(#f3f4f6,#1f232b);--bad:light-dark(#b91c1c,#ff8591);--bad-bg:light-dark(#fee2e2,rgb(242 73 92 / .16));
--plot:light-dark(#fafafa,#14171c);--grid:light-dark(#e5e7eb,#262c36);--moment:light-dark(#b91c1c,#f2495c);
--s1:light-dark(#1f60c4,#5794f2);--s2:light-dark(#c4162a,#f2495c);--s3:light-dark(#37872d,#73bf69);
--s4:light-dark(#c4580a,#ff9830);--s5:light-dark(#8f3bb8,#b877d9);--s6:light-dark(#138787,#5ac8c8);
--s7:light-dark(#b8267a,#e880b8);--s8:light-dark(#4b5563,#aab2bd)}
:root:has(#theme-light:checked){color-scheme:light}:root:has(#theme-dark:checked){color-scheme:dark}
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;background:var(--bg);color:var(--text)}
header{background:light-dark(#111827,#0b0c0e);color:#fff;padding:14px 22px;display:flex;gap:16px;align-items:flex-start}
header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#cbd5e1}header .grow{flex:1}
.theme{font-size:12px;color:#cbd5e1;white-space:nowrap}.theme label{margin-left:8px}main{padding:16px 22px}
section{background:var(--panel);border:1px solid var(--rule);border-radius:8px;padding:12px 14px;margin:0 0 14px}
h2{font-size:16px;margin:0 0 8px}.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:12px}
figure{margin:0;min-width:0}figcaption{font-weight:600;margin:0 0 4px}figcaption small{font-weight:400;color:var(--muted)}
svg.chart{display:block;width:100%;height:auto}svg .plot{fill:var(--plot);stroke:var(--rule)}
svg .grid{stroke:var(--grid)}svg text{fill:var(--muted);font-size:10px}svg .moment{stroke:var(--moment)}
svg .empty{fill:var(--muted);font-size:12px}
table{border-collapse:collapse;width:100%;font-size:12.5px}th,td{border-bottom:1px solid var(--rule);padding:4px 6px;text-align:left;vertical-align:top}
th{background:var(--head);position:sticky;top:0}td.sql{font-family:ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;max-width:520px}
.bad{color:var(--bad);font-weight:600}.muted{color:var(--muted)}.legend span{margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
.kv{columns:3 280px}.kv div{break-inside:avoid}details summary{cursor:pointer;font-weight:600}
tr.stalled td{background:var(--bad-bg)}.tag{display:inline-block;padding:0 6px;border-radius:9px;background:var(--head);font-size:12px}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def utc(ts: float, fmt: str) -> str:
    """A Unix time as UTC text (file names, whatever the reader's zone)."""
    return UTC_VIEW.time(ts, fmt)


def _clock(ts: float | None, view: ReportView = UTC_VIEW) -> str:
    return "" if ts is None else f"{view.time(ts, '%Y-%m-%d %H:%M:%S')} {_e(view.tz_name)}"


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def friendly(metric: str) -> str:
    """A metric's name for a reader: its help in the catalog (the UI's help shows the same)."""
    known = CATALOG.get(metric)
    return known.help if known else metric


def unit_of(metrics: Sequence[str]) -> str:
    """The unit the catalog gives the chart's metrics ("" for counts, or when they differ)."""
    units = {CATALOG[m].unit for m in metrics if m in CATALOG}
    return UNIT_WORDS.get(units.pop(), "") if len(units) == 1 else ""


def _label(s: SeriesOut, several_metrics: bool) -> str:
    parts = [friendly(s.metric)] if several_metrics or not s.labels else []
    parts += [f"{k} {v}" for k, v in sorted(s.labels.items())]
    return " ".join(parts)


def nice_ticks(top: float) -> list[float]:
    """Round value ticks from 0 to at least `top`: steps of 1, 2 or 5 times a power of ten, at most
    five of them (a 0/1 series gets 0 and 1; 45.1 gets 0, 10 … 50)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / 4
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    if top <= 1 and step < 1 and float(top).is_integer():
        step = 1.0
    count = math.ceil(top / step - 1e-9)
    return [round(i * step, 10) for i in range(count + 1)]


TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def time_ticks(t0: float, t1: float, offset_s: float, most: int = 6) -> list[float]:
    """Round times inside [t0, t1] (whole minutes, five minutes, … on the reader's wall clock)."""
    span = max(t1 - t0, 1e-9)
    step = next((s for s in TIME_STEPS if span / s <= most), TIME_STEPS[-1])
    first = math.ceil((t0 + offset_s) / step) * step - offset_s
    return [first + i * step for i in range(int((t1 - first) // step) + 1)]


def thin(line: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """At most the lowest and the highest point of each pixel column, in their order: all a line
    on screen can show. A day of 1 s points then draws about as fast as a few minutes, spikes kept."""
    if len(line) <= 2 * WIDTH:
        return line
    out: list[tuple[float, float]] = []
    column = int(line[0][0])
    low = high = line[0]
    for point in line:
        if int(point[0]) != column:
            out.extend(_in_order(low, high))
            column, low, high = int(point[0]), point, point
        elif point[1] < low[1]:
            low = point
        elif point[1] > high[1]:
            high = point
    out.extend(_in_order(low, high))
    return out


def _in_order(a: tuple[float, float], b: tuple[float, float]) -> tuple[tuple[float, float], ...]:
    return (a,) if a is b else (a, b) if a[0] <= b[0] else (b, a)


def _fmt_tick(v: float) -> str:
    return f"{v:,.0f}" if v >= 1000 or float(v).is_integer() else f"{v:g}"


def svg_chart(
    title: str,
    lines: Sequence[SeriesOut],
    t0: float,
    t1: float,
    moment: float,
    unit: str,
    several: bool,
    view: ReportView = UTC_VIEW,
) -> str:
    values = [v for s in lines for _, v in s.points if v is not None]
    ticks = nice_ticks(max(values, default=0.0))
    top = ticks[-1]
    span = max(t1 - t0, 1e-9)
    plot_w, plot_h = WIDTH - PAD_L - PAD_R, HEIGHT - PAD_T - PAD_B

    def x(t: float) -> float:
        return PAD_L + (t - t0) / span * plot_w

    def y(v: float) -> float:
        return PAD_T + plot_h - v / top * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}"'
        f' role="img" aria-label="{_e(title)}" class="chart" data-title="{_e(title)}">',
        f'<rect class="plot" x="{PAD_L}" y="{PAD_T}" width="{plot_w}" height="{plot_h}"/>',
    ]
    for level in ticks:
        parts.append(
            f'<line class="grid" x1="{PAD_L}" x2="{PAD_L + plot_w}" y1="{y(level):.1f}" y2="{y(level):.1f}"/>'
        )
        parts.append(
            f'<text x="{PAD_L - 4}" y="{y(level) + 4:.1f}" text-anchor="end">{_e(_fmt_tick(level))}</text>'
        )
    fmt = "%H:%M:%S" if span < 600 else "%H:%M" if span < 2 * 86400 else "%m-%d %H:%M"
    for tick in time_ticks(t0, t1, view.tz_offset_min * 60):
        px = x(tick)
        anchor = "start" if px < PAD_L + 20 else "end" if px > WIDTH - PAD_R - 20 else "middle"
        parts.append(
            f'<text x="{px:.1f}" y="{HEIGHT - 6}" text-anchor="{anchor}">{view.time(tick, fmt)}</text>'
        )
    parts.append(f'<text x="2" y="{HEIGHT - 6}" text-anchor="start">{_e(view.tz_name)}</text>')
    if t0 <= moment <= t1:
        parts.append(
            f'<line class="moment" x1="{x(moment):.1f}" x2="{x(moment):.1f}" y1="{PAD_T}" y2="{PAD_T + plot_h}"'
            ' stroke-dasharray="4 3"><title>the moment</title></line>'
        )
    for i, s in enumerate(lines):
        color = f"var(--s{i % SERIES_COLORS + 1})"
        # Gaps stay gaps: a missing point (or a jump of more than 3 steps) starts a new segment.
        segments: list[list[tuple[float, float]]] = [[]]
        step = (s.points[1][0] - s.points[0][0]) if len(s.points) > 1 else 1.0
        gap, prev_t = 3 * max(step, 1e-9), s.points[0][0] if s.points else 0.0
        # x() and y() inline: this loop runs once per point, up to a million times.
        x0, kx, y0, ky = PAD_L - t0 * plot_w / span, plot_w / span, PAD_T + plot_h, plot_h / top
        current = segments[0]
        for t, v in s.points:
            if v is None or t - prev_t > gap:
                current = []
                segments.append(current)
            if v is not None:
                current.append((x0 + t * kx, y0 - v * ky))
            prev_t = t
        for seg in segments:
            if len(seg) == 1:
                parts.append(f'<circle cx="{seg[0][0]:.1f}" cy="{seg[0][1]:.1f}" r="1.8" fill="{color}"/>')
            elif seg:
                coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in thin(seg))
                parts.append(
                    f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{coords}">'
                    f"<title>{_e(_label(s, several))}</title></polyline>"
                )
    if not values:
        parts.append(
            f'<text class="empty" x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">no data</text>'
        )
    parts.append("</svg>")
    legend = "".join(
        f'<span><i style="background:var(--s{i % SERIES_COLORS + 1})"></i>{_e(_label(s, several))}</span>'
        for i, s in enumerate(lines)
    )
    suffix = f" <small>({_e(unit)})</small>" if unit else ""
    return f'<figure><figcaption>{_e(title)}{suffix}</figcaption>{"".join(parts)}<div class="legend">{legend}</div></figure>'


def _table(
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    sql_cols: frozenset[int] = frozenset(),
    row_class: Sequence[str] | None = None,
    test_id: str = "",
) -> str:
    body = []
    for n, row in enumerate(rows):
        cls = f' class="{row_class[n]}"' if row_class and row_class[n] else ""
        cells = "".join(
            f'<td class="sql">{_e(c)}</td>' if i in sql_cols else f"<td>{_e(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr{cls}>{cells}</tr>")
    if not body:
        return '<p class="muted">none</p>'
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    attr = f' data-testid="{test_id}"' if test_id else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _theme_switch(theme: Theme) -> str:
    """Radio buttons the CSS reads with :has(): switching needs no script (the report runs none)."""
    radios = "".join(
        f'<label><input type="radio" name="theme" id="theme-{t}"{" checked" if t == theme else ""}> {t}</label>'
        for t in ("system", "light", "dark")
    )
    return f'<div class="theme" role="radiogroup" aria-label="Theme">theme{radios}</div>'


def render_report(doc: SnapshotDocument, view: ReportView = UTC_VIEW) -> str:
    state, info = doc.state, doc.target_info
    server = info.server
    t0, t1 = doc.window.from_, doc.window.to
    by_metric: dict[str, list[SeriesOut]] = {}
    for s in doc.series:
        by_metric.setdefault(s.metric, []).append(s)
    charts = []
    for title, metrics in CHARTS:
        lines = [
            s for m in metrics for s in sorted(by_metric.get(m, []), key=lambda s: sorted(s.labels.items()))
        ]
        charts.append(
            svg_chart(title, lines, t0, t1, doc.moment_ts, unit_of(metrics), len(metrics) > 1, view)
        )

    groups = _table(
        [
            "group",
            "connections",
            "threads",
            "active",
            "standby",
            "queue",
            "oldest queued ms",
            "stalls/s",
            "stalled",
            "retired",
        ],
        [
            [
                g.group_id,
                g.connections,
                g.threads,
                g.active_threads,
                g.standby_threads,
                g.queue_length,
                _fmt(g.oldest_queued_ms),
                _fmt(g.stalls_per_s),
                g.stall_reason or "",
                "retired" if g.retired else "",
            ]
            for g in state.groups
        ],
        row_class=["stalled" if g.stalled else "" for g in state.groups],
        test_id="report-groups",
    )
    queue = _table(
        [
            "group",
            "pos",
            "priority",
            "connection",
            "waited ms",
            "user",
            "host",
            "db",
            "command",
            "last SQL seen",
            "seen s ago",
        ],
        [
            [
                q.group_id,
                q.position,
                q.priority,
                q.connection_id,
                _fmt(q.queueing_time_ms),
                q.user,
                q.host,
                q.db,
                q.command,
                q.info or q.last_sql,
                _fmt(q.last_sql_seen_s_ago),
            ]
            for q in state.queue
        ],
        sql_cols=frozenset({9}),
        test_id="report-queue",
    )
    trx_items = state.transactions.items if state.transactions else []
    trx = _table(
        ["trx", "state", "age s", "lock wait s", "thread", "user", "host", "db", "rows locked", "query"],
        [
            [
                t.trx_id,
                t.state,
                _fmt(t.age_s),
                _fmt(t.wait_s),
                t.thread_id,
                t.user,
                t.host,
                t.db,
                t.rows_locked,
                t.query,
            ]
            for t in trx_items
        ],
        sql_cols=frozenset({9}),
    )
    lock_waits = _table(
        ["requesting trx", "requested lock", "blocking trx", "blocking lock"],
        [
            [
                r.get("requesting_trx_id"),
                r.get("requested_lock_id"),
                r.get("blocking_trx_id"),
                r.get("blocking_lock_id"),
            ]
            for r in doc.server_tables.innodb_lock_waits
        ],
    )
    sessions = _table(
        ["id", "user", "host", "db", "command", "time s", "state", "info"],
        [[s.id, s.user, s.host, s.db, s.command, _fmt(s.time_s), s.state, s.info] for s in state.sessions],
        sql_cols=frozenset({7}),
    )
    processlist = _table(
        ["id", "user", "host", "db", "command", "time", "state", "info"],
        [
            [
                r.get("id"),
                r.get("user"),
                r.get("host"),
                r.get("db"),
                r.get("command"),
                r.get("time"),
                r.get("state"),
                r.get("info"),
            ]
            for r in doc.server_tables.processlist
        ],
        sql_cols=frozenset({7}),
    )
    waits = _table(["reason", "count", "per s"], [[w.reason, w.count, _fmt(w.per_s)] for w in state.waits])
    alerts = _table(
        ["rule", "severity", "status", "fired", "resolved", "summary"],
        [
            [a.rule, a.severity, a.status, _clock(a.fired_at, view), _clock(a.resolved_at, view), a.summary]
            for a in doc.alerts
        ],
    )
    changes = _table(
        ["at", "variable", "old", "new", "by"],
        [[_clock(c.at, view), c.variable, c.old_value, c.new_value, c.by] for c in doc.variable_changes],
    )
    raw_sections = "".join(
        f"<details><summary>{_e(name)} ({len(rows)} rows)</summary>"
        + _table(list(rows[0].keys()) if rows else [], [list(r.values()) for r in rows])
        + "</details>"
        for name, rows in (
            ("THREAD_POOL_GROUPS", doc.server_tables.thread_pool_groups),
            ("THREAD_POOL_QUEUES", doc.server_tables.thread_pool_queues),
            ("THREAD_POOL_STATS", doc.server_tables.thread_pool_stats),
            ("THREAD_POOL_WAITS", doc.server_tables.thread_pool_waits),
            ("INNODB_TRX", doc.server_tables.innodb_trx),
        )
    )
    digests = incident_digests(doc)
    colors = digest_colors(digests)
    timeline = holders_timeline(doc, colors, lambda t: view.time(t, "%H:%M:%S"))
    top_digests = _table(
        ["statement", "stalled s", "held s", "queued s", "max time s", "connections", "groups"],
        [
            [
                d.statement,
                _fmt(d.stalled_s),
                _fmt(d.held_s),
                _fmt(d.queued_s),
                _fmt(d.max_time_s),
                len(d.connections),
                ", ".join(sorted(d.groups)),
            ]
            for d in digests[:20]
        ],
        sql_cols=frozenset({0}),
        test_id="report-top-digests",
    )
    held_now = _table(
        [
            "group",
            "connection",
            "user@host",
            "time s",
            "state",
            "statement",
            "digest",
            "waits on",
            "blocked by",
        ],
        [
            [
                "pool" if g.group_id is None else g.group_id,
                h.connection_id,
                f"{h.user or '?'}@{h.host or '?'}",
                _fmt(h.time_s),
                h.state,
                h.info or h.digest_text,
                h.digest,
                h.waits_on,
                "; ".join(
                    f"{b.connection_id} ({b.user or '?'}): {b.statement or b.command or ''}"
                    for b in h.blockers
                ),
            ]
            for g in doc.holders
            for h in g.holders
        ],
        sql_cols=frozenset({5, 8}),
        test_id="report-holders",
    )
    recorded = doc.flight_recorder
    recorded_note = (
        f"{len(recorded)} seconds recorded, from {_clock(recorded[0].ts, view)} to {_clock(recorded[-1].ts, view)}."
        if recorded
        else "No flight recorder: the snapshot was not taken by a running poller."
    )
    kv = lambda d: "".join(f"<div><b>{_e(k)}</b> {_e(v)}</div>" for k, v in sorted(d.items()))  # noqa: E731
    errors = (
        '<p class="bad">Could not read: '
        + "; ".join(f"{_e(k)}: {_e(v)}" for k, v in doc.server_tables.errors.items())
        + "</p>"
        if doc.server_tables.errors
        else ""
    )
    stalled = [g.group_id for g in state.groups if g.stalled]
    server_line = (
        f"{_e(server.flavor)} {_e(server.version)} · thread_handling {_e(server.thread_handling)}"
        f" · queue times {_e(server.queue_time_mode or 'n/a')}"
        if server
        else "server unknown"
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="generator" content="Poolscope {_e(doc.poolscope_version)}">
<title>{_e(doc.title)} — Poolscope snapshot</title><style>{CSS}</style></head>
<body><header><div class="grow"><h1 data-testid="report-title">{_e(doc.title)}</h1>
<p>target <b>{_e(doc.target)}</b> · moment {_clock(doc.moment_ts, view)} · window {_clock(t0, view)} – {_clock(t1, view)}
{"" if doc.window.complete else " (window still open when exported)"} · {server_line}
{" · SQL literals redacted" if doc.redacted_sql else ""} · snapshot format v{doc.schema_version}</p></div>{_theme_switch(view.theme)}</header>
<main>
<section><h2>At the moment</h2>
<p>{len(state.groups)} groups{f', <span class="bad">stalled group{"s" if len(stalled) > 1 else ""}: {", ".join(map(str, stalled))}</span>' if stalled else ""}
 · {state.queued_connections if state.queued_connections is not None else len(state.queue)} queued connections
 · threads connected {_e(state.threads.connected)}, running {_e(state.threads.running)}, pool {_e(state.threads.pool_threads)}
 · qps {_fmt(state.throughput.qps)} · tps {_fmt(state.throughput.tps)}</p>{errors}</section>
<section><h2>Metrics over the window</h2><div class="charts" data-testid="report-charts">{"".join(charts)}</div></section>
<section><h2>Thread groups</h2>{groups}</section>
<section><h2>Who held the stalled groups at the moment</h2>{held_now}</section>
<section><h2>Who held the pool before the moment</h2><p class="muted">{recorded_note} Each second is coloured by the
statement of the group's longest-running holder; a red tick marks a stalled second.</p>{legend(digests, colors)}{timeline}
<h2>Top digests of the incident</h2><p class="muted">Worker-seconds held per statement shape over the seconds recorded
(stalled: in a stalled group); a queued request counts under the statement its connection ran last.</p>{top_digests}</section>
<section><h2>Queued connections</h2><p class="muted">A queued request is not read by the server until a worker takes it:
the SQL shown is the last statement Poolscope saw that connection run.</p>{queue}</section>
<section><h2>Transactions (INNODB_TRX)</h2>{trx}<h2>Lock waits</h2>{lock_waits}</section>
<section><h2>Active sessions</h2>{sessions}<details><summary>Full PROCESSLIST ({len(doc.server_tables.processlist)} rows)</summary>{processlist}</details></section>
<section><h2>Pool waits</h2>{waits}</section>
<section><h2>Alerts in the window</h2>{alerts}<h2>Variable changes in the window</h2>{changes}</section>
<section><h2>Server tables at the moment</h2>{raw_sections}</section>
<section><h2>Global variables</h2><details><summary>{len(doc.server_tables.global_variables)} variables</summary><div class="kv">{kv(doc.server_tables.global_variables)}</div></details>
<h2>Global status</h2><details><summary>{len(doc.server_tables.global_status)} values</summary><div class="kv">{kv(doc.server_tables.global_status)}</div></details></section>
</main></body></html>
"""
