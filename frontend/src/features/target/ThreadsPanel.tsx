// Current thread counts, throughput, cache-miss ratios and the pool variables that explain them.
import type { Ratio, TargetState } from '../../api/types';
import { M } from '../../api/metrics.gen';
import { SERVER_VARIABLES } from '../../api/variables.gen';
import { DASH, fmtNum, fmtPercent, fmtRate, fmtSeconds } from '../../lib/format';

function KV({ k, v, testId, tone }: { k: string; v: string; testId?: string; tone?: string }) {
  return (
    <tr data-testid={testId}>
      <th>{k}</th>
      <td className={`num ${tone ?? ''}`}>{v}</td>
    </tr>
  );
}

function RatioRow({ label, ratio, testId }: { label: string; ratio: Ratio | null | undefined; testId: string }) {
  return (
    <>
      <KV k={label} v={ratio ? fmtPercent(ratio.value) : DASH} testId={testId} />
      {ratio && (ratio.regime || ratio.note || ratio.window_s) ? (
        <tr className="kv-note">
          <td colSpan={2}>
            {[ratio.window_s ? `over ${fmtSeconds(ratio.window_s)}` : null, ratio.regime ? `regime: ${ratio.regime}` : null]
              .filter(Boolean)
              .join(' · ')}
            {ratio.note ? <div>{ratio.note}</div> : null}
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** The catalog's metrics this panel shows, for its help. */
export const THREADS_PANEL_METRICS = [
  M.threads_connected,
  M.threads_running,
  M.threads_cached,
  M.threads_created_per_s,
  M.pool_threads,
  M.pool_idle_threads,
  M.qps,
  M.tps,
  M.connections_per_s,
  M.aborted_connects_per_s,
  M.aborted_clients_per_s,
  M.thread_cache_miss_ratio,
  M.buffer_pool_miss_ratio,
];

export function ThreadsPanel({ state }: { state: TargetState }) {
  const th = state.threads;
  const tp = state.throughput;
  return (
    <div className="kv-cols" data-testid="threads-panel">
      <table className="kv">
        <tbody>
          <KV k="Threads_connected" v={fmtNum(th?.connected)} testId="threads-connected" />
          <KV k="Threads_running" v={fmtNum(th?.running)} testId="threads-running" />
          <KV k="Threads_cached" v={fmtNum(th?.cached)} />
          <KV k="Threads created" v={fmtRate(th?.created_per_s)} />
          <KV k="Pool threads" v={fmtNum(th?.pool_threads)} testId="threads-pool" />
          <KV k="Pool idle threads" v={fmtNum(th?.pool_idle_threads)} />
        </tbody>
      </table>
      <table className="kv">
        <tbody>
          <KV k="QPS" v={fmtRate(tp?.qps)} testId="throughput-qps" />
          <KV k="TPS" v={fmtRate(tp?.tps)} testId="throughput-tps" />
          <KV k="New connections" v={fmtRate(tp?.connections_per_s)} />
          <KV
            k="Aborted connects"
            v={fmtRate(tp?.aborted_connects_per_s)}
            tone={(tp?.aborted_connects_per_s ?? 0) > 0 ? 'text-warn' : ''}
          />
          <KV
            k="Aborted clients"
            v={fmtRate(tp?.aborted_clients_per_s)}
            tone={(tp?.aborted_clients_per_s ?? 0) > 0 ? 'text-warn' : ''}
          />
        </tbody>
      </table>
      <table className="kv">
        <tbody>
          <RatioRow label="Thread cache miss" ratio={state.ratios?.thread_cache_miss} testId="ratio-thread-cache" />
          <RatioRow label="Buffer pool miss" ratio={state.ratios?.buffer_pool_miss} testId="ratio-buffer-pool" />
        </tbody>
      </table>
    </div>
  );
}

export function VariablesTable({ variables }: { variables: Record<string, string> | null }) {
  if (!variables) return <div className="empty">Variables not available.</div>;
  // The backend's order (pool settings first); names it does not list (status, an older snapshot's) after, sorted.
  const known = SERVER_VARIABLES.filter((k) => k in variables);
  const rest = Object.keys(variables)
    .filter((k) => !SERVER_VARIABLES.includes(k))
    .toSorted();
  return (
    <table className="kv" data-testid="variables-table">
      <tbody>
        {[...known, ...rest].map((k) => (
          <KV key={k} k={k} v={variables[k]} />
        ))}
      </tbody>
    </table>
  );
}
