// Whole-pool figures for every flavor (Percona has nothing finer) and the pool-off concurrency view.
import type { PoolSummary, ServerInfo, TargetState } from '../../api/types';
import { DASH, fmtMs, fmtNum, fmtPercent } from '../../lib/format';
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
        </tbody>
      </table>
      {pool.queue_wait.length ? (
        <table className="grid" data-testid="queue-wait-stats">
          <thead>
            <tr>
              <th>statistic</th>
              <th className="num">avg</th>
              <th className="num">min</th>
              <th className="num">max</th>
              <th className="num">dev</th>
              <th className="num">count</th>
            </tr>
          </thead>
          <tbody>
            {pool.queue_wait.map((s) => (
              <tr key={s.name} data-testid={`queue-wait-${s.name}`}>
                <td className="mono">{s.name}</td>
                <td className="num">{fmtStat(s.name, s.avg)}</td>
                <td className="num">{fmtStat(s.name, s.min)}</td>
                <td className="num">{fmtStat(s.name, s.max)}</td>
                <td className="num">{fmtStat(s.name, s.dev)}</td>
                <td className="num">{fmtNum(s.cnt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
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
