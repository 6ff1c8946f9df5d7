// Pure bucketing for the per-group heatmap: rows = groups, columns = equal time buckets.
import type { Point, Series } from '../api/types';
import { isGapAfter } from '../lib/series';

export interface HeatCell {
  /** Max of the metric inside the bucket (a queue that spiked must not be averaged away); null = no data. */
  value: number | null;
  /** Poolscope judged the group stalled at any poll inside the bucket. */
  stalled: boolean;
}

export interface HeatmapData {
  groups: string[];
  /** cells[row][col] for groups[row]. */
  cells: HeatCell[][];
  /** Start time of each bucket (epoch s). */
  starts: number[];
  bucketS: number;
  max: number;
}

function groupOrder(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  if (Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return a.localeCompare(b);
}

/** Bucket index for time `t`, or -1 when outside [from, to]. `to` itself lands in the last bucket. */
export function bucketIndex(t: number, from: number, to: number, buckets: number): number {
  if (t < from || t > to || to <= from) return -1;
  const i = Math.floor(((t - from) / (to - from)) * buckets);
  return Math.min(i, buckets - 1);
}

/**
 * Columns each point covers: a point holds until the next one (rollup minutes fill their minute),
 * unless the interval to the next point is a hole in the data (then just its own column).
 */
function* coveredColumns(points: readonly Point[], from: number, to: number, n: number, gapFloor: number) {
  const times = points.map((p) => p[0]);
  for (let i = 0; i < points.length; i++) {
    const [t, v] = points[i];
    if (v === null) continue;
    const holds = i + 1 < points.length && !isGapAfter(times, i, gapFloor);
    const end = holds ? Math.min(times[i + 1], to) : t;
    if (end < from || t > to) continue;
    const c0 = bucketIndex(Math.max(t, from), from, to, n);
    // The next point's own time belongs to the next point.
    const c1 = holds ? bucketIndex(Math.max(Math.max(t, from), end - 1e-6), from, to, n) : c0;
    for (let c = c0; c <= c1; c++) yield [c, v] as const;
  }
}

/** `gapFloor`: intervals up to this long (seconds) are never treated as holes; about 2.5 poll intervals. */
export function bucketHeatmap(
  values: readonly Series[],
  stalled: readonly Series[],
  from: number,
  to: number,
  buckets: number,
  gapFloor = 2.5,
): HeatmapData {
  const n = Math.max(1, Math.floor(buckets));
  const groupSet = new Set<string>();
  for (const s of values) groupSet.add(s.labels.group ?? '?');
  for (const s of stalled) groupSet.add(s.labels.group ?? '?');
  const groups = [...groupSet].toSorted(groupOrder);
  const row = new Map(groups.map((g, i) => [g, i]));
  const cells: HeatCell[][] = groups.map(() => Array.from({ length: n }, () => ({ value: null, stalled: false })));
  let max = 0;

  for (const s of values) {
    const r = row.get(s.labels.group ?? '?')!;
    for (const [c, v] of coveredColumns(s.points, from, to, n, gapFloor)) {
      const cell = cells[r][c];
      cell.value = cell.value === null ? v : Math.max(cell.value, v);
      if (v > max) max = v;
    }
  }
  for (const s of stalled) {
    const r = row.get(s.labels.group ?? '?')!;
    for (const [c, v] of coveredColumns(s.points, from, to, n, gapFloor)) {
      if (v) cells[r][c].stalled = true;
    }
  }

  const bucketS = (to - from) / n;
  const starts = Array.from({ length: n }, (_, i) => from + i * bucketS);
  return { groups, cells, starts, bucketS, max };
}

// A sequential scale between the theme's heat stops (--heat-0 … --heat-4 in app.css: low to high);
// red is reserved for stalls. Mixed by the browser, so the theme alone decides the colours.
const STOPS = [0, 0.25, 0.5, 0.75, 1];

/** Colour for a value against the scale max; zero is a dim cell so "idle" and "no data" stay distinguishable. */
export function heatColor(value: number | null, max: number): string {
  if (value === null) return 'transparent';
  if (value <= 0 || max <= 0) return 'var(--heat-zero)';
  // Any non-zero value gets a visible colour: one queued connection at 3 a.m. matters.
  const x = Math.max(0.15, Math.min(1, value / max));
  const i = Math.max(
    1,
    STOPS.findIndex((stop) => x <= stop),
  );
  const f = (x - STOPS[i - 1]) / (STOPS[i] - STOPS[i - 1]);
  if (f >= 1) return `var(--heat-${i})`;
  return `color-mix(in srgb, var(--heat-${i - 1}) ${Math.round((1 - f) * 100)}%, var(--heat-${i}))`;
}
