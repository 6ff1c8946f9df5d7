// Test data builders shaped exactly like the API's answers (the generated types, api/types.ts).
import type { Recommendations } from '../api/changes';
import type { Alert, GroupState, OverviewRow, PoolSummary, Target, TargetState } from '../api/types';

export function makeTarget(over: Partial<Target> = {}): Target {
  return {
    name: 'sandbox',
    tags: {},
    status: 'up',
    reason: null,
    server: {
      flavor: 'mariadb',
      version: '10.11.19-MariaDB-0+deb12u1',
      thread_handling: 'pool-of-threads',
      pool_enabled: true,
      pool_tables: ['THREAD_POOL_GROUPS', 'THREAD_POOL_QUEUES', 'THREAD_POOL_STATS', 'THREAD_POOL_WAITS'],
      exact_stats: true,
      queue_time_mode: 'exact',
      extra_port: 3307,
      version_tuple: [10, 11, 19],
      pool_kind: 'mariadb',
      percona_builtin_pool: false,
      edition: null,
      performance_schema: false,
      admin_port: 0,
      capabilities: ['groups', 'group_stats', 'queue_entries', 'waits', 'pool_threads'],
      notes: [],
      enable_hint: null,
      enable_snippet: null,
      pool_grant_needed: null,
    },
    connection: { host: '127.0.0.1', port: 3307, port_kind: 'extra_port', note: null },
    last_poll_at: 1700000000.1,
    last_success_at: 1700000000.1,
    poll_duration_ms: 1.4,
    poll_interval_s: 1.0,
    retry_in_s: null,
    collectors: [
      {
        name: 'thread_pool_groups',
        ok: true,
        duration_ms: 0.2,
        error: null,
        skipped: null,
        every_s: null,
        carried_s: null,
        note: null,
      },
    ],
    missing_privileges: [],
    summary: {
      queue_length: 3,
      queued_connections: 3,
      groups: 2,
      stalled_groups: 0,
      threads_connected: 70,
      threads_running: 9,
      qps: 1234.5,
      tps: 55.2,
      active_transactions: 4,
      pool_threads: 8,
      pool_idle_threads: 2,
      longest_wait_ms: 12.5,
    },
    ...over,
  };
}

export function makeGroup(over: Partial<GroupState> = {}): GroupState {
  return {
    group_id: 0,
    connections: 35,
    threads: 4,
    active_threads: 2,
    standby_threads: 1,
    queue_length: 3,
    has_listener: true,
    is_stalled: false,
    stalled: false,
    stall_reason: null,
    retired: false,
    stalls_per_s: 0,
    thread_creations_per_s: 0,
    thread_creations_due_to_stall_per_s: 0,
    dequeues_per_s: 812,
    throttles_per_s: 0,
    wakes_per_s: 0,
    oldest_queued_ms: 12.5,
    stalled_query_ratio: null,
    stalled_threads: null,
    ...over,
  };
}

/** A MySQL Enterprise pool summary with nothing known but its size; tests set what they check. */
export function makePool(over: Partial<PoolSummary> = {}): PoolSummary {
  return {
    kind: 'mysql_enterprise',
    size: 4,
    stall_limit_ms: null,
    stall_limit_raw: null,
    threads: null,
    idle_threads: null,
    high_prio_mode: null,
    high_prio_tickets: null,
    queue_wait: [],
    queue_depth: null,
    admin_group: null,
    thread_states: null,
    ...over,
  };
}

export function makeState(over: Partial<TargetState> = {}): TargetState {
  return {
    target: 'sandbox',
    ts: 1700000000.1,
    status: 'up',
    groups: [makeGroup(), makeGroup({ group_id: 1, queue_length: 0, oldest_queued_ms: null })],
    queue: [
      {
        group_id: 0,
        position: 0,
        priority: 'LOW',
        connection_id: 42,
        queueing_time_ms: 12.5,
        user: 'sbtest',
        host: '127.0.0.1:5555',
        db: 'sbtest',
        command: 'Query',
        time_s: 0,
        state: '',
        info: 'SELECT c FROM sbtest1 WHERE id = 1',
        last_sql: null,
        last_sql_seen_s_ago: null,
      },
    ],
    queued_connections: 1,
    sessions: [],
    transactions: { count: 0, longest_age_s: null, lock_waits: 0, listed_min_age_s: null, items: [] },
    waits: [{ reason: 'ROW_LOCK', count: 12, per_s: 0.5 }],
    threads: { connected: 70, running: 9, cached: 0, created_per_s: 0, pool_threads: 8, pool_idle_threads: 2 },
    throughput: { qps: 1234.5, tps: 55.2, connections_per_s: 0, aborted_connects_per_s: 0, aborted_clients_per_s: 0 },
    ratios: {
      thread_cache_miss: { value: null, window_s: 60, regime: 'pool-of-threads', note: 'not meaningful under the pool' },
      buffer_pool_miss: { value: 0.001, window_s: 60, regime: null, note: null },
    },
    variables: { thread_pool_size: '2', thread_pool_stall_limit: '500' },
    pool: null,
    collectors: [],
    missing_privileges: [],
    holders: [],
    holders_scope: null,
    holders_notes: [],
    ...over,
  };
}

/** One fleet overview row (GET /api/overview), healthy unless told otherwise. */
export function makeRow(over: Partial<OverviewRow> = {}): OverviewRow {
  return {
    name: 'db-000',
    tags: {},
    status: 'up',
    reason: null,
    last_poll_at: 1700000000,
    pool_enabled: true,
    groups: 4,
    stalled_groups: 0,
    queue_length: 0,
    queued_connections: 0,
    longest_wait_ms: null,
    threads_connected: 10,
    threads_running: 2,
    qps: 100,
    active_alerts: 0,
    ...over,
  };
}

/** When RECOMMENDATIONS were evaluated. */
export const RECOMMENDED_AT = 1_700_000_300;
const NOW = RECOMMENDED_AT;

/** One active recommendation (lower the stall limit) and one that went away. */
export const RECOMMENDATIONS: Recommendations = {
  target: 'db',
  evaluated_at: NOW - 2,
  note: null,
  rules: [{ rule: 'thread_pool_stall_limit', recommends: true, note: 'Lower ...' }],
  vanished: [
    {
      id: 'db:thread_pool_exact_stats',
      rule: 'thread_pool_exact_stats',
      target: 'db',
      variable: 'thread_pool_exact_stats',
      title: 'Turn thread_pool_exact_stats ON',
      proposed: 'ON',
      first_seen: NOW - 100,
      gone_at: NOW - 10,
      why_gone: 'thread_pool_exact_stats changed from OFF to ON; now: queue times are exact',
    },
  ],
  active: [
    {
      id: 'db:thread_pool_stall_limit',
      rule: 'thread_pool_stall_limit',
      target: 'db',
      variable: 'thread_pool_stall_limit',
      current: '500',
      proposed: '30',
      unit: 'ms',
      title: 'Lower thread_pool_stall_limit from 500 ms to 30 ms',
      why: 'Requests queued ...',
      evidence: [{ label: 'longest queue wait', value: '480 ms', metric: 'tp_queue_wait_max_ms' }],
      window: { from: NOW - 300, to: NOW, seconds: 300, polls: 290 },
      severity: 'warning',
      apply: 'live',
      applicable: true,
      not_applicable_reason: null,
      read_more: 'https://mariadb.com/kb/',
      chart_metrics: ['qps'],
      chart_url: `/targets/db?from=${NOW - 300}&to=${NOW + 1}`,
      config_snippet: '[mariadb]\nthread_pool_stall_limit = 30\n',
      persist_sql: null,
      first_seen: NOW - 60,
      last_seen: NOW,
    },
  ],
};

/** A firing critical stall alert of group 0 on db1 (fired at 100). */
export function makeAlert(over: Partial<Alert> = {}): Alert {
  return {
    id: 1,
    fingerprint: 'fp1',
    target: 'db1',
    rule: 'group_stalled',
    group: '0',
    severity: 'critical',
    status: 'firing',
    summary: 'db1: thread group 0 stalled',
    description: 'Group 0: STALLS counter rose',
    value: 3,
    labels: {},
    annotations: {},
    started_at: 100,
    fired_at: 100,
    resolved_at: null,
    last_active_at: 100,
    poll_ts: 100,
    flapping: false,
    acked_by: null,
    acked_at: null,
    silenced_by: null,
    snapshot_id: null,
    ...over,
  };
}
