// What every time chart draws besides its data, in HTML over and under the plot: alert and stall
// bands (a band's handle opens it), change markers whose labels stay inside the chart, the time
// zone, and the drag-to-zoom selection. One place maps time to pixels for all of them.
import { useState, type MouseEvent } from 'react';
import { fmtClock, fmtDateTimeZone, tzName } from '../lib/format';

/** A span of time drawn across the plot. */
export interface Band {
  id: string;
  kind: 'alert' | 'stall';
  from: number;
  /** null: still going (drawn to the chart's right edge). */
  to: number | null;
  label: string;
  severity?: 'critical' | 'warning' | 'info';
  /** The alert the URL names (?alert=): drawn stronger. */
  highlight?: boolean;
  /** The alert's id, for links and tests. */
  alertId?: number | null;
}

/** A moment drawn as a vertical line across the chart (e.g. a variable change from the audit log). */
export interface ChartMarker {
  id: string;
  t: number;
  label: string;
  /** The tone of the change: applied, reverted by hand, reverted by the guard. */
  tone: 'apply' | 'revert' | 'auto-revert';
  /** A short word beside the id (the change's verdict: "better", "load changed"), and its long form. */
  note?: { short: string; long: string };
}

/** Where the plot sits inside the chart box, in px. */
export interface PlotBox {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export interface LayerProps {
  plot: PlotBox;
  from: number;
  to: number;
  bands?: readonly Band[];
  markers?: readonly ChartMarker[];
  onBand?: (band: Band) => void;
  testId: string;
  /** Where the zone's name sits (px from the top): under the first time label by default. */
  tzTop?: number;
}

/** x of time `t` in the plot, clamped to it. */
function xOf(plot: PlotBox, from: number, to: number, t: number): number {
  const f = to > from ? (t - from) / (to - from) : 0;
  return plot.left + Math.max(0, Math.min(1, f)) * (plot.right - plot.left);
}

function bandSpan(plot: PlotBox, from: number, to: number, b: Band): { left: number; width: number } | null {
  const end = b.to ?? to;
  if (end < from || b.from > to) return null;
  const left = xOf(plot, from, to, b.from);
  return { left, width: Math.max(2, xOf(plot, from, to, end) - left) };
}

export function bandTitle(b: Band): string {
  return `${b.label} · ${fmtDateTimeZone(b.from)} – ${b.to === null ? 'now' : fmtClock(b.to)}`;
}

/** A handle's height and the step between lanes, in px (.chart-band-handle). */
const HANDLE_PX = 6;
const LANE_STEP = HANDLE_PX + 2;

/**
 * The lane of each band's handle, 0 on the plot's bottom edge, counting up: stalls in lane 0, alerts
 * above them, and an alert overlapping an earlier one a lane higher. Handles that overlap in time
 * never overlap on screen, so each can be clicked.
 */
export function handleLanes(bands: readonly Band[], to: number): Map<string, number> {
  const lanes = new Map<string, number>();
  const laneEnds: number[] = []; // per alert lane, where its last band ends
  for (const b of bands.toSorted((x, y) => x.from - y.from)) {
    if (b.kind === 'stall') {
      lanes.set(b.id, 0);
      continue;
    }
    let lane = laneEnds.findIndex((end) => end < b.from);
    if (lane < 0) lane = laneEnds.push(0) - 1;
    laneEnds[lane] = b.to ?? to;
    lanes.set(b.id, 1 + lane);
  }
  return lanes;
}

/** Under the data: band fills and marker lines. */
export function UnderLayer({ plot, from, to, bands, markers }: LayerProps) {
  return (
    <div className="chart-layer chart-under" aria-hidden="true">
      {(bands ?? []).map((b) => {
        const span = bandSpan(plot, from, to, b);
        if (!span) return null;
        return (
          <div
            key={b.id}
            className={`chart-band band-${b.kind} ${b.severity ? `band-${b.severity}` : ''} ${b.highlight ? 'band-highlight' : ''}`}
            style={{ left: span.left, width: span.width, top: plot.top, height: plot.bottom - plot.top }}
          />
        );
      })}
      {(markers ?? [])
        .filter((m) => m.t >= from && m.t <= to)
        .map((m) => (
          <div
            key={m.id}
            className={`chart-marker-line marker-${m.tone}`}
            style={{ left: xOf(plot, from, to, m.t), top: plot.top, height: plot.bottom - plot.top }}
          />
        ))}
    </div>
  );
}

/** Over the data: band handles (buttons), marker labels kept inside the box, the time zone. */
export function OverLayer({ plot, from, to, bands, markers, onBand, testId, tzTop }: LayerProps) {
  const width = plot.right - plot.left;
  const lanes = handleLanes(bands ?? [], to);
  return (
    <div className="chart-layer chart-over">
      {(bands ?? []).map((b) => {
        const span = bandSpan(plot, from, to, b);
        if (!span) return null;
        const title = bandTitle(b);
        const lane = lanes.get(b.id) ?? 0;
        return (
          <button
            key={b.id}
            type="button"
            className={`chart-band-handle band-${b.kind} ${b.severity ? `band-${b.severity}` : ''} ${b.highlight ? 'band-highlight' : ''}`}
            style={{ left: span.left, width: span.width, top: plot.bottom - HANDLE_PX - lane * LANE_STEP }}
            title={title}
            aria-label={title}
            data-testid={`${testId}-band`}
            data-kind={b.kind}
            data-lane={lane}
            data-alert={b.alertId ?? undefined}
            data-highlight={b.highlight ? 'true' : undefined}
            onClick={onBand ? () => onBand(b) : undefined}
            disabled={!onBand}
          />
        );
      })}
      {(markers ?? [])
        .filter((m) => m.t >= from && m.t <= to)
        .map((m) => {
          const x = xOf(plot, from, to, m.t);
          // The label hangs to the right of its line, or to the left in the right half: never cut off.
          const right = x > plot.left + width / 2;
          return (
            <span
              key={m.id}
              className={`chart-marker-label marker-${m.tone}`}
              style={right ? { right: `calc(100% - ${x}px)`, top: plot.top } : { left: x, top: plot.top }}
              title={`${m.label} · ${fmtDateTimeZone(m.t)}${m.note ? ` · ${m.note.long}` : ''}`}
              data-testid={`${testId}-marker`}
            >
              {m.id}
              {m.note ? <span className="chart-marker-note"> {m.note.short}</span> : null}
            </span>
          );
        })}
      {/* Under the first tick label, in the value axis's corner: the zone every time on this axis is in. */}
      <span className="chart-tz" style={{ left: 0, top: tzTop ?? plot.bottom + 18 }} data-testid={`${testId}-tz`}>
        {tzName((from + to) / 2)}
      </span>
    </div>
  );
}

/**
 * Drag across the plot to zoom to that span (`onZoom` gets epoch seconds). Handlers go on the chart
 * box, so the chart's own hover (its tooltip) keeps working under them.
 */
export function useDragZoom(plot: PlotBox, from: number, to: number, onZoom?: (from: number, to: number) => void) {
  const [drag, setDrag] = useState<{ x0: number; x1: number } | null>(null);
  // The handlers sit on the chart box itself: positions are read against it.
  const xIn = (e: MouseEvent<HTMLElement>) => {
    const x = e.clientX - e.currentTarget.getBoundingClientRect().left;
    return Math.max(plot.left, Math.min(plot.right, x));
  };
  const timeAt = (x: number) => from + ((x - plot.left) / Math.max(1, plot.right - plot.left)) * (to - from);
  if (!onZoom) return { handlers: {}, selection: null };
  return {
    selection:
      drag && Math.abs(drag.x1 - drag.x0) > 2 ? { left: Math.min(drag.x0, drag.x1), width: Math.abs(drag.x1 - drag.x0) } : null,
    handlers: {
      onMouseDown: (e: MouseEvent<HTMLElement>) => {
        if (e.button !== 0 || (e.target as HTMLElement).closest('button')) return;
        e.preventDefault();
        const x = xIn(e);
        setDrag({ x0: x, x1: x });
      },
      onMouseMove: (e: MouseEvent<HTMLElement>) => {
        if (drag) setDrag({ ...drag, x1: xIn(e) });
      },
      onMouseUp: (e: MouseEvent<HTMLElement>) => {
        if (!drag) return;
        const x1 = xIn(e);
        setDrag(null);
        // A click is not a zoom: a few pixels of hand shake are.
        if (Math.abs(x1 - drag.x0) > 5) onZoom(timeAt(Math.min(drag.x0, x1)), timeAt(Math.max(drag.x0, x1)));
      },
      onMouseLeave: () => setDrag(null),
    },
  };
}

export function Selection({ plot, selection }: { plot: PlotBox; selection: { left: number; width: number } | null }) {
  if (!selection) return null;
  return (
    <div
      className="chart-selection"
      style={{ left: selection.left, width: selection.width, top: plot.top, height: plot.bottom - plot.top }}
      data-testid="chart-selection"
    />
  );
}
