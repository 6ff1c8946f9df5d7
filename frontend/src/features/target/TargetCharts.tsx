// The target page's charts: per-group heatmap plus line charts for queue, queue time, threads, throughput, trx, ratios.
import { useMemo, useState } from 'react';
import { M } from '../../api/metrics.gen';
import type { Alert, Ratios, Series, ServerInfo } from '../../api/types';
import { Heatmap } from '../../charts/Heatmap';
import { alertBands, stallBands } from '../../charts/bands';
import { seriesColor, TimeSeriesChart, type Band, type ChartMarker, type LineSpec } from '../../charts/TimeSeriesChart';
import { fmtCompact, fmtMs, fmtPercent, fmtSeconds } from '../../lib/format';
import { hasCap, queueTimeMode } from '../../lib/domain';
import { seriesKey, seriesOf } from '../../lib/series';
import { MetricHelp } from '../../ui/Help';
import { Panel } from '../../ui/ui';
import type { History } from '../../api/history';

type Index = Map<string, Series>;

function indexSeries(series: readonly Series[]): Index {
  return new Map(series.map((s) => [seriesKey(s.metric, s.labels), s]));
}

function line(idx: Index, metric: string, label: string, color: string, extra: Partial<LineSpec> = {}): LineSpec {
  return { key: metric, label, color, series: idx.get(metric), metric, ...extra };
}

const fmtCount = (v: number | null) => fmtCompact(v);
const fmtRatio = (v: number | null) => fmtPercent(v, 1);
const fmtRateAxis = (v: number | null) => (v === null ? '—' : `${fmtCompact(v)}/s`);

/** The alert spans and stall spans of a target's history, for every one of its charts. */
export function useTargetBands(
  history: History,
  pollIntervalS: number,
  alerts: readonly Alert[] | undefined,
  highlight: number | null | undefined,
): Band[] {
  const stalled = useMemo(() => seriesOf(history.series, M.tp_group_stalled), [history.series]);
  const holdS = Math.max(history.step_s, pollIntervalS);
  return useMemo(
    () => [...stallBands(stalled, holdS), ...alertBands(alerts ?? [], highlight ?? null)],
    [stalled, holdS, alerts, highlight],
  );
}

export function HeatmapPanel({
  history,
  pollIntervalS,
  retired,
  markers,
  alerts,
  highlight,
  onZoom,
  onBand,
}: {
  history: History;
  pollIntervalS: number;
  retired: ReadonlySet<string>;
  markers?: readonly ChartMarker[];
  alerts?: readonly Alert[];
  highlight?: number | null;
  onZoom?: (from: number, to: number) => void;
  onBand?: (band: Band) => void;
}) {
  const bands = useTargetBands(history, pollIntervalS, alerts, highlight);
  const [metric, setMetric] = useState<'queue' | 'active'>('queue');
  const values = useMemo(
    () => seriesOf(history.series, metric === 'queue' ? M.tp_group_queue_length : M.tp_group_active_threads),
    [history.series, metric],
  );
  const stalled = useMemo(() => seriesOf(history.series, M.tp_group_stalled), [history.series]);
  return (
    <Panel
      title="Thread groups over time"
      help={
        <MetricHelp
          metrics={[metric === 'queue' ? M.tp_group_queue_length : M.tp_group_active_threads, M.tp_group_stalled]}
          label="the heatmap"
          testId="heatmap-panel-help"
          note="One row per thread group, one column per time bucket: the colour is the bucket's maximum, a red outline a stalled poll inside it."
        />
      }
      testId="heatmap-panel"
      extra={
        <div className="seg" role="group" aria-label="Heatmap metric">
          <button
            type="button"
            className={`seg-btn ${metric === 'queue' ? 'seg-active' : ''}`}
            aria-pressed={metric === 'queue'}
            onClick={() => setMetric('queue')}
            data-testid="heatmap-metric-queue"
          >
            queue length
          </button>
          <button
            type="button"
            className={`seg-btn ${metric === 'active' ? 'seg-active' : ''}`}
            aria-pressed={metric === 'active'}
            onClick={() => setMetric('active')}
            data-testid="heatmap-metric-active"
          >
            active threads
          </button>
        </div>
      }
    >
      <Heatmap
        values={values}
        stalled={stalled}
        from={history.from}
        to={history.to}
        valueLabel={metric === 'queue' ? 'queued' : 'active threads'}
        minBucketS={Math.max(pollIntervalS, history.step_s)}
        gapFloor={pollIntervalS * 2.5}
        retired={retired}
        bands={bands}
        markers={markers}
        onZoom={onZoom}
        onBand={onBand}
      />
    </Panel>
  );
}

export function TargetCharts({
  history,
  server,
  ratios,
  poolOff,
  loading,
  pollIntervalS,
  markers,
  alerts,
  highlight,
  onZoom,
  onBand,
}: {
  history: History;
  server: ServerInfo | null;
  ratios: Ratios | null;
  poolOff: boolean;
  loading: boolean;
  pollIntervalS: number;
  /** Variable changes from the audit log, drawn on every chart. */
  markers?: readonly ChartMarker[];
  /** The target's alerts in the range, drawn as bands on every chart. */
  alerts?: readonly Alert[];
  /** The alert the URL names, drawn stronger. */
  highlight?: number | null;
  onZoom?: (from: number, to: number) => void;
  onBand?: (band: Band) => void;
}) {
  const { from, to } = history;
  // Break lines across missing polls/buckets (target down, Poolscope stopped) instead of bridging them.
  const maxGap = Math.max(history.step_s, pollIntervalS) * 2.5;
  const idx = useMemo(() => indexSeries(history.series), [history.series]);
  const qm = queueTimeMode(server);

  const queueLines = useMemo<LineSpec[]>(
    () => [
      ...seriesOf(history.series, M.tp_group_queue_length).map((s, i) => ({
        key: `g${s.labels.group}`,
        label: `group ${s.labels.group}`,
        color: seriesColor(i),
        series: s,
        metric: M.tp_group_queue_length,
      })),
      line(idx, M.tp_queued_connections, 'queued connections (all)', 'var(--text)', { dashed: true }),
    ],
    [history.series, idx],
  );
  const waitLines = useMemo(
    () => [
      line(idx, M.tp_queue_wait_max_ms, 'max', 'var(--series-4)'),
      line(idx, M.tp_queue_wait_avg_ms, 'avg', 'var(--series-1)'),
    ],
    [idx],
  );
  const threadLines = useMemo(
    () => [
      line(idx, M.threads_connected, 'connected', 'var(--series-1)'),
      line(idx, M.threads_running, 'running', 'var(--series-2)'),
      line(idx, M.threads_cached, 'cached', 'var(--series-5)'),
      line(idx, M.pool_threads, 'pool threads', 'var(--series-4)'),
      line(idx, M.pool_idle_threads, 'pool idle', 'var(--series-3)', { dashed: true }),
      line(idx, M.sessions_active, 'active sessions', 'var(--series-11)', { dashed: true }),
    ],
    [idx],
  );
  const tputLines = useMemo(
    () => [line(idx, M.qps, 'QPS', 'var(--series-1)'), line(idx, M.tps, 'TPS', 'var(--series-2)', { axis: 'right' })],
    [idx],
  );
  const trxLines = useMemo(
    () => [
      line(idx, M.trx_active, 'active trx', 'var(--series-1)'),
      line(idx, M.trx_lock_waits, 'lock waits', 'var(--bad)'),
      line(idx, M.trx_longest_age_s, 'longest trx age', 'var(--series-4)', { axis: 'right' }),
    ],
    [idx],
  );
  const ratioLines = useMemo(
    () => [
      line(idx, M.thread_cache_miss_ratio, 'thread cache miss', 'var(--series-5)'),
      line(idx, M.buffer_pool_miss_ratio, 'buffer pool miss', 'var(--series-11)'),
    ],
    [idx],
  );
  const pollLines = useMemo(() => [line(idx, M.poll_duration_ms, 'poll duration', 'var(--series-6)')], [idx]);
  // Percona 8.4.10+: each poll's mean queue wait per statistic (µs, shown in ms); the server's own
  // avg/max cover its whole uptime, so they are not charted.
  const windowLines = useMemo<LineSpec[]>(
    () =>
      seriesOf(history.series, M.pool_stat_window_avg).map((s, i) => ({
        key: `window:${s.labels.stat}`,
        label: `${(s.labels.stat ?? '').includes('_hp_') ? 'high-priority' : 'normal'} queue`,
        color: seriesColor(i),
        series: (s.labels.stat ?? '').endsWith('_us')
          ? { ...s, points: s.points.map(([t, v]): [number, number | null] => [t, v === null ? null : v / 1000]) }
          : s,
      })),
    [history.series],
  );
  const depthLines = useMemo<LineSpec[]>(
    () => [
      ...seriesOf(history.series, M.pool_queue_requests).map((s, i) => ({
        key: `depth:${s.labels.queue}`,
        label: `${s.labels.queue === 'high' ? 'high-priority' : 'normal'} queue`,
        color: seriesColor(i),
        series: s,
      })),
      line(idx, M.pool_queue_starved, 'starved', 'var(--bad)', { dashed: true }),
    ],
    [history.series, idx],
  );
  const stalledRatioLines = useMemo(
    () => [line(idx, M.tp_stalled_query_ratio, 'stalled / executed statements', 'var(--bad)')],
    [idx],
  );
  const showQueueLength = hasCap(server, 'groups');
  // MariaDB: from THREAD_POOL_QUEUES; MySQL Enterprise: max of tp_thread_group_state.OLDEST_QUEUED.
  const showQueueTime = hasCap(server, 'queue_entries') || (hasCap(server, 'groups') && server?.pool_kind === 'mysql_enterprise');
  const mysqlPool = server?.pool_kind === 'mysql_enterprise' && !poolOff;

  const tcm = ratios?.thread_cache_miss;
  const bands = useTargetBands(history, pollIntervalS, alerts, highlight);
  // Every chart shares the range, the gap rule, the loading state, the marks and the navigation.
  const shared = { from, to, maxGap, loading, markers, bands, onZoom, onBand };
  return (
    <div className="chart-grid">
      {showQueueLength ? (
        <TimeSeriesChart
          title="Queue length per group"
          testId="chart-queue-length"
          lines={queueLines}
          {...shared}
          format={fmtCount}
        />
      ) : null}
      {showQueueTime ? (
        <>
          <TimeSeriesChart
            title={
              mysqlPool ? (
                'Oldest queued statement (tp_thread_group_state.OLDEST_QUEUED, max over groups)'
              ) : (
                <>
                  Queueing time <span className={`mode-tag mode-${qm.tone}`}>{server?.queue_time_mode ?? 'mode unknown'}</span>
                </>
              )
            }
            testId="chart-queue-time"
            lines={waitLines}
            {...shared}
            format={fmtMs}
            note={
              server?.queue_time_mode === 'coarse' ? (
                <span className="text-warn">
                  {qm.label}: values come from the timer tick and read far higher than the real wait.
                </span>
              ) : undefined
            }
          />
        </>
      ) : null}
      {hasCap(server, 'queue_depth') ? (
        <TimeSeriesChart
          title="Queued requests, whole pool (Percona Threadpool_requests_waiting_in_*)"
          testId="chart-queue-depth"
          lines={depthLines}
          {...shared}
          format={fmtCount}
          note="The server sums every group's queue: one figure for the whole pool, not one per group as MariaDB and MySQL Enterprise report."
        />
      ) : null}
      {hasCap(server, 'queue_wait_stats') ? (
        <TimeSeriesChart
          title="Queue wait per poll (Percona: mean of the requests dequeued since the last poll)"
          testId="chart-queue-wait-window"
          lines={windowLines}
          {...shared}
          format={fmtMs}
          note="Δ(avg·cnt) / Δcnt of Threadpool_average_*queue_wait_us, whose own avg and max cover the server's whole uptime. A mean, not the longest wait now (Percona reports none)."
        />
      ) : null}
      {mysqlPool ? (
        <TimeSeriesChart
          title="Stalled-statement ratio (tp_thread_group_stats)"
          testId="chart-stalled-ratio"
          lines={stalledRatioLines}
          {...shared}
          format={fmtRatio}
          minYMax={0.01}
          note="ΔSTALLED_QUERIES_EXECUTED / ΔQUERIES_EXECUTED per poll: statements that ran past thread_pool_stall_limit (10 ms units)."
        />
      ) : null}
      <TimeSeriesChart title="Threads" testId="chart-threads" lines={threadLines} {...shared} format={fmtCount} />
      <TimeSeriesChart
        title="Throughput (QPS left, TPS right)"
        testId="chart-throughput"
        lines={tputLines}
        {...shared}
        format={fmtRateAxis}
      />
      <TimeSeriesChart
        title="Transactions (age right)"
        testId="chart-transactions"
        lines={trxLines}
        {...shared}
        format={fmtCount}
        formatRight={fmtSeconds}
      />
      <TimeSeriesChart
        title="Cache miss ratios"
        testId="chart-cache-miss"
        lines={ratioLines}
        {...shared}
        format={fmtRatio}
        minYMax={0.01}
        note={
          tcm ? (
            <span data-testid="thread-cache-regime">
              Thread cache miss: {tcm.regime ? <strong>{tcm.regime}</strong> : 'regime unknown'}
              {tcm.note ? ` — ${tcm.note}` : ''}
            </span>
          ) : (
            'Thread cache miss = ΔThreads_created / ΔConnections; only meaningful for one-thread-per-connection traffic.'
          )
        }
      />
      <TimeSeriesChart
        title="Poolscope poll duration"
        testId="chart-poll-duration"
        lines={pollLines}
        {...shared}
        format={fmtMs}
        note="Rises when monitoring queries wait in the pool queue (normal port) — a stall symptom in itself."
      />
    </div>
  );
}
