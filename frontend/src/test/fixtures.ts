// Test data builders shaped exactly like docs/API.md examples.
import type { GroupState, Target, TargetState } from '../api/types';

export function makeTarget(over: Partial<Target> = {}): Target {
  return {
    name: 'sandbox',
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
    },
    connection: { host: '127.0.0.1', port: 3307, port_kind: 'extra_port', note: null },
    last_poll_at: 1700000000.1,
    poll_duration_ms: 1.4,
    poll_interval_s: 1.0,
    collectors: [{ name: 'thread_pool_groups', ok: true, duration_ms: 0.2, error: null, skipped: null }],
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
      },
    ],
    transactions: { count: 0, longest_age_s: null, lock_waits: 0, items: [] },
    waits: [{ reason: 'ROW_LOCK', count: 12, per_s: 0.5 }],
    threads: { connected: 70, running: 9, cached: 0, created_per_s: 0, pool_threads: 8, pool_idle_threads: 2 },
    throughput: { qps: 1234.5, tps: 55.2, connections_per_s: 0, aborted_connects_per_s: 0, aborted_clients_per_s: 0 },
    ratios: {
      thread_cache_miss: { value: null, window_s: 60, regime: 'pool-of-threads', note: 'not meaningful under the pool' },
      buffer_pool_miss: { value: 0.001, window_s: 60, regime: null, note: null },
    },
    variables: { thread_pool_size: '2', thread_pool_stall_limit: '500' },
    collectors: [],
    missing_privileges: [],
    ...over,
  };
}
