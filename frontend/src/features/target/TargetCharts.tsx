// The target page's charts: per-group heatmap plus line charts for queue, queue time, threads, throughput, trx, ratios.
import { useMemo, useState } from 'react';
import { M } from '../../api/metrics.gen';
import type { Ratios, Series, ServerInfo } from '../../api/types';
import { Heatmap } from '../../charts/Heatmap';
import { groupColor, TimeSeriesChart, type ChartMarker, type LineSpec } from '../../charts/TimeSeriesChart';
import { fmtCompact, fmtMs, fmtPercent, fmtSeconds } from '../../lib/format';
import { hasCap, queueTimeMode } from '../../lib/domain';
import { seriesKey, seriesOf } from '../../lib/series';
import { Panel } from '../../ui/ui';
import type { History } from './useTargetData';

type Index = Map<string, Series>;

function indexSeries(series: readonly Series[]): Index {
  return new Map(series.map((s) => [seriesKey(s.metric, s.labels), s]));
}

function line(idx: Index, metric: string, label: string, color: string, extra: Partial<LineSpec> = {}): LineSpec {
  return { key: metric, label, color, series: idx.get(metric), ...extra };
}

const fmtCount = (v: number | null) => fmtCompact(v);
const fmtRatio = (v: number | null) => fmtPercent(v, 1);
const fmtRateAxis = (v: number | null) => (v === null ? '—' : `${fmtCompact(v)}/s`);

export function HeatmapPanel({
  history,
  pollIntervalS,
  retired,
}: {
  history: History;
  pollIntervalS: number;
  retired: ReadonlySet<string>;
}) {
  const [metric, setMetric] = useState<'queue' | 'active'>('queue');
  const values = useMemo(
    () => seriesOf(history.series, metric === 'queue' ? M.tp_group_queue_length : M.tp_group_active_threads),
    [history.series, metric],
  );
  const stalled = useMemo(() => seriesOf(history.series, M.tp_group_stalled), [history.series]);
  return (
    <Panel
      title="Thread groups over time"
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
}: {
  history: History;
  server: ServerInfo | null;
  ratios: Ratios | null;
  poolOff: boolean;
  loading: boolean;
  pollIntervalS: number;
  /** Variable changes from the audit log, drawn on every chart. */
  markers?: readonly ChartMarker[];
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
        color: groupColor(i),
        series: s,
      })),
      line(idx, M.tp_queued_connections, 'queued connections (all)', '#d8d9da', { dashed: true }),
    ],
    [history.series, idx],
  );
  const waitLines = useMemo(
    () => [line(idx, M.tp_queue_wait_max_ms, 'max', '#ff9830'), line(idx, M.tp_queue_wait_avg_ms, 'avg', '#5794f2')],
    [idx],
  );
  const threadLines = useMemo(
    () => [
      line(idx, M.threads_connected, 'connected', '#5794f2'),
      line(idx, M.threads_running, 'running', '#73bf69'),
      line(idx, M.threads_cached, 'cached', '#b877d9'),
      line(idx, M.pool_threads, 'pool threads', '#ff9830'),
      line(idx, M.pool_idle_threads, 'pool idle', '#f2cc0c', { dashed: true }),
      line(idx, M.sessions_active, 'active sessions', '#5ac8c8', { dashed: true }),
    ],
    [idx],
  );
  const tputLines = useMemo(
    () => [line(idx, M.qps, 'QPS', '#5794f2'), line(idx, M.tps, 'TPS', '#73bf69', { axis: 'right' })],
    [idx],
  );
  const trxLines = useMemo(
    () => [
      line(idx, M.trx_active, 'active trx', '#5794f2'),
      line(idx, M.trx_lock_waits, 'lock waits', '#f2495c'),
      line(idx, M.trx_longest_age_s, 'longest trx age', '#ff9830', { axis: 'right' }),
    ],
    [idx],
  );
  const ratioLines = useMemo(
    () => [
      line(idx, M.thread_cache_miss_ratio, 'thread cache miss', '#b877d9'),
      line(idx, M.buffer_pool_miss_ratio, 'buffer pool miss', '#5ac8c8'),
    ],
    [idx],
  );
  const pollLines = useMemo(() => [line(idx, M.poll_duration_ms, 'poll duration', '#8ab8ff')], [idx]);
  // Percona 8.4.10+: each poll's mean queue wait per statistic (µs, shown in ms); the server's own
  // avg/max cover its whole uptime, so they are not charted.
  const windowLines = useMemo<LineSpec[]>(
    () =>
      seriesOf(history.series, M.pool_stat_window_avg).map((s, i) => ({
        key: `window:${s.labels.stat}`,
        label: `${(s.labels.stat ?? '').includes('_hp_') ? 'high-priority' : 'normal'} queue`,
        color: groupColor(i),
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
        color: groupColor(i),
        series: s,
      })),
      line(idx, M.pool_queue_starved, 'starved', '#f2495c', { dashed: true }),
    ],
    [history.series, idx],
  );
  const stalledRatioLines = useMemo(
    () => [line(idx, M.tp_stalled_query_ratio, 'stalled / executed statements', '#f2495c')],
    [idx],
  );
  const showQueueLength = hasCap(server, 'groups');
  // MariaDB: from THREAD_POOL_QUEUES; MySQL Enterprise: max of tp_thread_group_state.OLDEST_QUEUED.
  const showQueueTime = hasCap(server, 'queue_entries') || (hasCap(server, 'groups') && server?.pool_kind === 'mysql_enterprise');
  const mysqlPool = server?.pool_kind === 'mysql_enterprise' && !poolOff;

  const tcm = ratios?.thread_cache_miss;
  // Every chart shares the range, the gap rule and the loading state.
  const shared = { from, to, maxGap, loading, markers };
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
