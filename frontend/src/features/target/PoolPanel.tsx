// Whole-pool figures for every flavor (Percona has nothing finer) and the pool-off concurrency view.
import type { PoolSummary, QueueWaitStat, ServerInfo, TargetState, ThreadStates } from '../../api/types';
import { DASH, fmtMs, fmtNum, fmtPercent, fmtRate, fmtSeconds } from '../../lib/format';
import { hasCap, noGroupsExplanation, poolKindLabel } from '../../lib/domain';

function Row({ k, v, testId, title }: { k: string; v: string; testId?: string; title?: string }) {
  return (
    <tr data-testid={testId} title={title}>
      <th>{k}</th>
      <td className="num">{v}</td>
    </tr>
  );
}

/** µs-valued statistics read better in ms; anything else is shown as it comes. */
function fmtStat(name: string, v: number | null): string {
  if (v === null || v === undefined) return DASH;
  return name.endsWith('_us') ? fmtMs(v / 1000) : fmtNum(v);
}

export function PoolSummaryPanel({ pool, server }: { pool: PoolSummary; server: ServerInfo }) {
  const busy = pool.threads !== null && pool.idle_threads !== null ? pool.threads - pool.idle_threads : null;
  return (
    <div data-testid="pool-summary">
      {!hasCap(server, 'groups') ? (
        <div className="table-note" data-testid="no-groups-note">
          {noGroupsExplanation(server)}
        </div>
      ) : null}
      <table className="kv">
        <tbody>
          <Row k="implementation" v={poolKindLabel(pool.kind)} testId="pool-kind" />
          <Row k="thread_pool_size" v={fmtNum(pool.size)} testId="pool-size" />
          <Row
            k="thread_pool_stall_limit"
            v={`${pool.stall_limit_raw ?? DASH}${pool.stall_limit_ms !== null && pool.stall_limit_raw && pool.stall_limit_raw !== `${pool.stall_limit_ms} ms` ? ` = ${fmtMs(pool.stall_limit_ms)}` : ''}`}
            testId="pool-stall-limit"
            title="As the server spells it; MySQL Enterprise counts in units of 10 ms."
          />
          {pool.threads !== null ? <Row k="pool threads" v={fmtNum(pool.threads)} testId="pool-threads" /> : null}
          {busy !== null ? (
            <Row
              k="busy / idle"
              v={`${fmtNum(busy)} / ${fmtNum(pool.idle_threads)}`}
              testId="pool-busy-idle"
              title="Threadpool_threads − Threadpool_idle_threads: threads executing or waiting inside a statement"
            />
          ) : null}
          {pool.high_prio_mode !== null ? (
            <Row
              k="thread_pool_high_prio_mode"
              v={pool.high_prio_mode}
              testId="pool-high-prio-mode"
              title="transactions: statements of open transactions go to the high-priority queue (seed 001: keeps ~97% of peak throughput at high concurrency)"
            />
          ) : null}
          {pool.high_prio_tickets !== null ? (
            <Row k="thread_pool_high_prio_tickets" v={pool.high_prio_tickets} testId="pool-high-prio-tickets" />
          ) : null}
          {pool.queue_depth ? (
            <>
              <Row
                k="queued now, whole pool (normal / high priority)"
                v={`${fmtNum(pool.queue_depth.normal)} / ${fmtNum(pool.queue_depth.high)}`}
                testId="pool-queue-depth"
                title="Threadpool_requests_waiting_in_queue / _in_hp_queue: the server sums every group's queue, so there is no per-group figure (MariaDB and MySQL Enterprise report one per group)."
              />
              <Row
                k="starved (normal queue held back)"
                v={fmtNum(pool.queue_depth.starved)}
                testId="pool-queue-starved"
                title="Threadpool_requests_starved_in_queue: normal-priority requests not picked up while their group is at thread_pool_oversubscribe busy threads."
              />
            </>
          ) : null}
          {pool.admin_group ? (
            <Row
              k={`Admin thread group (#${pool.admin_group.group_id})`}
              v={fmtRate(pool.admin_group.queries_per_s)}
              testId="pool-admin-group"
              title="Connections of TP_CONNECTION_ADMIN holders (MySQL 8.0.31+) run in the Admin group, reported after the pool's own groups: not one of the thread_pool_size groups, so it is not in the group table."
            />
          ) : null}
        </tbody>
      </table>
      {pool.queue_wait.length ? <QueueWaitTable stats={pool.queue_wait} /> : null}
      {pool.thread_states ? <ThreadStatesTable states={pool.thread_states} /> : null}
    </div>
  );
}

/** Percona 8.4.10+: each poll's mean wait next to the server's lifetime statistics, labelled as such. */
function QueueWaitTable({ stats }: { stats: QueueWaitStat[] }) {
  return (
    <>
      <table className="grid" data-testid="queue-wait-stats">
        <thead>
          <tr>
            <th>statistic</th>
            <th className="num" title="Mean wait of the requests dequeued since the previous poll: Δ(avg·cnt) / Δcnt.">
              last poll
            </th>
            <th className="num">requests</th>
            <th className="num">avg since start</th>
            <th className="num">max since start</th>
            <th className="num">count since start</th>
          </tr>
        </thead>
        <tbody>
          {stats.map((s) => (
            <tr key={s.name} data-testid={`queue-wait-${s.name}`}>
              <td className="mono">{s.name}</td>
              <td className="num" data-testid={`queue-wait-window-${s.name}`}>
                {fmtStat(s.name, s.window_avg ?? null)}
              </td>
              <td className="num">
                {fmtNum(s.window_count ?? null)}
                {s.window_s && s.window_s > 1.5 ? ` in ${fmtSeconds(s.window_s)}` : ''}
              </td>
              <td className="num">{fmtStat(s.name, s.avg)}</td>
              <td className="num">{fmtStat(s.name, s.max)}</td>
              <td className="num">{fmtNum(s.cnt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="table-note" data-testid="queue-wait-note">
        The server&apos;s avg / max / count cover every request since it started, so a stall barely moves them. “Last poll” is the
        mean wait of the requests dequeued since the previous poll — not the longest wait now, which Percona does not report.
      </div>
    </>
  );
}

/** MySQL Enterprise tp_thread_state: what the pool's threads do (STATE, 8.4+), wait on, and stalls marked. */
function ThreadStatesTable({ states }: { states: ThreadStates }) {
  const byState = Object.entries(states.by_state).toSorted((a, b) => b[1] - a[1]);
  const waiting = Object.entries(states.waiting).toSorted((a, b) => b[1] - a[1]);
  return (
    <table className="grid" data-testid="pool-thread-states">
      <thead>
        <tr>
          <th>pool threads ({fmtNum(states.threads)})</th>
          <th className="num">threads</th>
        </tr>
      </thead>
      <tbody>
        {states.marked_stalled !== null ? (
          <tr
            data-testid="thread-marked-stalled"
            title="tp_thread_state.MARKED_STALLED: marked stalled by the stall checker (8.4+)"
          >
            <td>marked stalled</td>
            <td className={`num ${states.marked_stalled ? 'text-warn' : ''}`}>{fmtNum(states.marked_stalled)}</td>
          </tr>
        ) : null}
        {byState.map(([state, n]) => (
          <tr key={`s:${state}`} data-testid={`thread-state-${state}`}>
            <td>{state}</td>
            <td className="num">{fmtNum(n)}</td>
          </tr>
        ))}
        {waiting.map(([wait, n]) => (
          <tr key={`w:${wait}`} data-testid={`thread-wait-${wait}`}>
            <td className="mono">{wait}</td>
            <td className="num">{fmtNum(n)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Without a pool every active session is a running thread. The seeds watch exactly this count
 * (PROCESSLIST rows with command != 'Sleep'): 6 → 104 with 100 sysbench clients and no pool,
 * at most 23 with thread_pool_size = 20 (seed 000).
 */
export function PoolOffConcurrency({ state }: { state: TargetState }) {
  const active = (state.sessions ?? []).filter((s) => s.command === 'Query' || s.command === 'Execute').length;
  const running = state.threads?.running ?? null;
  const connected = state.threads?.connected ?? null;
  const share = running !== null && connected ? running / connected : null;
  const miss = state.ratios?.thread_cache_miss ?? null;
  return (
    <div data-testid="pool-off-concurrency">
      <table className="kv">
        <tbody>
          <Row k="active sessions (PROCESSLIST, not Sleep)" v={fmtNum(active)} testId="pool-off-active-sessions" />
          <Row
            k="Threads_running / Threads_connected"
            v={`${fmtNum(running)} / ${fmtNum(connected)}`}
            testId="pool-off-running"
          />
          <Row k="running share of connections" v={fmtPercent(share)} testId="pool-off-running-share" />
          <Row
            k="thread cache miss"
            v={miss ? fmtPercent(miss.value) : DASH}
            testId="pool-off-cache-miss"
            title="ΔThreads_created / ΔConnections over the ratio window: every miss is a thread created for a new connection (seed 002)."
          />
          <Row k="open transactions" v={fmtNum(state.transactions?.count ?? null)} testId="pool-off-trx" />
        </tbody>
      </table>
      <div className="table-note">
        With one thread per connection, every active session is a running thread: a burst of 100 clients means ~100 running
        threads competing for the CPUs (the seeds saw this count jump from 6 to 104). A thread pool would cap it near
        thread_pool_size and queue the rest.
      </div>
    </div>
  );
}
