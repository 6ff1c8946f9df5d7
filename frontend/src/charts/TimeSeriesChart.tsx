// Generic time-series line chart (Recharts) with a fixed time domain, unit-aware axes/tooltips and an empty state;
// bands, change markers, the time zone and drag-to-zoom come from layers.tsx.
import { memo, useMemo, useState, type ReactNode } from 'react';
import { CartesianGrid, Line, LineChart, Tooltip, XAxis, YAxis } from 'recharts';
import type { Series } from '../api/types';
import { fmtAxisTime, fmtDateTimeZone } from '../lib/format';
import { useElementWidth } from '../lib/hooks';
import { toChartRows } from '../lib/series';
import { MetricHelp } from '../ui/Help';
import { Panel } from '../ui/ui';
import { OverLayer, Selection, UnderLayer, useDragZoom, type Band, type ChartMarker, type PlotBox } from './layers';

export type { Band, ChartMarker };

export interface LineSpec {
  /** Unique column key. */
  key: string;
  label: string;
  color: string;
  series: Series | undefined;
  axis?: 'left' | 'right';
  dashed?: boolean;
  /** The catalog's metric the line draws (its help is the chart's help). */
  metric?: string;
}

export interface TimeSeriesChartProps {
  title: ReactNode;
  testId: string;
  lines: LineSpec[];
  from: number;
  to: number;
  format: (v: number | null) => string;
  formatRight?: (v: number | null) => string;
  height?: number;
  note?: ReactNode;
  extra?: ReactNode;
  loading?: boolean;
  /** Consecutive points further apart than this (seconds) are drawn as a break, not bridged. */
  maxGap?: number;
  /** Smallest top of the left axis, so an all-zero ratio does not get a 0–400 % axis. */
  minYMax?: number;
  markers?: readonly ChartMarker[];
  /** Alert and stall spans, drawn across the plot. */
  bands?: readonly Band[];
  /** A band's handle was clicked (or pressed). */
  onBand?: (band: Band) => void;
  /** Dragged across the plot: the span chosen, epoch s. Without it the chart does not zoom. */
  onZoom?: (from: number, to: number) => void;
}

/** How many series colours the theme defines (--series-1 … in app.css). */
export const SERIES_COLORS = 12;

/** The i-th series colour, from the theme. */
export function seriesColor(i: number): string {
  return `var(--series-${(i % SERIES_COLORS) + 1})`;
}

const AXIS_STYLE = { fontSize: 11, fill: 'var(--chart-text)' };
const MARGIN_TOP = 6;
const LEFT_AXIS_W = 64;
const RIGHT_AXIS_W = 56;
/** Recharts' default height of the time axis. */
const X_AXIS_H = 30;

function TimeSeriesChartImpl({
  maxGap,
  minYMax,
  title,
  testId,
  lines,
  from,
  to,
  format,
  formatRight,
  height = 200,
  note,
  extra,
  loading,
  markers,
  bands,
  onBand,
  onZoom,
}: TimeSeriesChartProps) {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const [hidden, setHidden] = useState<ReadonlySet<string>>(new Set());
  // Series that never had a value (e.g. a ratio the backend leaves null in this regime) get no line or legend entry.
  const present = useMemo(() => lines.filter((l) => l.series?.points.some((p) => p[1] !== null)), [lines]);
  const rows = useMemo(() => {
    const keyBy = new Map(present.map((l) => [l.series!, l.key]));
    return toChartRows(
      present.map((l) => l.series!),
      (s) => keyBy.get(s)!,
      maxGap,
    );
  }, [present, maxGap]);
  const hasValues = present.length > 0;
  const hasRight = present.some((l) => l.axis === 'right');
  const span = to - from;
  const shownMarkers = useMemo(() => (markers ?? []).filter((m) => m.t >= from && m.t <= to), [markers, from, to]);
  const marginRight = hasRight ? 4 : 12;
  const plot: PlotBox = {
    left: LEFT_AXIS_W,
    right: width - marginRight - (hasRight ? RIGHT_AXIS_W : 0),
    top: MARGIN_TOP,
    bottom: height - X_AXIS_H,
  };
  const zoom = useDragZoom(plot, from, to, onZoom);
  const layers = { plot, from, to, bands, markers, onBand, testId };
  const metrics = lines.map((l) => l.metric ?? l.series?.metric ?? '').filter(Boolean);

  return (
    <Panel
      title={title}
      help={<MetricHelp metrics={metrics} label={typeof title === 'string' ? title : 'this chart'} testId={`${testId}-help`} />}
      testId={testId}
      extra={extra}
      className="chart-panel"
    >
      <div ref={ref} className={`chart-box ${onZoom ? 'chart-zoomable' : ''}`} style={{ height }} {...zoom.handlers}>
        {hasValues && width > 0 ? <UnderLayer {...layers} /> : null}
        {!hasValues ? (
          <div className="chart-empty" data-testid={`${testId}-empty`}>
            {loading ? 'Loading…' : 'No data in range'}
          </div>
        ) : width > 0 ? (
          <LineChart
            width={width}
            height={height}
            data={rows}
            margin={{ top: MARGIN_TOP, right: marginRight, bottom: 0, left: 0 }}
            className="chart-lines"
          >
            <CartesianGrid stroke="var(--chart-grid)" vertical={false} />
            <XAxis
              dataKey="t"
              type="number"
              domain={[from, to]}
              allowDataOverflow
              tickFormatter={(t: number) => fmtAxisTime(t, span)}
              tick={AXIS_STYLE}
              stroke="var(--chart-axis)"
              height={X_AXIS_H}
              minTickGap={40}
            />
            <YAxis
              yAxisId="left"
              tickFormatter={(v: number) => format(v)}
              tick={AXIS_STYLE}
              stroke="var(--chart-axis)"
              width={LEFT_AXIS_W}
              domain={minYMax ? [0, (max: number) => Math.max(max, minYMax)] : undefined}
            />
            {hasRight ? (
              <YAxis
                yAxisId="right"
                orientation="right"
                tickFormatter={(v: number) => (formatRight ?? format)(v)}
                tick={AXIS_STYLE}
                stroke="var(--chart-axis)"
                width={RIGHT_AXIS_W}
              />
            ) : null}
            <Tooltip
              isAnimationActive={false}
              contentStyle={{ background: 'var(--panel)', border: '1px solid var(--border-2)', fontSize: 12 }}
              labelFormatter={(t) => fmtDateTimeZone(Number(t))}
              formatter={(v, n, item) => {
                const spec = present.find((l) => l.key === item?.dataKey);
                const f = spec?.axis === 'right' ? (formatRight ?? format) : format;
                return [f(typeof v === 'number' ? v : null), n];
              }}
            />
            {present.map((l) => (
              <Line
                key={l.key}
                dataKey={l.key}
                name={l.label}
                yAxisId={l.axis ?? 'left'}
                stroke={l.color}
                strokeDasharray={l.dashed ? '4 3' : undefined}
                dot={false}
                strokeWidth={1.5}
                isAnimationActive={false}
                connectNulls={false}
                hide={hidden.has(l.key)}
                type="linear"
              />
            ))}
          </LineChart>
        ) : null}
        {hasValues && width > 0 ? <OverLayer {...layers} /> : null}
        <Selection plot={plot} selection={zoom.selection} />
      </div>
      {hasValues ? (
        <div className="legend" data-testid={`${testId}-legend`}>
          {present.map((l) => (
            <button
              key={l.key}
              type="button"
              className={`legend-item ${hidden.has(l.key) ? 'legend-off' : ''}`}
              aria-pressed={!hidden.has(l.key)}
              title="Click to hide/show"
              onClick={() => {
                const next = new Set(hidden);
                if (next.has(l.key)) next.delete(l.key);
                else next.add(l.key);
                setHidden(next);
              }}
            >
              <span className={`legend-swatch ${l.dashed ? 'legend-dashed' : ''}`} style={{ borderColor: l.color }} />
              {l.label}
              {l.axis === 'right' ? <span className="muted"> (right)</span> : null}
            </button>
          ))}
        </div>
      ) : null}
      {shownMarkers.length ? (
        <div className="chart-markers" data-testid={`${testId}-markers`}>
          {shownMarkers.map((m) => (
            <span key={m.id} className={`chart-marker-item marker-${m.tone}`} title={fmtDateTimeZone(m.t)}>
              {m.id} {m.label}
            </span>
          ))}
        </div>
      ) : null}
      {note ? <div className="chart-note">{note}</div> : null}
    </Panel>
  );
}

export const TimeSeriesChart = memo(TimeSeriesChartImpl);
