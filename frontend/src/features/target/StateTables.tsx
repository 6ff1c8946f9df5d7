// Tables for the current poll: queued connections, open transactions, sessions and wait reasons. The long
// ones show their worst 10 rows first (ui/tables.tsx) and export every row as CSV.
import { M } from '../../api/metrics.gen';
import type { QueuedConnection, Session, TransactionItem, WaitRow } from '../../api/types';
import type { CsvColumn } from '../../lib/csv';
import { DASH, fmtMs, fmtNum, fmtRate, fmtSeconds, fmtWholeSeconds } from '../../lib/format';
import { Help, MetricHelp } from '../../ui/Help';
import { ShowAll, useCapped } from '../../ui/tables';
import { SqlText } from '../../ui/ui';

/** Longest waiters first (what the backend keeps when it truncates), then queue order. */
export function sortQueue(queue: readonly QueuedConnection[]): QueuedConnection[] {
  return queue.toSorted(
    (a, b) => (b.queueing_time_ms ?? 0) - (a.queueing_time_ms ?? 0) || a.group_id - b.group_id || a.position - b.position,
  );
}

export const QUEUE_CSV: CsvColumn<QueuedConnection>[] = [
  { header: 'group', value: (q) => q.group_id },
  { header: 'position', value: (q) => q.position },
  { header: 'priority', value: (q) => q.priority },
  { header: 'connection_id', value: (q) => q.connection_id },
  { header: 'waiting_ms', value: (q) => q.queueing_time_ms },
  { header: 'user', value: (q) => q.user },
  { header: 'host', value: (q) => q.host },
  { header: 'db', value: (q) => q.db },
  { header: 'command', value: (q) => q.command },
  { header: 'time_s', value: (q) => q.time_s },
  { header: 'sql', value: (q) => q.info },
  { header: 'last_sql', value: (q) => q.last_sql },
  { header: 'last_sql_seen_s_ago', value: (q) => q.last_sql_seen_s_ago },
];

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
  const sorted = sortQueue(queue);
  const { shown: rows, all, setAll, capped } = useCapped(sorted);
  // A queued request is unread, so its session is idle (Sleep) and PROCESSLIST's command and time say
  // nothing: the columns appear only when a row has them.
  const active = sorted.some((q) => q.command || q.time_s !== null);
  const cols = active ? 11 : 9;
  return (
    <div className="table-wrap">
      {processMissing ? (
        <div className="table-note text-warn">
          PROCESS privilege missing: user, host, db and SQL of other users' connections are not visible.
        </div>
      ) : null}
      {capped ? (
        <ShowAll total={sorted.length} all={all} setAll={setAll} what="longest waiters" testId="queue-truncated" />
      ) : null}
      <table className="grid" data-testid="queue-table">
        <thead>
          <tr>
            <th className="num">group</th>
            <th className="num">
              <Help label="pos" trigger="pos">
                Its place in the group&apos;s queue (0 is next).
              </Help>
            </th>
            <th>
              <Help label="prio" trigger="prio">
                Which of the group's two queues: HIGH (statements of open transactions, with thread_pool_high_prio_mode) or LOW.
              </Help>
            </th>
            <th className="num">conn id</th>
            <th className="num">
              <MetricHelp
                metrics={[M.tp_queue_wait_max_ms, M.tp_queue_wait_avg_ms]}
                label="waiting"
                trigger={`waiting${coarse ? ' (coarse)' : ''}`}
                testId="queue-waiting-help"
                note={`How long this request has waited in the queue; the series above are the longest and the mean of this column ${
                  coarse
                    ? '— coarse mode (thread_pool_exact_stats=OFF): enqueue time from the timer tick, overstated.'
                    : '(exact: thread_pool_exact_stats=ON).'
                }`}
              />
            </th>
            <th>user</th>
            <th>host</th>
            <th>db</th>
            {active ? (
              <>
                <th>command</th>
                <th className="num">time</th>
              </>
            ) : null}
            <th className="sql-col">SQL</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={cols} className="empty-cell" data-testid="queue-empty">
                No connections waiting in the pool queues.
              </td>
            </tr>
          ) : (
            rows.map((q) => (
              <tr key={`${q.group_id}-${q.connection_id}-${q.position}`} data-testid={`queue-row-${q.connection_id}`}>
                <td className="num">{q.group_id}</td>
                <td className="num">{q.position}</td>
                <td className={q.priority?.toLowerCase() === 'high' ? 'text-info' : ''}>{txt(q.priority?.toUpperCase())}</td>
                <td className="num mono">{q.connection_id ?? <span className="muted">login</span>}</td>
                <td
                  className={`num ${(q.queueing_time_ms ?? 0) >= 1000 ? 'cell-bad' : (q.queueing_time_ms ?? 0) >= 100 ? 'cell-hot' : ''}`}
                >
                  {fmtMs(q.queueing_time_ms)}
                </td>
                <td>{txt(q.user)}</td>
                <td className="mono">{txt(q.host)}</td>
                <td>{txt(q.db)}</td>
                {active ? (
                  <>
                    <td>{txt(q.command)}</td>
                    <td className="num">{q.time_s === null ? DASH : fmtSeconds(q.time_s)}</td>
                  </>
                ) : null}
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
    </div>
  );
}

/** Lock waits first (longest wait first), then the oldest: the transactions to look at in an incident. */
const waiting = (t: TransactionItem) => t.state === 'LOCK WAIT';

export function sortTransactions(items: readonly TransactionItem[]): TransactionItem[] {
  return items.toSorted(
    (a, b) => Number(waiting(b)) - Number(waiting(a)) || (b.wait_s ?? 0) - (a.wait_s ?? 0) || (b.age_s ?? 0) - (a.age_s ?? 0),
  );
}

/**
 * A read-only transaction has no id of its own: MariaDB reports 0, MySQL a number above 2^48 made
 * from a pointer. Either way it is not an id to look for.
 */
export function isReadOnlyTrx(t: TransactionItem): boolean {
  return t.trx_id === '0' || (/^\d{15,}$/.test(t.trx_id) && Number(t.trx_id) >= 2 ** 48);
}

export const TRX_CSV: CsvColumn<TransactionItem>[] = [
  { header: 'trx_id', value: (t) => (isReadOnlyTrx(t) ? 'read-only' : t.trx_id) },
  { header: 'state', value: (t) => t.state },
  { header: 'started_at', value: (t) => (t.started_at === null ? null : new Date(t.started_at * 1000).toISOString()) },
  { header: 'age_s', value: (t) => (t.age_s === null ? null : Math.floor(t.age_s)) },
  { header: 'lock_wait_s', value: (t) => (t.wait_s === null ? null : Math.floor(t.wait_s)) },
  { header: 'thread_id', value: (t) => t.thread_id },
  { header: 'user', value: (t) => t.user },
  { header: 'host', value: (t) => t.host },
  { header: 'db', value: (t) => t.db },
  { header: 'rows_locked', value: (t) => t.rows_locked },
  { header: 'rows_modified', value: (t) => t.rows_modified },
  { header: 'sql', value: (t) => t.query },
];

/** `minAgeS`: the backend lists transactions open at least this long, or in lock wait. */
export function TransactionsTable({ items, minAgeS = null }: { items: TransactionItem[]; minAgeS?: number | null }) {
  const sorted = sortTransactions(items);
  const { shown, all, setAll, capped } = useCapped(sorted);
  return (
    <div className="table-wrap">
      {capped ? (
        <ShowAll total={sorted.length} all={all} setAll={setAll} what="lock waits and oldest" testId="trx-truncated" />
      ) : null}
      <table className="grid" data-testid="trx-table">
        <thead>
          <tr>
            <th>trx id</th>
            <th>
              <MetricHelp
                metrics={[M.trx_lock_waits]}
                label="state"
                trigger="state"
                testId="trx-state-help"
                note="INNODB_TRX.trx_state: RUNNING, LOCK WAIT, ROLLING BACK or COMMITTING."
              />
            </th>
            <th className="num">
              <MetricHelp
                metrics={[M.trx_longest_age_s]}
                label="age"
                trigger="age"
                note="Whole seconds: the server keeps a transaction's start to the second."
              />
            </th>
            <th className="num">
              lock wait{' '}
              <Help label="lock wait">How long it has waited for a row lock, in whole seconds (as the server keeps it).</Help>
            </th>
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
            shown.map((t) => (
              // Read-only transactions all report trx_id 0; a connection has one transaction at a time.
              <tr
                key={`${t.thread_id ?? ''}-${t.trx_id}`}
                className={t.state === 'LOCK WAIT' ? 'row-warn' : ''}
                data-testid={`trx-row-${t.trx_id}`}
              >
                <td className="mono">
                  {isReadOnlyTrx(t) ? (
                    <span className="muted" title={`InnoDB gives a read-only transaction no id (it reports ${t.trx_id})`}>
                      read-only
                    </span>
                  ) : (
                    t.trx_id
                  )}
                </td>
                <td className={t.state === 'LOCK WAIT' ? 'text-bad' : ''}>{txt(t.state)}</td>
                <td className={`num ${(t.age_s ?? 0) >= 60 ? 'cell-bad' : (t.age_s ?? 0) >= 5 ? 'cell-hot' : ''}`}>
                  {fmtWholeSeconds(t.age_s)}
                </td>
                <td className="num">{fmtWholeSeconds(t.wait_s)}</td>
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

export function SessionsTable({ sessions }: { sessions: Session[] }) {
  // Up to 500 rows arrive every second, longest-running first: the first ones unless asked.
  const { shown: rows, all, setAll, capped } = useCapped(sessions);
  return (
    <div className="table-wrap">
      {capped ? (
        <ShowAll total={sessions.length} all={all} setAll={setAll} what="longest-running sessions" testId="sessions-truncated" />
      ) : null}
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
    </div>
  );
}
