// Pure helpers for metric series: identity, appending live samples with window trimming, and pivoting to chart rows.
import type { Labels, Sample, Series } from '../api/types';

/** Stable identity of a series: metric plus labels in key order, Prometheus style. */
export function seriesKey(metric: string, labels: Labels): string {
  const keys = Object.keys(labels).toSorted();
  if (keys.length === 0) return metric;
  return `${metric}{${keys.map((k) => `${k}="${labels[k]}"`).join(',')}}`;
}

/** Drop points older than `cutoff`; series left empty are removed. Returns the same array when nothing changed. */
export function trimSeries(series: Series[], cutoff: number): Series[] {
  let changed = false;
  const out: Series[] = [];
  for (const s of series) {
    let i = 0;
    while (i < s.points.length && s.points[i][0] < cutoff) i++;
    if (i === 0) {
      out.push(s);
      continue;
    }
    changed = true;
    if (i < s.points.length) out.push({ ...s, points: s.points.slice(i) });
  }
  return changed ? out : series;
}

/**
 * Append one poll's samples (all stamped `ts`) to fetched series. Only metrics in `wanted` are kept;
 * a sample at or before a series' last point is ignored (the history fetch may already hold that poll);
 * new label sets (e.g. a group that just appeared) start new series. With `windowS`, points older than
 * `ts - windowS` are dropped, measured from the newest data rather than the browser clock, so clock skew
 * between browser and backend cannot empty the chart.
 */
export function appendSamples(
  series: Series[],
  samples: readonly Sample[],
  ts: number,
  wanted: ReadonlySet<string>,
  windowS?: number,
): Series[] {
  const index = new Map<string, number>();
  series.forEach((s, i) => index.set(seriesKey(s.metric, s.labels), i));
  const out = series.slice();
  for (const sample of samples) {
    if (!wanted.has(sample.metric)) continue;
    const key = seriesKey(sample.metric, sample.labels);
    const i = index.get(key);
    if (i === undefined) {
      index.set(key, out.length);
      out.push({ metric: sample.metric, labels: { ...sample.labels }, points: [[ts, sample.value]] });
      continue;
    }
    const s = out[i];
    const last = s.points.length ? s.points[s.points.length - 1][0] : -Infinity;
    if (ts <= last) continue;
    out[i] = { ...s, points: [...s.points, [ts, sample.value]] };
  }
  return windowS === undefined ? out : trimSeries(out, ts - windowS);
}

/** Series of one metric, sorted by their `group` label numerically (then by label key). */
export function seriesOf(series: readonly Series[], metric: string): Series[] {
  return series
    .filter((s) => s.metric === metric)
    .toSorted((a, b) => {
      const ga = Number(a.labels.group);
      const gb = Number(b.labels.group);
      if (Number.isFinite(ga) && Number.isFinite(gb) && ga !== gb) return ga - gb;
      return seriesKey(a.metric, a.labels).localeCompare(seriesKey(b.metric, b.labels));
    });
}

/**
 * Is the interval times[i] → times[i+1] a hole in the data (an outage) rather than the normal spacing?
 * Spacing is not uniform: one history answer can hold 1-minute rollups followed by raw 1 s polls, so
 * an interval counts as a gap only when it exceeds `floor` (≈ 2.5 poll intervals) and is 2.5× longer
 * than the interval before it (the one after, for the first interval).
 */
export function isGapAfter(times: readonly number[], i: number, floor: number): boolean {
  const dt = times[i + 1] - times[i];
  if (!(dt > floor)) return false;
  const ref = i > 0 ? times[i] - times[i - 1] : i + 2 < times.length ? times[i + 2] - times[i + 1] : null;
  if (ref === null) return false;
  return dt > 2.5 * ref;
}

export type ChartRow = { t: number } & Record<string, number | null>;

/**
 * Pivot series into Recharts rows keyed by time. `keyOf` names each series' column.
 * A series lacking a value at some row's time leaves that key absent, which Recharts draws as a gap
 * (all series of one poll share its timestamp, so this only happens where data is really missing).
 * The backend leaves empty buckets out, so with `maxGap` a blank row is inserted wherever consecutive
 * rows leave a hole (see isGapAfter; `maxGap` is its floor): otherwise the line would bridge an outage.
 */
export function toChartRows(series: readonly Series[], keyOf: (s: Series) => string, maxGap?: number): ChartRow[] {
  const rows = new Map<number, ChartRow>();
  for (const s of series) {
    const key = keyOf(s);
    for (const [t, v] of s.points) {
      let row = rows.get(t);
      if (!row) {
        row = { t } as ChartRow;
        rows.set(t, row);
      }
      row[key] = v;
    }
  }
  const sorted = [...rows.values()].toSorted((a, b) => a.t - b.t);
  if (!maxGap || maxGap <= 0) return sorted;
  const times = sorted.map((r) => r.t);
  const out: ChartRow[] = [];
  for (let i = 0; i < sorted.length; i++) {
    out.push(sorted[i]);
    if (i + 1 < sorted.length && isGapAfter(times, i, maxGap)) out.push({ t: (times[i] + times[i + 1]) / 2 } as ChartRow);
  }
  return out;
}

/** Latest timestamp across all series, or null when there are no points. */
export function latestTs(series: readonly Series[]): number | null {
  let best: number | null = null;
  for (const s of series) {
    const last = s.points[s.points.length - 1];
    if (last && (best === null || last[0] > best)) best = last[0];
  }
  return best;
}

/** True when no series carries a single non-null value. */
export function isEmpty(series: readonly Series[]): boolean {
  return !series.some((s) => s.points.some((p) => p[1] !== null));
}
