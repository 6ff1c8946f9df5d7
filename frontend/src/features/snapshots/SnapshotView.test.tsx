import { render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SnapshotDocument } from '../../api/types';
import { makeGroup, makeState, makeTarget } from '../../test/fixtures';
import { stubFetch } from '../../test/fakes';
import { parseRoute } from '../../app/router';
import { snapshotHistory, SnapshotView } from './SnapshotView';

function makeDoc(): SnapshotDocument {
  return {
    format: 'poolscope-snapshot',
    schema_version: 1,
    poolscope_version: '0.1.0',
    title: 'db1: thread group 0 stalled',
    target: 'sandbox',
    trigger: 'alert',
    alert_id: 7,
    created_at: 1000,
    moment_ts: 1000,
    window: { from: 100, to: 1300, before_s: 900, after_s: 300, complete: true },
    redacted_sql: false,
    target_info: makeTarget(),
    state: makeState({
      groups: [makeGroup({ group_id: 0, stalled: true, stall_reason: 'stalls_counter', queue_length: 4 })],
    }),
    server_tables: {
      captured_at: 1000,
      port_kind: 'extra_port',
      global_status: { Uptime: '10' },
      global_variables: { thread_pool_size: '1' },
      errors: {},
      processlist: [],
      innodb_lock_waits: [],
      innodb_trx: [],
      thread_pool_groups: [],
      thread_pool_queues: [],
      thread_pool_stats: [],
      thread_pool_waits: [],
    },
    series: [{ metric: 'tp_group_queue_length', labels: { group: '0' }, points: [[1000, 4]] }],
    step_s: 1,
    alerts: [],
    variable_changes: [],
  };
}

afterEach(() => vi.unstubAllGlobals());

describe('snapshot view', () => {
  it('routes /snapshots and /snapshots/<id>', () => {
    expect(parseRoute('/snapshots')).toEqual({ page: 'snapshots' });
    expect(parseRoute('/snapshots/12')).toEqual({ page: 'snapshot', id: 12 });
    expect(parseRoute('/snapshots/x')).toEqual({ page: 'notfound', path: '/snapshots/x' });
    expect(parseRoute('/alerts')).toEqual({ page: 'alerts' });
  });

  it('turns the window into the target page history', () => {
    const h = snapshotHistory(makeDoc());
    expect([h.from, h.to, h.step_s, h.series.length]).toEqual([100, 1300, 1, 1]);
  });

  it('renders the moment with the target page tables', async () => {
    stubFetch({ '/api/snapshots/3': () => ({ body: makeDoc() }) });
    render(<SnapshotView id={3} />);
    expect((await screen.findByTestId('snapshot-title')).textContent).toContain('db1: thread group 0 stalled');
    expect(screen.getByTestId('groups-panel')).toBeTruthy();
    expect(screen.getByTestId('queue-panel')).toBeTruthy();
    expect(screen.getByTestId('snapshot-download-archive').getAttribute('href')).toBe('/api/snapshots/3/archive');
  });

  it('says why a snapshot cannot be opened', async () => {
    stubFetch({ '/api/snapshots/9': () => ({ status: 404, body: { detail: 'no snapshot 9' } }) });
    render(<SnapshotView id={9} />);
    expect((await screen.findByTestId('snapshot-error')).textContent).toContain('no snapshot 9');
  });
});
