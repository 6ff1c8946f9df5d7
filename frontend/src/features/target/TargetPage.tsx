// Target page: everything about one server's thread pool, current state plus history over the URL's time range.
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo } from 'react';
import { ApiError } from '../../api/client';
import { keys } from '../../api/queries';
import { RangePicker } from '../../app/RangePicker';
import { useRange } from '../../app/useRange';
import { fmtAgo, fmtClock, fmtNum, fmtSeconds, fmtWholeSeconds } from '../../lib/format';
import { stallLimitMs, stallLimitText } from './stallLimit';
import { hasCap, isPoolOff, isStoreError, unreachableTitle, waitsSource } from '../../lib/domain';
import { useNow } from '../../lib/hooks';
import { fixedRange, rangeLabel, serializeRange } from '../../lib/range';
import { spanRange } from '../../charts/bands';
import type { Band } from '../../charts/layers';
import { navigate, useLocation } from '../../app/router';
import { isEmpty } from '../../lib/series';
import { Link, Notice, Panel } from '../../ui/ui';
import { AuditPanel } from '../recommend/AuditPanel';
import { RecommendationsPanel } from '../recommend/RecommendationsPanel';
import { auditMarkers, useAudit, useRecommendations, useVerdicts } from '../recommend/useChanges';
import { GroupTable } from './GroupTable';
import {
  QUEUE_CSV,
  QueueTable,
  SessionsTable,
  sortQueue,
  sortTransactions,
  TransactionsTable,
  TRX_CSV,
  WaitsTable,
} from './StateTables';
import { NowSummary } from './NowSummary';
import { CsvButton } from '../../ui/tables';
import { MetricHelp } from '../../ui/Help';
import { M } from '../../api/metrics.gen';
import { useAlerts } from '../../api/alerts';
import { HeatmapPanel, TargetCharts } from './TargetCharts';
import {
  CollectorHealth,
  CollectorsTable,
  DownNotice,
  GrantNeededNotice,
  PoolOffNotice,
  PrivilegeWarning,
  ServerNotes,
  StalledBanner,
  TargetHeader,
} from './TargetStatus';
import { PoolOffConcurrency, PoolSummaryPanel } from './PoolPanel';
import { THREADS_PANEL_METRICS, ThreadsPanel, VariablesTable } from './ThreadsPanel';
import { useTargetData } from './useTargetData';
import { HeldPanel } from '../held/HeldPanel';
import { HoldersStrip } from '../held/HoldersStrip';

const kindOf = (e: Error | null) => (e instanceof ApiError ? e.kind : e ? 'http' : null);

export function TargetPage({ name }: { name: string }) {
  const [range, setRange] = useRange();
  const { pathname, search } = useLocation();
  const qc = useQueryClient();
  const d = useTargetData(name, range);
  const now = useNow(1000);
  const { target, state, history } = d;
  const recs = useRecommendations(name);
  const audit = useAudit(name);
  const verdicts = useVerdicts(name, audit.data);
  const markers = useMemo(() => auditMarkers(audit.data, verdicts), [audit.data, verdicts]);
  const alertsNow = useAlerts();
  const targetAlerts = useMemo(() => [...alertsNow.active.values()].filter((a) => a.target === name), [alertsNow.active, name]);
  const highlight = Number(new URLSearchParams(search).get('alert')) || null;
  // A band opens its span (with time around it); an alert's band stays marked.
  const onBand = (b: Band) => {
    const q = new URLSearchParams(search);
    if (b.alertId != null) q.set('alert', String(b.alertId));
    else q.delete('alert');
    // A stall's or an alert's band opens who held the pool during it (HeldPanel comes into view).
    q.set('held', '1');
    navigate(pathname + serializeRange(spanRange(b.from, b.to, Date.now() / 1000), q.toString()));
  };
  const onZoom = (from: number, to: number) => setRange(fixedRange(from, to));
  const onChanged = () => {
    void qc.invalidateQueries({ queryKey: keys.audit(name) });
    void qc.invalidateQueries({ queryKey: keys.recommendations(name) });
  };

  const stalledCount = state?.groups.filter((g) => g.stalled).length ?? 0;
  useEffect(() => {
    document.title = `${stalledCount ? `(${stalledCount} stalled) ` : ''}${name} — Poolscope`;
    return () => {
      document.title = 'Poolscope';
    };
  }, [name, stalledCount]);

  const retired = useMemo(
    () => new Set((state?.groups ?? []).filter((g) => g.retired).map((g) => String(g.group_id))),
    [state?.groups],
  );

  const crumbs = (
    <nav className="crumbs" aria-label="Breadcrumb">
      <Link href="/">Overview</Link> <span className="muted">/</span> <span>{name}</span>
    </nav>
  );

  if (!target) {
    const k = kindOf(d.targetError);
    return (
      <div className="page" data-testid="target-page">
        {crumbs}
        {k === 'not_found' ? (
          <Notice tone="bad" title={`Unknown target “${name}”`} testId="target-not-found">
            {d.targetError?.message} — <Link href="/">back to the overview</Link>
          </Notice>
        ) : d.targetError ? (
          <Notice
            tone="bad"
            title={
              k === 'unreachable' || isStoreError(d.targetError) ? unreachableTitle(d.targetError) : 'Could not load the target'
            }
            testId="backend-error"
          >
            {d.targetError.message}.{k === 'unreachable' ? ' Is `poolscope serve` running?' : ''} Retrying every 5 s.
          </Notice>
        ) : (
          <div className="loading" data-testid="target-loading">
            Loading {name}…
          </div>
        )}
      </div>
    );
  }

  const server = target.server;
  const poolOff = isPoolOff(server);
  const missing = [...new Set([...(target.missing_privileges ?? []), ...(state?.missing_privileges ?? [])])];
  const processMissing = missing.some((p) => p.toUpperCase() === 'PROCESS');
  const collectors = state?.collectors?.length ? state.collectors : target.collectors;
  const coarse = server?.queue_time_mode === 'coarse';
  const stallLimit = stallLimitMs(state?.pool);
  const stallLimitShown = stallLimitText(state?.pool);
  const showGroups = hasCap(server, 'groups');
  const readError = d.targetError ?? d.stateError;
  const backendDown =
    kindOf(d.targetError) === 'unreachable' || kindOf(d.stateError) === 'unreachable' || isStoreError(readError);
  const trx = state?.transactions ?? null;
  const historyEmpty = !!history && !d.historyLoading && isEmpty(history.series);

  return (
    <div className="page" data-testid="target-page">
      {crumbs}
      <div className="target-top">
        <TargetHeader target={target} now={now} liveStatus={d.liveStatus} />
        <RangePicker
          key={serializeRange(range)}
          range={range}
          onChange={setRange}
          onRefresh={() => void qc.invalidateQueries({ queryKey: keys.target(name) })}
        />
      </div>

      <NowSummary target={target} state={state} alerts={targetAlerts} recs={recs.data} history={history?.series ?? []} />
      <HoldersStrip state={state} />
      {backendDown ? (
        <Notice tone="bad" title={unreachableTitle(readError)} testId="backend-error">
          {readError?.message} — showing the last data received; retrying.
        </Notice>
      ) : null}
      <DownNotice target={target} now={now} hasState={!!state} />
      <ServerNotes server={server} />
      {poolOff ? <PoolOffNotice server={server} /> : null}
      <GrantNeededNotice server={server} />
      {state ? <StalledBanner groups={state.groups} /> : null}
      <PrivilegeWarning missing={missing} />
      <CollectorHealth collectors={collectors} />

      {!state && d.stateError && !backendDown ? (
        <Notice tone={kindOf(d.stateError) === 'not_ready' ? 'info' : 'bad'} title="No current state" testId="state-error">
          {d.stateError.message}
        </Notice>
      ) : null}

      <div className="row-2">
        {showGroups ? (
          <Panel
            title="Thread groups"
            testId="groups-panel"
            extra={
              state ? (
                <span className="muted small">
                  poll at{' '}
                  <time data-testid="state-poll-time" dateTime={new Date(state.ts * 1000).toISOString()}>
                    {fmtClock(state.ts)}
                  </time>{' '}
                  ({fmtAgo(state.ts, now)})
                  {state.variables?.thread_pool_size ? ` · thread_pool_size ${state.variables.thread_pool_size}` : ''}
                  {stallLimitShown !== null ? ` · stall_limit ${stallLimitShown}` : ''}
                </span>
              ) : null
            }
            className="grow"
          >
            {state ? (
              <GroupTable groups={state.groups} stallLimitMs={stallLimit} coarse={coarse} />
            ) : (
              <div className="loading">Waiting for the first poll…</div>
            )}
          </Panel>
        ) : null}
        {!showGroups && state?.pool && server ? (
          <Panel title="Thread pool" testId="pool-panel" className="grow">
            <PoolSummaryPanel pool={state.pool} server={server} />
          </Panel>
        ) : null}
        {poolOff && state ? (
          <Panel title="Concurrency without a pool" testId="pool-off-panel" className="grow">
            <PoolOffConcurrency state={state} />
          </Panel>
        ) : null}
        <Panel
          title="Threads & throughput"
          help={<MetricHelp metrics={THREADS_PANEL_METRICS} label="threads and throughput" testId="threads-panel-help" />}
          testId="threads-panel-wrap"
        >
          {state ? <ThreadsPanel state={state} /> : <div className="loading">Waiting for the first poll…</div>}
        </Panel>
      </div>
      {showGroups && state?.pool && server ? (
        <Panel title="Thread pool" testId="pool-panel">
          <PoolSummaryPanel pool={state.pool} server={server} />
        </Panel>
      ) : null}

      <RecommendationsPanel target={name} data={recs.data} error={recs.error} now={now} onChanged={onChanged} />

      <div className="section-head">
        <h2>History</h2>
        <span className="muted small" data-testid="history-range">
          {rangeLabel(range)}
          {history
            ? ` · ${fmtClock(history.from)} – ${fmtClock(history.to)} · step ${fmtSeconds(history.step_s)} (${history.resolution})`
            : ''}
        </span>
      </div>
      {d.historyError ? (
        <Notice tone="warn" title="Metric history unavailable" testId="history-error">
          {d.historyError.message}
          {range.kind === 'live' ? ' — charts fill from live samples only.' : ''}
        </Notice>
      ) : null}
      {historyEmpty ? (
        <Notice tone="info" title="No data in range" testId="no-data">
          Poolscope stored no samples for {name} between {fmtClock(history.from)} and {fmtClock(history.to)}.
          {range.kind === 'live' ? ' New polls will appear here as they arrive.' : ' Try a wider range or Live.'}
        </Notice>
      ) : null}
      {history && !historyEmpty ? (
        <>
          {showGroups ? (
            <HeatmapPanel
              history={history}
              pollIntervalS={target.poll_interval_s ?? 1}
              retired={retired}
              markers={markers}
              alerts={d.alerts}
              highlight={highlight}
              onZoom={onZoom}
              onBand={onBand}
            />
          ) : null}
          <TargetCharts
            history={history}
            server={server}
            ratios={state?.ratios ?? null}
            poolOff={poolOff}
            loading={d.historyLoading}
            pollIntervalS={target.poll_interval_s ?? 1}
            markers={markers}
            alerts={d.alerts}
            highlight={highlight}
            onZoom={onZoom}
            onBand={onBand}
          />
        </>
      ) : d.historyLoading ? (
        <div className="loading" data-testid="history-loading">
          Loading history…
        </div>
      ) : null}

      {showGroups || state?.pool ? <HeldPanel name={name} range={range} /> : null}

      <AuditPanel target={name} entries={audit.data} error={audit.error} onChanged={onChanged} />

      <div className="section-head">
        <h2>Now</h2>
      </div>
      {hasCap(server, 'queue_entries') ? (
        <Panel
          title="Queued connections (longest waiters first)"
          help={<MetricHelp metrics={[M.tp_queued_connections, M.tp_queue_wait_max_ms]} label="queued connections" />}
          testId="queue-panel"
          extra={
            state ? (
              <span className="panel-tools">
                <span className="muted small" data-testid="queue-count">
                  {fmtNum(state.queued_connections ?? state.queue.length)} waiting
                </span>
                <CsvButton name={`${name}-queue`} rows={sortQueue(state.queue)} columns={QUEUE_CSV} testId="queue-csv" />
              </span>
            ) : null
          }
        >
          {state ? (
            <QueueTable queue={state.queue} coarse={coarse} processMissing={processMissing} total={state.queued_connections} />
          ) : (
            <div className="loading">…</div>
          )}
        </Panel>
      ) : null}
      <Panel
        title="Open transactions (lock waits, then oldest)"
        help={<MetricHelp metrics={[M.trx_active, M.trx_lock_waits, M.trx_longest_age_s]} label="open transactions" />}
        testId="trx-panel"
        extra={
          trx ? (
            <span className="panel-tools">
              <span className="muted small" data-testid="trx-summary">
                {fmtNum(trx.count)} open · {fmtNum(trx.lock_waits)} in lock wait · longest {fmtWholeSeconds(trx.longest_age_s)}
              </span>
              <CsvButton name={`${name}-transactions`} rows={sortTransactions(trx.items)} columns={TRX_CSV} testId="trx-csv" />
            </span>
          ) : null
        }
      >
        {processMissing && (!trx || trx.items.length === 0) ? (
          <div className="empty text-warn">Transactions need the PROCESS privilege (INNODB_TRX).</div>
        ) : state ? (
          <TransactionsTable items={trx?.items ?? []} minAgeS={trx?.listed_min_age_s ?? null} />
        ) : (
          <div className="loading">…</div>
        )}
      </Panel>
      {state?.sessions ? (
        <Panel
          title="Active sessions (PROCESSLIST, longest first)"
          help={<MetricHelp metrics={[M.sessions_active]} label="active sessions" />}
          testId="sessions-panel"
          extra={<span className="muted small">{fmtNum(state.sessions.length)} active</span>}
        >
          {processMissing ? (
            <div className="table-note text-warn">Without PROCESS only the monitoring user's own sessions are listed.</div>
          ) : null}
          <SessionsTable sessions={state.sessions} />
        </Panel>
      ) : null}
      <div className="row-3">
        {hasCap(server, 'waits') ? (
          <Panel title={`Pool waits (${waitsSource(server)})`} testId="waits-panel">
            {state ? <WaitsTable waits={state.waits} /> : <div className="loading">…</div>}
          </Panel>
        ) : null}
        <Panel title="Variables" testId="variables-panel">
          <VariablesTable variables={state?.variables ?? null} />
        </Panel>
        <Panel title="Collectors" testId="collectors-panel">
          <CollectorsTable collectors={collectors} />
        </Panel>
      </div>
    </div>
  );
}
