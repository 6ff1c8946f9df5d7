// Thread-pool domain wording shared by the overview and target pages.
import { flavorLabel, fmtNum } from './format';
import type { Capability, CollectorStatus, GroupState, PoolKind, ServerInfo, StallReason, Target } from '../api/types';

export const POOL_OFF_MESSAGE =
  'Thread pool off (one-thread-per-connection): per-group data needs thread_handling=pool-of-threads, which requires a restart';

export const POOL_OFF_DETAIL =
  'The server runs one thread per connection, so THREAD_POOL_GROUPS / QUEUES / STATS / WAITS return no rows. ' +
  'thread_handling is read-only at runtime: add thread_handling = pool-of-threads under [mysqld] in the server ' +
  'config (optionally thread_pool_size = <CPU count>, thread_pool_exact_stats = ON and an extra_port for admin ' +
  'access) and restart the server. Thread, throughput and transaction metrics below are still collected.';

/** The pool-off headline in this flavor's terms: MySQL has no thread_handling=pool-of-threads. */
export function poolOffMessage(server: ServerInfo | null | undefined): string {
  if (server?.flavor === 'mysql') {
    return 'Thread pool off (one-thread-per-connection): per-group data needs the MySQL Enterprise thread_pool plugin, loaded at startup (a restart)';
  }
  return POOL_OFF_MESSAGE;
}

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
  // Object privileges come spelled as the GRANT needs them ("SELECT ON performance_schema.*").
  if (/ ON /i.test(priv)) {
    return {
      privilege: priv.trim(),
      impact: "MySQL Enterprise's thread pool tables (performance_schema.tp_*) are not readable, so there is no per-group data",
      grant: `GRANT ${priv.trim()} TO ${user};`,
    };
  }
  const p = priv.trim().toUpperCase();
  return {
    privilege: p,
    impact: PRIV_IMPACT[p] ?? 'some collectors cannot read their source',
    grant: `GRANT ${p.replace(/_/g, ' ')} ON *.* TO ${user};`,
  };
}

export function portKindLabel(kind: string | null | undefined): string {
  if (kind === 'extra_port') return 'extra_port';
  if (kind === 'admin_port') return 'admin_port';
  if (kind === 'fixture') return 'fixture replay';
  if (kind === 'port') return 'normal port';
  return 'port unknown';
}

export const PORT_EXPLANATION: Record<string, string> = {
  extra_port:
    'Polling through extra_port (one-thread-per-connection admin port): monitoring queries bypass the pool queue and stay fast during a stall.',
  admin_port:
    'Polling through the MySQL/Percona 8.0.14+ administrative interface (admin_address:admin_port): monitoring queries bypass the thread pool.',
  fixture: 'Not a live server: captured output replayed from tests/fixtures (test/development facility).',
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

/**
 * The title of a read that failed: the store when the API said so (a 503 "store unreachable"),
 * else the backend itself.
 */
export function unreachableTitle(error: Error | null | undefined): string {
  return isStoreError(error) ? 'Store unreachable' : 'Backend unreachable';
}

export function isStoreError(error: Error | null | undefined): boolean {
  return !!error && 'status' in error && error.status === 503 && error.message.startsWith('store unreachable');
}

/** A poll older than this many poll intervals is not "up" any more as far as anyone can tell. */
export const STALE_INTERVALS = 2;

export type ShownStatus = Target['status'] | 'stale';

export const STALE_TITLE = `no poll newer than ${STALE_INTERVALS} poll intervals: the store fails, or nothing polls it`;

/**
 * The status a target is shown with: "stale" instead of "up" when its numbers are older than
 * STALE_INTERVALS poll intervals (the store fails, or nothing polls it): never "up" on old numbers.
 */
export function shownStatus(
  t: { status: Target['status']; last_poll_at?: number | null },
  intervalS: number | null | undefined,
  now: number,
): ShownStatus {
  if (t.status !== 'up' || !intervalS || t.last_poll_at === null || t.last_poll_at === undefined) return t.status;
  return now - t.last_poll_at > STALE_INTERVALS * intervalS ? 'stale' : 'up';
}

export function statusTone(t: { status: ShownStatus }): 'ok' | 'bad' | 'warn' | 'muted' {
  return t.status === 'up' ? 'ok' : t.status === 'down' ? 'bad' : t.status === 'stale' ? 'warn' : 'muted';
}

// ---- Flavors (backend poolscope/flavors.py decides; these only word it) ----

/** "MySQL Enterprise 8.0.36-commercial", "Percona Server 8.4.2-2", ... */
export function serverLabel(server: ServerInfo): string {
  if (server.flavor === 'mysql' && (server.pool_kind === 'mysql_enterprise' || /enterprise/i.test(server.edition ?? ''))) {
    return 'MySQL Enterprise';
  }
  return flavorLabel(server.flavor);
}

export function poolKindLabel(kind: PoolKind | null | undefined): string {
  switch (kind) {
    case 'mariadb':
      return 'MariaDB thread pool';
    case 'percona':
      return 'Percona thread pool';
    case 'mysql_enterprise':
      return 'MySQL Enterprise thread_pool plugin';
    default:
      return 'no thread pool';
  }
}

/**
 * Whether the server can report a kind of data. A backend from before flavors existed sends no
 * capabilities: it only knew MariaDB, so a pool that is on means all of them.
 */
export function hasCap(server: ServerInfo | null | undefined, cap: Capability): boolean {
  if (!server || !server.pool_enabled) return false;
  if (!server.capabilities) return cap !== 'queue_wait_stats';
  return server.capabilities.includes(cap);
}

/** Where pool wait reasons come from on this server. */
export function waitsSource(server: ServerInfo | null | undefined): string {
  return server?.pool_kind === 'mysql_enterprise' ? 'tp_thread_group_stats *_WAITS' : 'THREAD_POOL_WAITS';
}

/** What the pool-off view says when a flavor cannot report per-group data even with its pool on. */
export function noGroupsExplanation(server: ServerInfo): string {
  if (server.pool_kind === 'percona') {
    return (
      `${serverLabel(server)}'s thread pool publishes no per-group tables: only Threadpool_threads / ` +
      'Threadpool_idle_threads' +
      (hasCap(server, 'queue_depth') ? ", the whole pool's queue depth" : '') +
      (hasCap(server, 'queue_wait_stats') ? ' and the queue-wait statistics' : '') +
      ', so there is no group table, heatmap or per-connection queue for this server.'
    );
  }
  return 'This server reports no per-group thread pool data: only server-wide figures are shown.';
}
