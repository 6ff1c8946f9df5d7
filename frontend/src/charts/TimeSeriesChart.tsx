// Generic time-series line chart (Recharts) with a fixed time domain, unit-aware axes/tooltips and an empty state.
import { memo, useMemo, useState, type ReactNode } from 'react';
import { CartesianGrid, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from 'recharts';
import type { Series } from '../api/types';
import { fmtAxisTime, fmtDateTime } from '../lib/format';
import { useElementWidth } from '../lib/hooks';
import { toChartRows } from '../lib/series';
import { Panel } from '../ui/ui';

export interface LineSpec {
  /** Unique column key. */
  key: string;
  label: string;
  color: string;
  series: Series | undefined;
  axis?: 'left' | 'right';
  dashed?: boolean;
}

/** A moment drawn as a vertical line across the chart (e.g. a variable change from the audit log). */
export interface ChartMarker {
  id: string;
  t: number;
  label: string;
  color: string;
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
}

export const PALETTE = [
  '#5794f2',
  '#73bf69',
  '#f2cc0c',
  '#ff9830',
  '#b877d9',
  '#8ab8ff',
  '#96d98d',
  '#fade2a',
  '#ffb357',
  '#ca95e5',
  '#5ac8c8',
  '#e0752d',
];

export function groupColor(i: number): string {
  return PALETTE[i % PALETTE.length];
}

const AXIS_STYLE = { fontSize: 11, fill: '#9aa4b2' };

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

  return (
    <Panel title={title} testId={testId} extra={extra} className="chart-panel">
      <div ref={ref} className="chart-box" style={{ height }}>
        {!hasValues ? (
          <div className="chart-empty" data-testid={`${testId}-empty`}>
            {loading ? 'Loading…' : 'No data in range'}
          </div>
        ) : width > 0 ? (
          <LineChart width={width} height={height} data={rows} margin={{ top: 6, right: hasRight ? 4 : 12, bottom: 0, left: 0 }}>
            <CartesianGrid stroke="#262c36" vertical={false} />
            <XAxis
              dataKey="t"
              type="number"
              domain={[from, to]}
              allowDataOverflow
              tickFormatter={(t: number) => fmtAxisTime(t, span)}
              tick={AXIS_STYLE}
              stroke="#3a414d"
              minTickGap={40}
            />
            <YAxis
              yAxisId="left"
              tickFormatter={(v: number) => format(v)}
              tick={AXIS_STYLE}
              stroke="#3a414d"
              width={64}
              domain={minYMax ? [0, (max: number) => Math.max(max, minYMax)] : undefined}
            />
            {hasRight ? (
              <YAxis
                yAxisId="right"
                orientation="right"
                tickFormatter={(v: number) => (formatRight ?? format)(v)}
                tick={AXIS_STYLE}
                stroke="#3a414d"
                width={56}
              />
            ) : null}
            <Tooltip
              isAnimationActive={false}
              contentStyle={{ background: '#181b21', border: '1px solid #3a414d', fontSize: 12 }}
              labelFormatter={(t) => fmtDateTime(Number(t))}
              formatter={(v, n, item) => {
                const spec = present.find((l) => l.key === item?.dataKey);
                const f = spec?.axis === 'right' ? (formatRight ?? format) : format;
                return [f(typeof v === 'number' ? v : null), n];
              }}
            />
            {shownMarkers.map((m) => (
              <ReferenceLine
                key={m.id}
                x={m.t}
                yAxisId="left"
                stroke={m.color}
                strokeDasharray="3 3"
                ifOverflow="hidden"
                className="chart-marker"
                label={{ value: m.id, position: 'insideTopLeft', fill: m.color, fontSize: 10 }}
              />
            ))}
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
            <span key={m.id} className="chart-marker-item" style={{ color: m.color }} title={fmtDateTime(m.t)}>
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
