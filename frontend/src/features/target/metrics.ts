// The metric names the target page charts and heatmap read from /metrics (names per docs/API.md).

export const GROUP_METRICS = ['tp_group_queue_length', 'tp_group_active_threads', 'tp_group_stalled'] as const;

export const QUEUE_METRICS = ['tp_queue_wait_max_ms', 'tp_queue_wait_avg_ms', 'tp_queued_connections'] as const;

export const THREAD_METRICS = [
  'threads_connected',
  'threads_running',
  'threads_cached',
  'pool_threads',
  'pool_idle_threads',
  'sessions_active',
] as const;

export const THROUGHPUT_METRICS = ['qps', 'tps'] as const;

export const TRX_METRICS = ['trx_active', 'trx_lock_waits', 'trx_longest_age_s'] as const;

export const RATIO_METRICS = ['thread_cache_miss_ratio', 'buffer_pool_miss_ratio'] as const;

export const OWN_METRICS = ['poll_duration_ms'] as const;

/**
 * Flavor-specific: Percona 8.4.10+ queue depth (whole pool) and per-poll queue wait, MySQL Enterprise
 * stalled-statement ratio.
 */
export const FLAVOR_METRICS = [
  'pool_queue_requests',
  'pool_queue_starved',
  'pool_stat_window_avg',
  'tp_stalled_query_ratio',
] as const;

/** Fetched with agg=max: a queue spike or a single stalled poll must survive downsampling. */
export const MAX_AGG_METRICS: readonly string[] = [...GROUP_METRICS];

/** Fetched with the default agg=avg. */
export const AVG_AGG_METRICS: readonly string[] = [
  ...QUEUE_METRICS,
  ...THREAD_METRICS,
  ...THROUGHPUT_METRICS,
  ...TRX_METRICS,
  ...RATIO_METRICS,
  ...OWN_METRICS,
  ...FLAVOR_METRICS,
];

export const ALL_METRICS: readonly string[] = [...MAX_AGG_METRICS, ...AVG_AGG_METRICS];

export const ALL_METRICS_SET: ReadonlySet<string> = new Set(ALL_METRICS);

/** Non-live ranges ask for this many points per series (the backend downsamples to fit). */
export const HISTORY_POINTS = 600;

/** Live mode asks for about one point per chart pixel; charts sit two per row. */
export function livePoints(viewportWidth: number): number {
  return Math.max(60, Math.min(1200, Math.round(viewportWidth / 2)));
}
