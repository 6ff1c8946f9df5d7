import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resetSessionForTests } from '../../api/session';
import type { SnapshotDocument } from '../../api/types';
import { makeGroup, makeState, makeTarget } from '../../test/fixtures';
import { stubFetch, asRequest } from '../../test/fakes';
import { parseRoute } from '../../app/router';
import { snapshotHistory, SnapshotView } from './SnapshotView';
import { renderWithClient } from '../../test/render';
import { setPrefs } from '../../lib/prefs';

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
    holders: [],
    flight_recorder: [],
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
    renderWithClient(<SnapshotView id={3} />);
    expect((await screen.findByTestId('snapshot-title')).textContent).toContain('db1: thread group 0 stalled');
    expect(screen.getByTestId('groups-panel')).toBeTruthy();
    expect(screen.getByTestId('queue-panel')).toBeTruthy();
  });

  it('downloads an export through the API client, with the session token', async () => {
    resetSessionForTests('v3.tok.sig');
    const fetchMock = stubFetch({
      '/api/snapshots/3/archive': () => ({ body: 'zip', headers: { 'Content-Disposition': 'attachment; filename="s3.zip"' } }),
      '/api/snapshots/3': () => ({ body: makeDoc() }),
    });
    const saved = [URL.createObjectURL, URL.revokeObjectURL] as const;
    URL.createObjectURL = vi.fn<(blob: Blob) => string>(() => 'blob:archive');
    URL.revokeObjectURL = vi.fn<(url: string) => void>();
    const clicked: HTMLAnchorElement[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this);
    });
    setPrefs({ tz: 'utc', theme: 'dark' });
    renderWithClient(<SnapshotView id={3} />);
    fireEvent.click(await screen.findByTestId('snapshot-download-archive'));
    await waitFor(() => expect(clicked).toHaveLength(1));
    expect([clicked[0].download, clicked[0].href]).toEqual(['s3.zip', 'blob:archive']);
    const sent = fetchMock.mock.calls.map(asRequest).find((r) => new URL(r.url).pathname === '/api/snapshots/3/archive');
    expect(sent?.headers.get('authorization')).toBe('Bearer v3.tok.sig');
    // Its report shows times and colours as this page does.
    const view = new URL(sent!.url).searchParams;
    expect([view.get('tz_offset_min'), view.get('tz_name'), view.get('theme')]).toEqual(['0', 'UTC', 'dark']);
    click.mockRestore();
    [URL.createObjectURL, URL.revokeObjectURL] = saved;
  });

  it('says why a snapshot cannot be opened', async () => {
    stubFetch({ '/api/snapshots/9': () => ({ status: 404, body: { detail: 'no snapshot 9' } }) });
    renderWithClient(<SnapshotView id={9} />);
    expect((await screen.findByTestId('snapshot-error')).textContent).toContain('no snapshot 9');
  });
});
