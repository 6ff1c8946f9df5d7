// Per-group heatmap in plain SVG: rows = groups, columns = time buckets, colour = value, red outline = stalled.
import { memo, useMemo } from 'react';
import type { Series } from '../api/types';
import { fmtAxisTime, fmtClock, fmtNum } from '../lib/format';
import { useElementWidth } from '../lib/hooks';
import { bucketHeatmap, heatColor } from './heatmap';
import { OverLayer, Selection, useDragZoom, type Band, type ChartMarker } from './layers';

export interface HeatmapProps {
  values: readonly Series[];
  stalled: readonly Series[];
  from: number;
  to: number;
  valueLabel: string;
  /** Don't make buckets finer than the poll interval (empty columns between polls look like gaps). */
  minBucketS?: number;
  /** Intervals up to this long (s) never count as holes in the data (≈ 2.5 poll intervals). */
  gapFloor?: number;
  /** Groups marked retired in the current state, labelled as such. */
  retired?: ReadonlySet<string>;
  bands?: readonly Band[];
  markers?: readonly ChartMarker[];
  onZoom?: (from: number, to: number) => void;
  onBand?: (band: Band) => void;
}

const LABEL_W = 56;
const AXIS_H = 18;
const MAX_BUCKETS = 150;
const MIN_CELL_PX = 6;

function HeatmapImpl({
  values,
  stalled,
  from,
  to,
  valueLabel,
  minBucketS = 1,
  gapFloor = 2.5,
  retired,
  bands,
  markers,
  onZoom,
  onBand,
}: HeatmapProps) {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const plotW = Math.max(100, (width || 800) - LABEL_W - 8);
  const buckets = Math.max(
    1,
    Math.min(MAX_BUCKETS, Math.floor(plotW / MIN_CELL_PX), Math.floor((to - from) / Math.max(minBucketS, 0.001))),
  );
  const data = useMemo(
    () => bucketHeatmap(values, stalled, from, to, buckets, gapFloor),
    [values, stalled, from, to, buckets, gapFloor],
  );
  const cellW = plotW / buckets;
  // Few groups get taller rows so the heatmap stays readable; many groups stay compact.
  const ROW_H = data.groups.length <= 8 ? 22 : data.groups.length <= 32 ? 14 : 8;
  const height = data.groups.length * ROW_H + AXIS_H;
  const span = to - from;
  const ticks = 5;
  const scaleMax = Math.max(1, data.max);
  const plot = { left: LABEL_W, right: LABEL_W + plotW, top: 0, bottom: height - AXIS_H };
  const zoom = useDragZoom(plot, from, to, onZoom);

  if (data.groups.length === 0) {
    return (
      <div ref={ref} className="chart-empty" data-testid="group-heatmap" data-empty="true">
        No per-group data in range
      </div>
    );
  }

  return (
    <div ref={ref} className="heatmap" data-testid="group-heatmap">
      <div
        className={`chart-box heatmap-box ${onZoom ? 'chart-zoomable' : ''}`}
        style={{ height, width: LABEL_W + plotW }}
        {...zoom.handlers}
      >
        <svg width={LABEL_W + plotW} height={height} role="img" aria-label={`${valueLabel} per thread group over time`}>
          {data.groups.map((g, r) => (
            <g key={g} data-group={g}>
              <text x={LABEL_W - 6} y={r * ROW_H + ROW_H / 2 + 4} textAnchor="end" className="heat-label">
                {retired?.has(g) ? `g${g} (r)` : `g${g}`}
              </text>
              {data.cells[r].map((cell, c) => {
                if (cell.value === null && !cell.stalled) return null;
                const x = LABEL_W + c * cellW;
                const y = r * ROW_H;
                return (
                  <g key={c}>
                    <rect
                      x={x + 0.5}
                      y={y + 0.5}
                      width={Math.max(1, cellW - 1)}
                      height={ROW_H - 1}
                      fill={cell.value === null ? 'var(--heat-empty)' : heatColor(cell.value, scaleMax)}
                      stroke={cell.stalled ? 'var(--bad)' : undefined}
                      strokeWidth={cell.stalled ? 2 : undefined}
                      className={cell.stalled ? 'heat-cell heat-stalled' : 'heat-cell'}
                      data-stalled={cell.stalled ? 'true' : undefined}
                    >
                      <title>
                        {`group ${g} · ${fmtClock(data.starts[c])}–${fmtClock(data.starts[c] + data.bucketS)}\n` +
                          `max ${valueLabel}: ${fmtNum(cell.value)}${cell.stalled ? '\nSTALLED' : ''}`}
                      </title>
                    </rect>
                    {cell.stalled ? (
                      <rect
                        x={x + 0.5}
                        y={y + 0.5}
                        width={Math.max(1, cellW - 1)}
                        height={3}
                        fill="var(--bad)"
                        pointerEvents="none"
                      />
                    ) : null}
                  </g>
                );
              })}
            </g>
          ))}
          {Array.from({ length: ticks }, (_, i) => {
            const t = from + (span * i) / (ticks - 1);
            const x = LABEL_W + (plotW * i) / (ticks - 1);
            return (
              <text
                key={i}
                x={x}
                y={height - 4}
                className="heat-axis"
                textAnchor={i === 0 ? 'start' : i === ticks - 1 ? 'end' : 'middle'}
              >
                {fmtAxisTime(t, span)}
              </text>
            );
          })}
        </svg>
        <OverLayer
          plot={plot}
          from={from}
          to={to}
          bands={bands}
          markers={markers}
          onBand={onBand}
          testId="group-heatmap"
          tzTop={plot.bottom + 3}
        />
        <Selection plot={plot} selection={zoom.selection} />
      </div>
      <div className="heat-legend">
        <span>0</span>
        <span
          className="heat-gradient"
          style={{
            background: `linear-gradient(to right, ${[0.15, 0.25, 0.5, 0.75, 1].map((x) => heatColor(x * scaleMax, scaleMax)).join(', ')})`,
          }}
        />
        <span>
          {fmtNum(data.max)} {valueLabel}
        </span>
        <span className="heat-stalled-key" /> stalled
        <span className="muted">· {fmtNum(data.bucketS, 0)} s per column, max per column</span>
      </div>
    </div>
  );
}

export const Heatmap = memo(HeatmapImpl);
