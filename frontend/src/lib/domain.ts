// Thread-pool domain wording shared by the overview and target pages (see /work/shared/REFERENCE.md for the facts).
import { fmtNum } from './format';
import type { CollectorStatus, GroupState, ServerInfo, StallReason, Target } from '../api/types';

export const POOL_OFF_MESSAGE =
  'Thread pool off (one-thread-per-connection): per-group data needs thread_handling=pool-of-threads, which requires a restart';

export const POOL_OFF_DETAIL =
  'The server runs one thread per connection, so THREAD_POOL_GROUPS / QUEUES / STATS / WAITS return no rows. ' +
  'thread_handling is read-only at runtime: add thread_handling = pool-of-threads under [mysqld] in the server ' +
  'config (optionally thread_pool_size = <CPU count>, thread_pool_exact_stats = ON and an extra_port for admin ' +
  'access) and restart the server. Thread, throughput and transaction metrics below are still collected.';

/** True only when we know the pool is off; unknown (no server info yet) is not "off". */
export function isPoolOff(server: ServerInfo | null | undefined): boolean {
  return !!server && !server.pool_enabled;
}

export function stallLabel(reason: StallReason | null): string {
  switch (reason) {
    case 'stalls_counter':
      return 'STALLED (stall counter rose)';
    case 'no_dequeue':
      return 'STALLED (no dequeue for > stall limit)';
    case 'server_flag':
      return 'STALLED (server IS_STALLED flag)';
    default:
      return 'STALLED';
  }
}

export function stallExplanation(reason: StallReason | null): string {
  switch (reason) {
    case 'stalls_counter':
      return "THREAD_POOL_STATS.STALLS increased since the last poll: the pool's timer found the group's running statement exceeding thread_pool_stall_limit and woke or created another thread.";
    case 'server_flag':
      return "The server's own THREAD_POOL_GROUPS.IS_STALLED flag was set at this poll (it is set only for an instant, so it is rarely caught).";
    case 'no_dequeue':
      return 'Connections are queued but the group has not dequeued any for longer than thread_pool_stall_limit (detected by Poolscope; the STALLS counter may not move with a large stall limit).';
    default:
      return 'Poolscope judged this group stalled.';
  }
}

export function stalledGroups(groups: readonly GroupState[] | null | undefined): GroupState[] {
  return (groups ?? []).filter((g) => g.stalled);
}

export interface QueueModeInfo {
  label: string;
  tone: 'ok' | 'warn' | 'muted';
  title: string;
}

export function queueTimeMode(server: ServerInfo | null | undefined): QueueModeInfo {
  const mode = server?.queue_time_mode ?? null;
  if (mode === 'exact')
    return { label: 'queue times: exact', tone: 'ok', title: 'thread_pool_exact_stats=ON: queue times are measured exactly.' };
  if (mode === 'coarse')
    return {
      label: 'coarse — queue times overstated, enable thread_pool_exact_stats',
      tone: 'warn',
      title:
        'thread_pool_exact_stats=OFF: enqueue time comes from the pool timer tick, so queueing times read far higher than reality (e.g. p50 299 ms vs 8.7 ms exact). SET GLOBAL thread_pool_exact_stats=ON (dynamic, small cost).',
    };
  return { label: 'queue-time mode unknown', tone: 'muted', title: 'Poolscope could not read @@thread_pool_exact_stats.' };
}

export interface PrivilegeExplanation {
  privilege: string;
  impact: string;
  grant: string;
}

const PRIV_IMPACT: Record<string, string> = {
  PROCESS:
    "queued connections' SQL and transactions are not visible (INNODB_TRX, INNODB_BUFFER_POOL_STATS and other users' PROCESSLIST rows need PROCESS)",
  REPLICATION_CLIENT: 'replication status is not visible',
  'REPLICATION CLIENT': 'replication status is not visible',
  SLAVE_MONITOR: 'replica status is not visible',
  'SLAVE MONITOR': 'replica status is not visible',
  RELOAD: 'counters cannot be flushed (FLUSH THREAD_POOL_STATS / WAITS)',
};

export function explainPrivilege(priv: string, user = "'poolscope'@'%'"): PrivilegeExplanation {
  const p = priv.trim().toUpperCase();
  return {
    privilege: p,
    impact: PRIV_IMPACT[p] ?? 'some collectors cannot read their source',
    grant: `GRANT ${p.replace(/_/g, ' ')} ON *.* TO ${user};`,
  };
}

export function portKindLabel(kind: string | null | undefined): string {
  if (kind === 'extra_port') return 'extra_port';
  if (kind === 'port') return 'normal port';
  return 'port unknown';
}

export const PORT_EXPLANATION: Record<string, string> = {
  extra_port:
    'Polling through extra_port (one-thread-per-connection admin port): monitoring queries bypass the pool queue and stay fast during a stall.',
  port: 'Polling through the normal port: monitoring queries wait in the same pool queue as the workload, so polls slow down (and may time out) exactly when the pool stalls.',
};

/** How often the target is polled: the interval while up, the backed-off retry pause while down. */
export function pollCadence(t: Pick<Target, 'status' | 'poll_interval_s' | 'retry_in_s'>): string {
  if (t.status === 'down' && t.retry_in_s) return `retrying in ${fmtNum(t.retry_in_s)} s (backs off while down)`;
  return t.poll_interval_s ? `every ${fmtNum(t.poll_interval_s)} s` : '';
}

export function failedCollectors(collectors: readonly CollectorStatus[] | null | undefined): CollectorStatus[] {
  return (collectors ?? []).filter((c) => !c.ok && !c.skipped);
}

export function skippedCollectors(collectors: readonly CollectorStatus[] | null | undefined): CollectorStatus[] {
  return (collectors ?? []).filter((c) => !!c.skipped);
}

export function statusTone(t: Pick<Target, 'status'>): 'ok' | 'bad' | 'muted' {
  return t.status === 'up' ? 'ok' : t.status === 'down' ? 'bad' : 'muted';
}
