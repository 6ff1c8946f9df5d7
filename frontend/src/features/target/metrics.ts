// The metric names the target page charts and heatmap read from /api/targets/{name}/metrics: names
// and default aggregation come from the backend's catalog (api/metrics.gen.ts, generated).
import { M, METRICS, type MetricName } from '../../api/metrics.gen';

export const GROUP_METRICS = [M.tp_group_queue_length, M.tp_group_active_threads, M.tp_group_stalled] as const;

export const QUEUE_METRICS = [M.tp_queue_wait_max_ms, M.tp_queue_wait_avg_ms, M.tp_queued_connections] as const;

export const THREAD_METRICS = [
  M.threads_connected,
  M.threads_running,
  M.threads_cached,
  M.pool_threads,
  M.pool_idle_threads,
  M.sessions_active,
] as const;

export const THROUGHPUT_METRICS = [M.qps, M.tps] as const;

export const TRX_METRICS = [M.trx_active, M.trx_lock_waits, M.trx_longest_age_s] as const;

export const RATIO_METRICS = [M.thread_cache_miss_ratio, M.buffer_pool_miss_ratio] as const;

export const OWN_METRICS = [M.poll_duration_ms] as const;

/**
 * Flavor-specific: Percona 8.4.10+ queue depth (whole pool) and per-poll queue wait, MySQL Enterprise
 * stalled-statement ratio.
 */
export const FLAVOR_METRICS = [
  M.pool_queue_requests,
  M.pool_queue_starved,
  M.pool_stat_window_avg,
  M.tp_stalled_query_ratio,
] as const;

const CHARTED: readonly MetricName[] = [
  ...GROUP_METRICS,
  ...QUEUE_METRICS,
  ...THREAD_METRICS,
  ...THROUGHPUT_METRICS,
  ...TRX_METRICS,
  ...RATIO_METRICS,
  ...OWN_METRICS,
  ...FLAVOR_METRICS,
];

/** Fetched with agg=max (the catalog's default for them): a queue spike or a single stalled poll must survive downsampling. */
export const MAX_AGG_METRICS: readonly string[] = CHARTED.filter((name) => METRICS[name].agg === 'max');

/** Fetched with the default agg=avg. */
export const AVG_AGG_METRICS: readonly string[] = CHARTED.filter((name) => METRICS[name].agg !== 'max');

export const ALL_METRICS: readonly string[] = [...MAX_AGG_METRICS, ...AVG_AGG_METRICS];

export const ALL_METRICS_SET: ReadonlySet<string> = new Set(ALL_METRICS);

/** Non-live ranges ask for this many points per series (the backend downsamples to fit). */
export const HISTORY_POINTS = 600;

/** Live mode asks for about one point per chart pixel; charts sit two per row. */
export function livePoints(viewportWidth: number): number {
  return Math.max(60, Math.min(1200, Math.round(viewportWidth / 2)));
}
