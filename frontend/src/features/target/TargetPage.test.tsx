import { act, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MetricsResponse, PollEvent } from '../../api/types';
import { makeAlert, makeGroup, makePool, makeState, makeTarget, RECOMMENDATIONS } from '../../test/fixtures';
import { FakeEventSource, installEventSource, stubFetch } from '../../test/fakes';
import { TargetPage } from './TargetPage';
import { renderWithClient } from '../../test/render';

const emptyMetrics = (url: URL): MetricsResponse => ({
  from: Number(url.searchParams.get('from')),
  to: Number(url.searchParams.get('to')),
  step_s: 1,
  resolution: 'raw',
  rollup_step_s: null,
  series: [],
});

beforeEach(() => {
  installEventSource();
  window.history.replaceState(null, '', '/targets/sandbox?range=live');
});
afterEach(() => vi.unstubAllGlobals());

describe('TargetPage', () => {
  it('explains a down target with its reason and last successful poll', async () => {
    const target = makeTarget({
      status: 'down',
      reason: "connect failed: (2003) Can't connect to MySQL server on '127.0.0.1:3307'",
      last_poll_at: 1700000000,
    });
    stubFetch({
      '/api/targets/sandbox': () => ({ body: target }),
      '/api/targets/sandbox/state': () => ({ status: 503, body: { detail: 'no poll yet for sandbox' } }),
      '/api/targets/sandbox/metrics': (u) => ({ body: emptyMetrics(u) }),
    });
    renderWithClient(<TargetPage name="sandbox" />);
    const notice = await screen.findByTestId('target-down');
    expect(within(notice).getByTestId('target-down-reason').textContent).toContain("Can't connect to MySQL server");
    expect(notice.textContent).toMatch(/Last successful poll: \d{4}-\d{2}-\d{2} /);
    expect(screen.getByTestId('target-status').textContent).toBe('down');
    expect(screen.getByTestId('state-error').textContent).toContain('no poll yet for sandbox');
  });

  it('shows the pool-off explanation and no per-group table, heatmap or queue', async () => {
    const server = {
      ...makeTarget().server!,
      thread_handling: 'one-thread-per-connection',
      pool_enabled: false,
      pool_tables: [],
    };
    stubFetch({
      '/api/targets/sandbox': () => ({ body: makeTarget({ server }) }),
      '/api/targets/sandbox/state': () => ({ body: makeState({ groups: [], queue: [], waits: [] }) }),
      '/api/targets/sandbox/metrics': (u) => ({ body: emptyMetrics(u) }),
    });
    renderWithClient(<TargetPage name="sandbox" />);
    const notice = await screen.findByTestId('pool-off-notice');
    expect(notice.textContent).toContain(
      'Thread pool off (one-thread-per-connection): per-group data needs thread_handling=pool-of-threads, which requires a restart',
    );
    expect(notice.textContent).toContain('thread_handling = pool-of-threads');
    await screen.findByTestId('threads-panel');
    expect(screen.queryByTestId('group-table')).toBeNull();
    expect(screen.queryByTestId('queue-table')).toBeNull();
    expect(screen.queryByTestId('group-heatmap')).toBeNull();
    expect(screen.queryByTestId('queue-time-mode')).toBeNull();
  });

  it('renders groups with a stall banner, privilege help and coarse queue-time badge', async () => {
    const target = makeTarget({
      missing_privileges: ['PROCESS'],
      server: { ...makeTarget().server!, exact_stats: false, queue_time_mode: 'coarse' },
    });
    const state = makeState({
      groups: [makeGroup({ group_id: 0 }), makeGroup({ group_id: 1, stalled: true, stall_reason: 'stalls_counter' })],
    });
    stubFetch({
      '/api/targets/sandbox': () => ({ body: target }),
      '/api/targets/sandbox/state': () => ({ body: state }),
      '/api/targets/sandbox/metrics': (u) => ({ body: emptyMetrics(u) }),
    });
    renderWithClient(<TargetPage name="sandbox" />);
    expect((await screen.findByTestId('stalled-banner')).textContent).toContain('group 1: STALLED (stall counter rose)');
    expect(screen.getByTestId('group-row-1').className).toContain('row-stalled');
    expect(screen.getByTestId('queue-time-mode').textContent).toBe(
      'coarse — queue times overstated, enable thread_pool_exact_stats',
    );
    const priv = screen.getByTestId('privilege-warning');
    expect(priv.textContent).toContain("PROCESS missing: queued connections' SQL and transactions are not visible");
    expect(priv.textContent).toContain('GRANT PROCESS ON *.* TO');
    expect(within(screen.getByTestId('queue-table')).getByText('SELECT c FROM sbtest1 WHERE id = 1')).toBeTruthy();
  });

  it('states a MySQL Enterprise stall limit in ms, not its 10 ms units read as ms', async () => {
    const server = { ...makeTarget().server!, flavor: 'mysql' as const, pool_kind: 'mysql_enterprise' as const };
    const pool = makePool({ size: 2, stall_limit_ms: 60, stall_limit_raw: '6 ×10 ms' });
    const variables = { thread_pool_size: '2', thread_pool_stall_limit: '6' };
    let state = makeState({ pool, variables });
    stubFetch({
      '/api/targets/sandbox': () => ({ body: makeTarget({ server }) }),
      '/api/targets/sandbox/state': () => ({ body: state }),
      '/api/targets/sandbox/metrics': (u) => ({ body: emptyMetrics(u) }),
    });
    const { unmount } = renderWithClient(<TargetPage name="sandbox" />);
    await waitFor(() => expect(screen.getByTestId('groups-panel').textContent).toContain('stall_limit 60 ms'));
    unmount();
    // The backend could not tell the unit: the raw value with its unit, never "6 ms".
    state = makeState({ pool: { ...pool, stall_limit_ms: null }, variables });
    renderWithClient(<TargetPage name="sandbox" />);
    await waitFor(() => expect(screen.getByTestId('groups-panel').textContent).toContain('stall_limit 6 ×10 ms'));
    expect(screen.getByTestId('groups-panel').textContent).not.toContain('6 ms');
  });

  it('says so when the target is unknown', async () => {
    stubFetch({
      '/api/targets/nope': () => ({ status: 404, body: { detail: "unknown target 'nope'" } }),
      '/api/targets/nope/state': () => ({ status: 404, body: { detail: "unknown target 'nope'" } }),
      '/api/targets/nope/metrics': () => ({ status: 404, body: { detail: "unknown target 'nope'" } }),
    });
    renderWithClient(<TargetPage name="nope" />);
    expect((await screen.findByTestId('target-not-found')).textContent).toContain("unknown target 'nope'");
  });

  it('appends live poll samples to the fetched history and updates the group table', async () => {
    const t0 = Math.floor(Date.now() / 1000);
    stubFetch({
      '/api/targets/sandbox': () => ({ body: makeTarget() }),
      '/api/targets/sandbox/state': () => ({ body: makeState() }),
      '/api/targets/sandbox/metrics': (u) => ({
        body: {
          ...emptyMetrics(u),
          series: [
            {
              metric: 'tp_group_queue_length',
              labels: { group: '0' },
              points: [
                [t0 - 2, 1],
                [t0 - 1, 2],
              ],
            },
          ],
        },
      }),
    });
    renderWithClient(<TargetPage name="sandbox" />);
    await screen.findByTestId('group-heatmap');
    const es = FakeEventSource.instances.find((e) => e.url === '/api/live?target=sandbox&events=poll')!;
    expect(es).toBeTruthy();
    const ev: PollEvent = {
      target: 'sandbox',
      ts: t0,
      target_info: makeTarget(),
      state: makeState({ groups: [makeGroup({ group_id: 0, queue_length: 42 })] }),
      samples: [
        { metric: 'tp_group_queue_length', labels: { group: '0' }, value: 42 },
        { metric: 'tp_group_stalled', labels: { group: '0' }, value: 1 },
      ],
    };
    act(() => {
      es.emit('open');
      es.emit('poll', ev);
    });
    await waitFor(() => expect(screen.getByTestId('group-queue-0').textContent).toBe('42'));
    expect(screen.getByTestId('live-status').getAttribute('data-status')).toBe('open');
    // the new stalled sample shows up as an outlined heatmap cell
    await waitFor(() => expect(screen.getByTestId('group-heatmap').querySelectorAll('[data-stalled="true"]').length).toBe(1));
  });

  it('says in one line what is wrong now: the stalled group and for how long, the queue, alerts, recommendations', async () => {
    const state = makeState({
      ts: 1000,
      queued_connections: 19,
      groups: [
        makeGroup({ group_id: 0, oldest_queued_ms: 2 }),
        makeGroup({ group_id: 1, stalled: true, stall_reason: 'no_dequeue', oldest_queued_ms: 11.8 }),
      ],
    });
    const firing = makeAlert({
      id: 3,
      target: 'sandbox',
      group: '1',
      summary: 'group 1 stalled',
      started_at: 988,
      fired_at: 988,
    });
    stubFetch({
      '/api/targets/sandbox': () => ({ body: makeTarget() }),
      '/api/targets/sandbox/state': () => ({ body: state }),
      '/api/targets/sandbox/metrics': (u) => ({ body: emptyMetrics(u) }),
      '/api/alerts': () => ({ body: { active: [firing], silences: [] } }),
      '/api/targets/sandbox/recommendations': () => ({
        body: RECOMMENDATIONS,
      }),
    });
    renderWithClient(<TargetPage name="sandbox" />);
    await waitFor(() =>
      expect(screen.getByTestId('now-summary').textContent).toBe(
        'Now: group 1 stalled 12 s, 19 queued, oldest 11.8 ms; 1 alert firing; 1 recommendation',
      ),
    );
    expect(screen.getByTestId('now-summary').getAttribute('data-tone')).toBe('bad');
  });
});
