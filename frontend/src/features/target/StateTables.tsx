// Tables for the current poll: queued connections, open transactions and wait reasons.
import { useState } from 'react';
import type { QueuedConnection, Session, TransactionItem, WaitRow } from '../../api/types';
import { DASH, fmtMs, fmtNum, fmtRate, fmtSeconds } from '../../lib/format';
import { SqlText } from '../../ui/ui';

export const QUEUE_ROW_LIMIT = 200;

/**
 * A queued request has not been read yet, so PROCESSLIST usually shows the connection as Sleep with
 * no SQL; the backend then supplies the last statement it saw that connection run.
 */
function QueuedSql({ q }: { q: QueuedConnection }) {
  if (q.info) return <SqlText sql={q.info} />;
  if (q.last_sql) {
    return (
      <span title="Not the queued request (unread until dequeued): the last statement Poolscope saw this connection run.">
        <span className="muted small">
          last seen
          {q.last_sql_seen_s_ago !== null && q.last_sql_seen_s_ago !== undefined
            ? ` ${fmtSeconds(q.last_sql_seen_s_ago)} ago`
            : ''}
          :{' '}
        </span>
        <SqlText sql={q.last_sql} />
      </span>
    );
  }
  return <span className="muted">{DASH}</span>;
}

const txt = (v: string | null | undefined) =>
  v === null || v === undefined || v === '' ? <span className="muted">{DASH}</span> : v;

export function QueueTable({
  queue,
  coarse,
  processMissing,
  total,
}: {
  queue: QueuedConnection[];
  coarse: boolean;
  processMissing: boolean;
  /** All queued connections, when the backend sent only the longest waiters. */
  total?: number | null;
}) {
  const [showAll, setShowAll] = useState(false);
  // Longest waiters first (what the backend keeps when it truncates), then queue order.
  const sorted = queue.toSorted(
    (a, b) => (b.queueing_time_ms ?? 0) - (a.queueing_time_ms ?? 0) || a.group_id - b.group_id || a.position - b.position,
  );
  // A real incident can queue thousands of connections; rendering them all would freeze the page.
  const rows = showAll ? sorted : sorted.slice(0, QUEUE_ROW_LIMIT);
  return (
    <div className="table-wrap">
      {processMissing ? (
        <div className="table-note text-warn">
          PROCESS privilege missing: user, host, db and SQL of other users' connections are not visible.
        </div>
      ) : null}
      <table className="grid" data-testid="queue-table">
        <thead>
          <tr>
            <th className="num">group</th>
            <th className="num">pos</th>
            <th>prio</th>
            <th className="num">conn id</th>
            <th
              className="num"
              title={coarse ? 'Coarse mode: enqueue time from the timer tick, overstated' : 'Exact queueing time'}
            >
              waiting{coarse ? ' (coarse)' : ''}
            </th>
            <th>user</th>
            <th>host</th>
            <th>db</th>
            <th>command</th>
            <th className="num">time</th>
            <th className="sql-col">SQL</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={11} className="empty-cell" data-testid="queue-empty">
                No connections waiting in the pool queues.
              </td>
            </tr>
          ) : (
            rows.map((q) => (
              <tr key={`${q.group_id}-${q.connection_id}-${q.position}`} data-testid={`queue-row-${q.connection_id}`}>
                <td className="num">{q.group_id}</td>
                <td className="num">{q.position}</td>
                <td className={q.priority?.toLowerCase() === 'high' ? 'text-info' : ''}>{txt(q.priority?.toUpperCase())}</td>
                <td className="num mono">{q.connection_id}</td>
                <td
                  className={`num ${(q.queueing_time_ms ?? 0) >= 1000 ? 'cell-bad' : (q.queueing_time_ms ?? 0) >= 100 ? 'cell-hot' : ''}`}
                >
                  {fmtMs(q.queueing_time_ms)}
                </td>
                <td>{txt(q.user)}</td>
                <td className="mono">{txt(q.host)}</td>
                <td>{txt(q.db)}</td>
                <td>{txt(q.command)}</td>
                <td className="num">{q.time_s === null ? DASH : fmtSeconds(q.time_s)}</td>
                <td className="sql-col">
                  <QueuedSql q={q} />
                </td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      {total && total > queue.length ? (
        <div className="table-note" data-testid="queue-backend-truncated">
          {fmtNum(total)} connections are queued; the backend lists the {fmtNum(queue.length)} longest waiters.
        </div>
      ) : null}
      {sorted.length > rows.length ? (
        <div className="table-note" data-testid="queue-truncated">
          Showing the {rows.length} longest waiters of {sorted.length}.{' '}
          <button type="button" className="link-btn" onClick={() => setShowAll(true)}>
            show all
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** `minAgeS`: the backend lists transactions open at least this long, or in lock wait. */
export function TransactionsTable({ items, minAgeS = null }: { items: TransactionItem[]; minAgeS?: number | null }) {
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="trx-table">
        <thead>
          <tr>
            <th>trx id</th>
            <th>state</th>
            <th className="num">age</th>
            <th className="num">lock wait</th>
            <th className="num">thread</th>
            <th>user</th>
            <th>host</th>
            <th>db</th>
            <th className="num">rows locked</th>
            <th className="num">rows modified</th>
            <th className="sql-col">current SQL</th>
          </tr>
        </thead>
        <tbody>
          {items.length === 0 ? (
            <tr>
              <td colSpan={11} className="empty-cell" data-testid="trx-empty">
                {minAgeS
                  ? `No transaction open for ${fmtSeconds(minAgeS)} or more, or waiting for a lock.`
                  : 'No open InnoDB transactions.'}
              </td>
            </tr>
          ) : (
            items.map((t) => (
              // Read-only transactions all report trx_id 0; a connection has one transaction at a time.
              <tr
                key={`${t.thread_id ?? ''}-${t.trx_id}`}
                className={t.state === 'LOCK WAIT' ? 'row-warn' : ''}
                data-testid={`trx-row-${t.trx_id}`}
              >
                <td className="mono">{t.trx_id}</td>
                <td className={t.state === 'LOCK WAIT' ? 'text-bad' : ''}>{txt(t.state)}</td>
                <td className={`num ${(t.age_s ?? 0) >= 60 ? 'cell-bad' : (t.age_s ?? 0) >= 5 ? 'cell-hot' : ''}`}>
                  {fmtSeconds(t.age_s)}
                </td>
                <td className="num">{t.wait_s === null ? DASH : fmtSeconds(t.wait_s)}</td>
                <td className="num mono">{t.thread_id ?? DASH}</td>
                <td>{txt(t.user)}</td>
                <td className="mono">{txt(t.host)}</td>
                <td>{txt(t.db)}</td>
                <td className="num">{fmtNum(t.rows_locked)}</td>
                <td className="num">{fmtNum(t.rows_modified)}</td>
                <td className="sql-col">
                  <SqlText sql={t.query} />
                </td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      {minAgeS ? (
        <div className="table-note" data-testid="trx-listed-note">
          Listed: transactions open {fmtSeconds(minAgeS)} or more, or waiting for a lock. The counts above cover all.
        </div>
      ) : null}
    </div>
  );
}

export function WaitsTable({ waits }: { waits: WaitRow[] }) {
  const rows = waits.toSorted((a, b) => (b.per_s ?? 0) - (a.per_s ?? 0) || (b.count ?? 0) - (a.count ?? 0));
  return (
    <table className="grid" data-testid="waits-table">
      <thead>
        <tr>
          <th>reason</th>
          <th className="num">rate</th>
          <th className="num">total</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={3} className="empty-cell">
              No wait data.
            </td>
          </tr>
        ) : (
          rows.map((w) => (
            <tr key={w.reason} className={(w.per_s ?? 0) === 0 ? 'row-dim' : ''}>
              <td className="mono">{w.reason}</td>
              <td className="num">{fmtRate(w.per_s)}</td>
              <td className="num">{fmtNum(w.count)}</td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

export const SESSION_ROW_LIMIT = 100;

export function SessionsTable({ sessions }: { sessions: Session[] }) {
  const [showAll, setShowAll] = useState(false);
  // Up to 500 rows arrive every second; render the longest-running ones unless asked.
  const rows = showAll ? sessions : sessions.slice(0, SESSION_ROW_LIMIT);
  return (
    <div className="table-wrap">
      <table className="grid" data-testid="sessions-table">
        <thead>
          <tr>
            <th className="num">id</th>
            <th>user</th>
            <th>host</th>
            <th>db</th>
            <th>command</th>
            <th className="num">time</th>
            <th>state</th>
            <th className="sql-col">SQL</th>
          </tr>
        </thead>
        <tbody>
          {sessions.length === 0 ? (
            <tr>
              <td colSpan={8} className="empty-cell" data-testid="sessions-empty">
                No active sessions (every connection is idle).
              </td>
            </tr>
          ) : (
            rows.map((s) => (
              <tr key={s.id} data-testid={`session-row-${s.id}`}>
                <td className="num mono">{s.id}</td>
                <td>{txt(s.user)}</td>
                <td className="mono">{txt(s.host)}</td>
                <td>{txt(s.db)}</td>
                <td>{txt(s.command)}</td>
                <td className={`num ${(s.time_s ?? 0) >= 10 ? 'cell-bad' : (s.time_s ?? 0) >= 1 ? 'cell-hot' : ''}`}>
                  {s.time_s === null ? DASH : fmtSeconds(s.time_s)}
                </td>
                <td>{txt(s.state)}</td>
                <td className="sql-col">
                  <SqlText sql={s.info} />
                </td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      {sessions.length > rows.length ? (
        <div className="table-note" data-testid="sessions-truncated">
          Showing the {rows.length} longest-running of {sessions.length} active sessions.{' '}
          <button type="button" className="link-btn" onClick={() => setShowAll(true)}>
            show all
          </button>
        </div>
      ) : null}
    </div>
  );
}
