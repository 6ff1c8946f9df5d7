// A target's metric history over a time range, as the charts draw it: one answer of
// /api/targets/{name}/metrics per aggregation, merged, and (live) extended by each poll's samples.
import { get } from './http';
import type { PollEvent, Series } from './types';
import { appendSamples } from '../lib/series';

export interface History {
  series: Series[];
  from: number;
  to: number;
  step_s: number;
  resolution: string;
  /** Live: a window this long, moved along by each poll (applyPolls); absent for a fixed range. */
  liveWindowS?: number;
  /** The metrics asked for: a poll's other samples are not added. */
  metrics?: ReadonlySet<string>;
  /** Live only: the fetch failed (why), so this holds only what the feed brought since. */
  failed?: string;
}

export interface HistoryQuery {
  from: number;
  to: number;
  points: number;
  /** Fetched with agg=max, so a spike or one stalled poll survives downsampling. */
  maxMetrics: readonly string[];
  /** Fetched with the default agg=avg. */
  avgMetrics: readonly string[];
  liveWindowS?: number;
}

const clampPoints = (n: number) => Math.max(10, Math.min(5000, Math.round(n)));

function metrics(name: string, q: HistoryQuery, list: readonly string[], agg: 'max' | 'avg', signal?: AbortSignal) {
  return get('/api/targets/{name}/metrics', {
    params: {
      path: { name },
      query: {
        metric: [...list],
        from: Math.floor(q.from),
        to: Math.ceil(q.to),
        points: clampPoints(q.points),
        ...(agg === 'max' ? { agg } : {}),
      },
    },
    signal,
  });
}

export async function fetchHistory(name: string, q: HistoryQuery, signal?: AbortSignal): Promise<History> {
  const [maxRes, res] = await Promise.all([
    metrics(name, q, q.maxMetrics, 'max', signal),
    metrics(name, q, q.avgMetrics, 'avg', signal),
  ]);
  return {
    series: [...maxRes.series, ...res.series],
    from: res.from,
    to: res.to,
    step_s: res.step_s,
    resolution: res.resolution,
    liveWindowS: q.liveWindowS,
    metrics: new Set([...q.maxMetrics, ...q.avgMetrics]),
  };
}

/** A live history with nothing fetched: the feed fills it. */
export function emptyHistory(q: HistoryQuery, failed: string): History {
  return {
    series: [],
    from: q.from,
    to: q.to,
    step_s: 1,
    resolution: 'raw',
    liveWindowS: q.liveWindowS,
    metrics: new Set([...q.maxMetrics, ...q.avgMetrics]),
    failed,
  };
}

/** Fold poll events into a live history (a fixed range is left as it is). */
export function applyPolls(h: History, events: readonly PollEvent[]): History {
  if (h.liveWindowS === undefined || !events.length) return h;
  const wanted = h.metrics ?? new Set<string>();
  let { series, to } = h;
  for (const ev of events) {
    series = appendSamples(series, ev.samples, ev.ts, wanted, h.liveWindowS);
    to = Math.max(to, ev.ts);
  }
  return series === h.series && to === h.to ? h : { ...h, series, to, from: to - h.liveWindowS };
}
