// One snapshot, shown with the target page's own charts and tables, fed from the snapshot instead of the live API.
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import type { History } from '../../api/history';
import { snapshotQuery } from '../../api/queries';
import type { SnapshotDocument } from '../../api/types';
import { isPoolOff } from '../../lib/domain';
import { fmtDateTimeZone, fmtNum, fmtSeconds, flavorLabel } from '../../lib/format';
import { Badge, Link, Notice, Panel } from '../../ui/ui';
import { GroupTable } from '../target/GroupTable';
import { QueueTable, SessionsTable, TransactionsTable, WaitsTable } from '../target/StateTables';
import { HeatmapPanel, TargetCharts } from '../target/TargetCharts';
import { stallLimitMs, stallLimitText } from '../target/stallLimit';
import { StalledBanner } from '../target/TargetStatus';
import { ThreadsPanel, VariablesTable } from '../target/ThreadsPanel';
import { SnapshotDownloads } from './SnapshotDownloads';

/** The snapshot's metric window as the target page's History. Exported for tests. */
export function snapshotHistory(doc: SnapshotDocument): History {
  return {
    series: doc.series,
    from: doc.window.from,
    to: doc.window.to,
    step_s: doc.step_s,
    resolution: 'raw',
  };
}

export function SnapshotView({ id }: { id: number }) {
  const q = useQuery(snapshotQuery(id));
  const doc = q.data ?? null;
  const error = q.error?.message ?? null;
  const history = useMemo(() => (doc ? snapshotHistory(doc) : null), [doc]);
  const retired = useMemo(
    () => new Set((doc?.state.groups ?? []).filter((g) => g.retired).map((g) => String(g.group_id))),
    [doc?.state.groups],
  );
  const crumbs = (
    <nav className="crumbs" aria-label="Breadcrumb">
      <Link href="/snapshots">Snapshots</Link> <span className="muted">/</span> <span>#{id}</span>
    </nav>
  );
  if (!doc || !history) {
    return (
      <div className="page" data-testid="snapshot-view">
        {crumbs}
        {error ? (
          <Notice tone="bad" title="Could not open the snapshot" testId="snapshot-error">
            {error}
          </Notice>
        ) : (
          <div className="loading">Loading snapshot #{id}…</div>
        )}
      </div>
    );
  }
  const { state, target_info: info } = doc;
  const server = info.server;
  const poolOff = isPoolOff(server);
  const coarse = server?.queue_time_mode === 'coarse';
  const processMissing = (state.missing_privileges ?? []).includes('PROCESS');
  const stallLimit = stallLimitMs(state.pool);
  const stallLimitShown = stallLimitText(state.pool);
  const captureErrors = Object.entries(doc.server_tables.errors ?? {});
  return (
    <div className="page" data-testid="snapshot-view">
      {crumbs}
      <div className="target-top">
        <div>
          <h1 data-testid="snapshot-title">{doc.title}</h1>
          <div className="muted small" data-testid="snapshot-meta">
            <Link href={`/targets/${encodeURIComponent(doc.target)}`}>{doc.target}</Link> · moment{' '}
            {fmtDateTimeZone(doc.moment_ts)} · window {fmtDateTimeZone(doc.window.from)} – {fmtDateTimeZone(doc.window.to)} ·{' '}
            {server ? `${flavorLabel(server.flavor)} ${server.version}` : 'server unknown'} ·{' '}
            <Badge tone={doc.trigger === 'alert' ? 'bad' : 'info'}>{doc.trigger}</Badge>{' '}
            {doc.window.complete ? null : <Badge tone="warn">window still collecting</Badge>}
            {doc.redacted_sql ? <Badge tone="muted">SQL literals redacted</Badge> : null}
          </div>
        </div>
        <div className="muted small">
          Download:{' '}
          <SnapshotDownloads
            id={id}
            moment={doc.moment_ts}
            archiveLabel="archive (JSON + offline report)"
            testId="snapshot-download-archive"
          />
        </div>
      </div>
      {captureErrors.length ? (
        <Notice tone="warn" title="Some server tables could not be read at the moment" testId="snapshot-capture-errors">
          {captureErrors.map(([k, v]) => `${k}: ${v}`).join('; ')}
        </Notice>
      ) : null}
      <StalledBanner groups={state.groups} />

      <div className="row-2">
        {!poolOff ? (
          <Panel
            title="Thread groups at the moment"
            testId="groups-panel"
            className="grow"
            extra={
              <span className="muted small">
                {state.variables?.thread_pool_size ? `thread_pool_size ${state.variables.thread_pool_size}` : ''}
                {stallLimitShown !== null ? ` · stall_limit ${stallLimitShown}` : ''}
              </span>
            }
          >
            <GroupTable groups={state.groups} stallLimitMs={stallLimit} coarse={coarse} />
          </Panel>
        ) : null}
        <Panel title="Threads & throughput" testId="threads-panel-wrap" className={poolOff ? 'grow' : ''}>
          <ThreadsPanel state={state} />
        </Panel>
      </div>

      <div className="section-head">
        <h2>Metrics over the window</h2>
      </div>
      {!poolOff ? <HeatmapPanel history={history} pollIntervalS={info.poll_interval_s ?? 1} retired={retired} /> : null}
      <TargetCharts
        history={history}
        server={server}
        ratios={state.ratios}
        poolOff={poolOff}
        loading={false}
        pollIntervalS={info.poll_interval_s ?? 1}
      />

      <div className="section-head">
        <h2>At the moment</h2>
      </div>
      {!poolOff ? (
        <Panel
          title="Queued connections"
          testId="queue-panel"
          extra={<span className="muted small">{fmtNum(state.queued_connections ?? state.queue.length)} waiting</span>}
        >
          <QueueTable queue={state.queue} coarse={coarse} processMissing={processMissing} total={state.queued_connections} />
        </Panel>
      ) : null}
      <Panel
        title="Open transactions (oldest first)"
        testId="trx-panel"
        extra={
          state.transactions ? (
            <span className="muted small">
              {fmtNum(state.transactions.count)} open · {fmtNum(state.transactions.lock_waits)} in lock wait · longest{' '}
              {fmtSeconds(state.transactions.longest_age_s)}
            </span>
          ) : null
        }
      >
        <TransactionsTable items={state.transactions?.items ?? []} />
      </Panel>
      <Panel title="Active sessions (PROCESSLIST)" testId="sessions-panel">
        <SessionsTable sessions={state.sessions ?? []} />
      </Panel>
      <div className="row-3">
        {!poolOff ? (
          <Panel title="Pool waits (THREAD_POOL_WAITS)" testId="waits-panel">
            <WaitsTable waits={state.waits} />
          </Panel>
        ) : null}
        <Panel title="Variables" testId="variables-panel">
          <VariablesTable variables={state.variables} />
        </Panel>
        <Panel title="Alerts in the window" testId="snapshot-alerts">
          {doc.alerts.length === 0 ? (
            <div className="empty">None.</div>
          ) : (
            <ul className="plain-list">
              {doc.alerts.map((a) => (
                <li key={a.id ?? a.fingerprint}>
                  <span className={`sev sev-${a.severity}`}>{a.severity}</span> {a.summary} ({fmtDateTimeZone(a.fired_at)}
                  {a.resolved_at ? ` – ${fmtDateTimeZone(a.resolved_at)}` : ', still firing'})
                </li>
              ))}
            </ul>
          )}
          <h3 className="small">Variable changes in the window</h3>
          {doc.variable_changes.length === 0 ? (
            <div className="empty small">None recorded.</div>
          ) : (
            <ul className="plain-list">
              {doc.variable_changes.map((c) => (
                <li key={`${c.at}-${c.variable}`}>
                  {fmtDateTimeZone(c.at)} {c.variable}: {c.old_value ?? '?'} → {c.new_value ?? '?'} {c.by ? `by ${c.by}` : ''}
                </li>
              ))}
            </ul>
          )}
        </Panel>
      </div>
      <Panel title="Global status and variables at the moment" testId="snapshot-globals">
        <details>
          <summary>{Object.keys(doc.server_tables.global_variables ?? {}).length} variables</summary>
          <VariablesTable variables={doc.server_tables.global_variables ?? {}} />
        </details>
        <details>
          <summary>{Object.keys(doc.server_tables.global_status ?? {}).length} status values</summary>
          <VariablesTable variables={doc.server_tables.global_status ?? {}} />
        </details>
      </Panel>
    </div>
  );
}
