import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { PoolSummary, ServerInfo } from '../../api/types';
import { hasCap, serverLabel } from '../../lib/domain';
import { makeState, makeTarget } from '../../test/fixtures';
import { PoolOffConcurrency, PoolSummaryPanel } from './PoolPanel';

const percona: ServerInfo = {
  flavor: 'percona',
  version: '8.4.2-2',
  thread_handling: 'pool-of-threads',
  pool_enabled: true,
  pool_tables: [],
  exact_stats: null,
  queue_time_mode: null,
  extra_port: 0,
  version_tuple: [8, 4, 2],
  pool_kind: 'percona',
  percona_builtin_pool: true,
  edition: null,
  performance_schema: null,
  admin_port: 0,
  capabilities: ['pool_threads', 'queue_wait_stats'],
  notes: [],
  enable_hint: null,
  enable_snippet: null,
  pool_grant_needed: null,
};

const perconaPool: PoolSummary = {
  kind: 'percona',
  size: 24,
  stall_limit_ms: 500,
  stall_limit_raw: '500 ms',
  threads: 36,
  idle_threads: 6,
  high_prio_mode: 'transactions',
  high_prio_tickets: '4294967295',
  queue_wait: [
    {
      name: 'Threadpool_average_queue_wait_us',
      avg: 1210,
      min: 3,
      max: 48110,
      dev: 2057,
      cnt: 186540,
      window_avg: null,
      window_count: null,
      window_s: null,
    },
  ],
  queue_depth: null,
  admin_group: null,
  thread_states: null,
};

describe('PoolSummaryPanel', () => {
  it('shows a Percona pool: busy/idle threads, priority settings and parsed queue-wait stats in ms', () => {
    render(<PoolSummaryPanel pool={perconaPool} server={percona} />);
    expect(screen.getByTestId('no-groups-note').textContent).toMatch(/no per-group tables/);
    expect(screen.getByTestId('pool-busy-idle').textContent).toContain('30 / 6');
    expect(screen.getByTestId('pool-high-prio-mode').textContent).toContain('transactions');
    const row = screen.getByTestId('queue-wait-Threadpool_average_queue_wait_us');
    expect(row.textContent).toContain('1.2 ms'); // avg 1210 µs
    expect(row.textContent).toContain('48.1 ms'); // max 48110 µs
  });

  it("shows Percona 8.4.10's per-poll wait apart from its lifetime statistics, and the whole pool's queue", () => {
    const pool: PoolSummary = {
      ...perconaPool,
      queue_wait: [
        {
          name: 'Threadpool_average_queue_wait_us',
          avg: 225.677,
          min: 0,
          max: 1183000,
          dev: 2933,
          cnt: 16217850,
          window_avg: 655000,
          window_count: 240,
          window_s: 1,
        },
      ],
      queue_depth: { normal: 83, high: 11, starved: 64 },
    };
    render(
      <PoolSummaryPanel pool={pool} server={{ ...percona, capabilities: ['pool_threads', 'queue_wait_stats', 'queue_depth'] }} />,
    );
    expect(screen.getByTestId('queue-wait-window-Threadpool_average_queue_wait_us').textContent).toBe('655 ms');
    expect(screen.getByTestId('queue-wait-stats').textContent).toContain('avg since start');
    expect(screen.getByTestId('queue-wait-note').textContent).toMatch(/since it started/);
    expect(screen.getByTestId('pool-queue-depth').textContent).toContain('83 / 11');
    expect(screen.getByTestId('pool-queue-depth').textContent).toContain('whole pool');
    expect(screen.getByTestId('pool-queue-starved').textContent).toContain('64');
    expect(screen.getByTestId('no-groups-note').textContent).toContain("the whole pool's queue depth");
  });

  it('shows MySQL 8.4 thread states, marked-stalled threads and the Admin group apart from the groups', () => {
    const server: ServerInfo = { ...percona, flavor: 'mysql', pool_kind: 'mysql_enterprise', capabilities: ['groups'] };
    const pool: PoolSummary = {
      ...perconaPool,
      kind: 'mysql_enterprise',
      queue_wait: [],
      admin_group: { group_id: 4, queries_per_s: 460, connections_per_s: 1 },
      thread_states: {
        threads: 18,
        by_state: { Polling: 4, 'Processing Queued': 4, 'Sleeping Reserve': 10 },
        by_type: { QUERY_WORKER_THREAD: 18 },
        marked_stalled: 2,
        waiting: { THD_WAIT_ROW_LOCK: 1 },
      },
    };
    render(<PoolSummaryPanel pool={pool} server={server} />);
    expect(screen.getByTestId('thread-marked-stalled').textContent).toContain('2');
    expect(screen.getByTestId('thread-state-Processing Queued').textContent).toContain('4');
    expect(screen.getByTestId('thread-wait-THD_WAIT_ROW_LOCK').textContent).toContain('1');
    expect(screen.getByTestId('pool-admin-group').textContent).toContain('Admin thread group (#4)');
    expect(screen.getByTestId('pool-admin-group').textContent).toContain('460');
  });

  it('spells a MySQL Enterprise stall limit in its 10 ms units and in ms', () => {
    const server: ServerInfo = { ...percona, flavor: 'mysql', pool_kind: 'mysql_enterprise', capabilities: ['groups'] };
    const pool: PoolSummary = {
      ...perconaPool,
      kind: 'mysql_enterprise',
      stall_limit_raw: '6 ×10 ms',
      stall_limit_ms: 60,
      queue_wait: [],
      high_prio_mode: null,
      high_prio_tickets: null,
      idle_threads: null,
    };
    render(<PoolSummaryPanel pool={pool} server={server} />);
    expect(screen.getByTestId('pool-stall-limit').textContent).toContain('6 ×10 ms = 60 ms');
    expect(screen.queryByTestId('no-groups-note')).toBeNull();
    expect(screen.queryByTestId('pool-high-prio-mode')).toBeNull();
    expect(screen.getByTestId('pool-kind').textContent).toContain('MySQL Enterprise thread_pool plugin');
  });
});

describe('PoolOffConcurrency', () => {
  it('counts active sessions the way the seeds do and shows running vs connected', () => {
    const state = makeState({
      groups: [],
      sessions: [
        { id: 1, user: 'a', host: 'h', db: null, command: 'Query', time_s: 1, state: 'User sleep', info: 'SELECT SLEEP(4)' },
        { id: 2, user: 'a', host: 'h', db: null, command: 'Query', time_s: 1, state: 'User sleep', info: 'SELECT SLEEP(4)' },
        { id: 3, user: 'a', host: 'h', db: null, command: 'Connect', time_s: 0, state: 'login', info: null },
      ],
    });
    render(<PoolOffConcurrency state={state} />);
    expect(screen.getByTestId('pool-off-active-sessions').textContent).toContain('2');
    expect(screen.getByTestId('pool-off-running').textContent).toContain('9 / 70');
  });
});

describe('flavor wording', () => {
  it('names MySQL Enterprise and AliSQL, and gates panels on capabilities', () => {
    expect(serverLabel({ ...percona, flavor: 'mysql', pool_kind: 'mysql_enterprise' })).toBe('MySQL Enterprise');
    expect(serverLabel({ ...percona, flavor: 'mysql', pool_kind: null, edition: 'MySQL Community Server - GPL' })).toBe('MySQL');
    expect(serverLabel({ ...percona, flavor: 'alisql' })).toBe('AliSQL');
    expect(hasCap(percona, 'groups')).toBe(false);
    expect(hasCap(percona, 'queue_wait_stats')).toBe(true);
    expect(hasCap({ ...percona, pool_enabled: false }, 'pool_threads')).toBe(false);
    // A backend from before flavors sends no capabilities: a pool that is on is MariaDB's.
    const old = makeTarget().server!;
    expect(hasCap(old, 'groups') && hasCap(old, 'queue_entries')).toBe(true);
    expect(hasCap(old, 'queue_wait_stats')).toBe(false);
  });
});
