// Every read of the API as a TanStack Query: one key and one fetch per thing, shared by every page
// that shows it. The live feed (live.ts) writes polls and alert changes into the same cache.
import { QueryClient, queryOptions } from '@tanstack/react-query';
import { ApiError } from './client';
import { applyPolls, emptyHistory, fetchHistory, type History, type HistoryQuery } from './history';
import { recentPolls } from './recent';
import { LIVE_WINDOW_S, resolveRange, serializeRange, type TimeRange } from '../lib/range';
import { get } from './http';

export const keys = {
  health: ['health'] as const,
  store: ['store'] as const,
  targets: ['targets'] as const,
  overview: ['overview'] as const,
  /** Everything about one target starts with this (invalidating it refreshes the page). */
  target: (name: string) => ['target', name] as const,
  targetInfo: (name: string) => ['target', name, 'info'] as const,
  state: (name: string) => ['target', name, 'state'] as const,
  /** `range` is the URL's range (lib/range serializeRange); a live one is extended by the feed. */
  history: (name: string, range: string, points: number) => ['target', name, 'history', range, points] as const,
  liveHistory: (name: string) => ['target', name, 'history', '?range=live'] as const,
  /** Alerts of one target firing at some moment of a range: the charts' bands. */
  alertSpans: (name: string, range: string) => ['target', name, 'alert-spans', range] as const,
  /** Digests ranked by the time they held the pool over a range. */
  held: (name: string, range: string, sort: string) => ['target', name, 'held', range, sort] as const,
  recommendations: (name: string) => ['target', name, 'recommendations'] as const,
  audit: (name: string) => ['target', name, 'audit'] as const,
  alerts: ['alerts'] as const,
  current: ['alerts', 'current'] as const,
  alertHistory: ['alerts', 'history'] as const,
  deliveries: ['alerts', 'deliveries'] as const,
  snapshots: ['snapshots'] as const,
  snapshot: (id: number) => ['snapshots', id] as const,
};

/** Retry what may pass on a second try (no answer, not ready); never a refusal or a wrong name. */
export function shouldRetry(failures: number, err: unknown): boolean {
  if (failures >= 2) return false;
  return !(err instanceof ApiError) || err.kind === 'unreachable' || err.kind === 'not_ready';
}

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: shouldRetry,
        retryDelay: (n) => Math.min(1000 * 2 ** n, 5000),
        // A page refetches on its own cadence (or the live feed fills it): focus adds nothing.
        refetchOnWindowFocus: false,
        // A stall in a background tab must still reach its title ("(1 stalled) Poolscope").
        refetchIntervalInBackground: true,
        staleTime: 1000,
      },
    },
  });
}

const path = (name: string) => ({ path: { name } });

export const healthQuery = queryOptions({
  queryKey: keys.health,
  queryFn: ({ signal }) => get('/api/health', { signal }),
  staleTime: Infinity,
  retry: false,
});

/** Whether the store answers and takes writes, and what the pollers hold for it (GET /api/store). */
export const storeQuery = queryOptions({
  queryKey: keys.store,
  queryFn: ({ signal }) => get('/api/store', { signal }),
});

export const targetsQuery = queryOptions({
  queryKey: keys.targets,
  queryFn: ({ signal }) => get('/api/targets', { signal }),
});

export const overviewQuery = queryOptions({
  queryKey: keys.overview,
  queryFn: ({ signal }) => get('/api/overview', { signal }),
});

export const targetInfoQuery = (name: string) =>
  queryOptions({
    queryKey: keys.targetInfo(name),
    queryFn: ({ signal }) => get('/api/targets/{name}', { params: path(name), signal }),
  });

export const stateQuery = (name: string) =>
  queryOptions({
    queryKey: keys.state(name),
    queryFn: ({ signal }) => get('/api/targets/{name}/state', { params: path(name), signal }),
  });

/** The metrics a page charts, by how a bucket combines them (features/target/metrics.ts). */
export interface ChartedMetrics {
  max: readonly string[];
  avg: readonly string[];
}

/**
 * History over the URL's range, resolved at fetch time (a relative range moves with the clock). A
 * live history takes the polls the feed delivered while its answer was on its way, and when the
 * fetch fails it starts empty and fills from the feed (`failed` says why it is short).
 */
export const historyQuery = (name: string, range: TimeRange, points: number, charted: ChartedMetrics) =>
  queryOptions({
    queryKey: keys.history(name, serializeRange(range), points),
    queryFn: async ({ signal }): Promise<History> => {
      const q: HistoryQuery = {
        ...resolveRange(range, Date.now() / 1000),
        points,
        maxMetrics: charted.max,
        avgMetrics: charted.avg,
        liveWindowS: range.kind === 'live' ? LIVE_WINDOW_S : undefined,
      };
      try {
        return applyPolls(await fetchHistory(name, q, signal), recentPolls(name));
      } catch (err) {
        if (q.liveWindowS === undefined || signal.aborted) throw err;
        return applyPolls(emptyHistory(q, err instanceof Error ? err.message : String(err)), recentPolls(name));
      }
    },
    // Thousands of points, replaced or extended every second: comparing them deeply costs more than it saves.
    structuralSharing: false,
  });

/** Alerts of one target firing at some moment of the range: the charts draw them as bands. */
export const alertSpansQuery = (name: string, range: TimeRange) =>
  queryOptions({
    queryKey: keys.alertSpans(name, serializeRange(range)),
    queryFn: ({ signal }) => {
      const { from, to } = resolveRange(range, Date.now() / 1000);
      return get('/api/alerts/history', {
        params: { query: { target: name, from: Math.floor(from), to: Math.ceil(to), limit: 200 } },
        signal,
      });
    },
    // No alerting here (503) draws no band; the charts do not say so twice.
    retry: false,
  });

export const heldQuery = (name: string, range: TimeRange, sort: 'stalled' | 'held' | 'queued') =>
  queryOptions({
    queryKey: keys.held(name, serializeRange(range), sort),
    queryFn: ({ signal }) => {
      const { from, to } = resolveRange(range, Date.now() / 1000);
      return get('/api/targets/{name}/held', {
        params: { path: { name }, query: { from: Math.floor(from), to: Math.ceil(to), sort, limit: 50 } },
        signal,
      });
    },
  });

export const recommendationsQuery = (name: string) =>
  queryOptions({
    queryKey: keys.recommendations(name),
    queryFn: ({ signal }) => get('/api/targets/{name}/recommendations', { params: path(name), signal }),
  });

export const auditQuery = (name: string) =>
  queryOptions({
    queryKey: keys.audit(name),
    queryFn: ({ signal }) => get('/api/targets/{name}/audit', { params: path(name), signal }),
  });

export const currentAlertsQuery = queryOptions({
  queryKey: keys.current,
  queryFn: ({ signal }) => get('/api/alerts', { signal }),
});

export const alertHistoryQuery = queryOptions({
  queryKey: keys.alertHistory,
  queryFn: ({ signal }) => get('/api/alerts/history', { params: { query: { limit: 100 } }, signal }),
});

export const deliveriesQuery = queryOptions({
  queryKey: keys.deliveries,
  queryFn: ({ signal }) => get('/api/alerts/deliveries', { params: { query: { limit: 100 } }, signal }),
});

export const snapshotsQuery = queryOptions({
  queryKey: keys.snapshots,
  queryFn: ({ signal }) => get('/api/snapshots', { signal }),
});

export const snapshotQuery = (id: number) =>
  queryOptions({
    queryKey: keys.snapshot(id),
    queryFn: ({ signal }) => get('/api/snapshots/{snapshot_id}', { params: { path: { snapshot_id: id } }, signal }),
    staleTime: Infinity,
  });
