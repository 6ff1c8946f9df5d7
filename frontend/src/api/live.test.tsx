import { useQuery } from '@tanstack/react-query';
import { act, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setPrefs } from '../lib/prefs';
import { makeAlert, makeState, makeTarget } from '../test/fixtures';
import { FakeEventSource, installEventSource, stubFetch } from '../test/fakes';
import { renderWithClient } from '../test/render';
import { useAlertFeed, useLiveFeed } from './live';
import { currentAlertsQuery, historyQuery, keys, stateQuery } from './queries';
import type { PollEvent } from './types';

const LIVE = { kind: 'live' } as const;
const CHARTED = { max: ['tp_group_queue_length'], avg: ['qps'] };

function poll(ts: number, queue: number): PollEvent {
  return {
    target: 'db',
    ts,
    target_info: makeTarget({ name: 'db' }),
    state: makeState({ ts }),
    samples: [
      { metric: 'tp_group_queue_length', labels: { group: '0' }, value: queue },
      { metric: 'not_charted', labels: {}, value: 1 },
    ],
  };
}

function Feed({ id }: { id: string }) {
  const status = useLiveFeed('db');
  const state = useQuery(stateQuery('db')).data;
  return (
    <div data-testid={id} data-status={status}>
      {state?.ts ?? 'none'}
    </div>
  );
}

beforeEach(() => installEventSource());
afterEach(() => vi.unstubAllGlobals());

describe('the live feed in the query cache', () => {
  it('opens one stream for every user of a target, and writes each poll into the cache', async () => {
    stubFetch({ '/api/targets/db/state': () => ({ body: makeState({ ts: 100 }) }) });
    const { client, unmount } = renderWithClient(
      <>
        <Feed id="a" />
        <Feed id="b" />
      </>,
    );
    await waitFor(() => expect(screen.getByTestId('a').textContent).toBe('100'));
    expect(FakeEventSource.instances).toHaveLength(1);
    const es = FakeEventSource.latest();
    act(() => {
      es.emit('open');
      es.emit('poll', poll(101, 5));
    });
    await waitFor(() => expect(screen.getByTestId('b').textContent).toBe('101'));
    expect(screen.getByTestId('b').getAttribute('data-status')).toBe('open');
    expect(client.getQueryData(keys.targetInfo('db'))).toEqual(makeTarget({ name: 'db' }));
    unmount();
    expect(es.closed).toBe(true);
  });

  it('extends a live history, with the polls that came while its answer was on its way', async () => {
    let answer: (() => void) | null = null;
    const now = Math.floor(Date.now() / 1000);
    stubFetch({
      '/api/targets/db/metrics': (u) => ({
        body: {
          from: now - 300,
          to: now,
          step_s: 1,
          resolution: 'raw',
          series: u.searchParams.get('agg')
            ? [{ metric: 'tp_group_queue_length', labels: { group: '0' }, points: [[now - 1, 1]] }]
            : [],
        },
      }),
    });
    const gate = new Promise<void>((resolve) => (answer = resolve));
    function History() {
      useLiveFeed('db');
      const h = useQuery({
        ...historyQuery('db', LIVE, 100, CHARTED),
        queryFn: async (ctx) => {
          await gate;
          return historyQuery('db', LIVE, 100, CHARTED).queryFn!(ctx as never);
        },
      }).data;
      const points = h?.series.find((s) => s.metric === 'tp_group_queue_length')?.points ?? [];
      return <div data-testid="points">{points.map(([, v]) => v).join(',')}</div>;
    }
    renderWithClient(<History />);
    const es = FakeEventSource.latest();
    act(() => es.emit('poll', poll(now + 1, 7)));
    act(() => answer!());
    await waitFor(() => expect(screen.getByTestId('points').textContent).toBe('1,7'));
    act(() => es.emit('poll', poll(now + 2, 9)));
    await waitFor(() => expect(screen.getByTestId('points').textContent).toBe('1,7,9'));
  });

  it('applies nothing while paused', async () => {
    stubFetch({ '/api/targets/db/state': () => ({ body: makeState({ ts: 100 }) }) });
    const { client } = renderWithClient(<Feed id="a" />);
    await waitFor(() => expect(screen.getByTestId('a').textContent).toBe('100'));
    act(() => setPrefs({ paused: true }));
    expect(screen.getByTestId('a').getAttribute('data-status')).toBe('paused');
    act(() => FakeEventSource.latest().emit('poll', poll(101, 5)));
    expect((client.getQueryData(keys.state('db')) as { ts: number }).ts).toBe(100);
    act(() => setPrefs({ paused: false }));
    act(() => FakeEventSource.latest().emit('poll', poll(102, 5)));
    await waitFor(() => expect(screen.getByTestId('a').textContent).toBe('102'));
  });
});

function AlertFeed() {
  useAlertFeed();
  const alerts = useQuery(currentAlertsQuery).data;
  return <div data-testid="alerts">{alerts?.active.length ?? 'none'}</div>;
}

describe('desktop notifications', () => {
  it('notifies each firing once: from the stream, or from the list fetched when the stream opens if it fired after the page opened', async () => {
    const shown: string[] = [];
    class FakeNotification {
      static permission = 'granted';
      constructor(title: string) {
        shown.push(title);
      }
      addEventListener() {}
    }
    vi.stubGlobal('Notification', FakeNotification);
    const now = Date.now() / 1000;
    const before = makeAlert({ fingerprint: 'old', summary: 'old stall', fired_at: now - 600 });
    const missed = makeAlert({ fingerprint: 'missed', summary: 'missed stall', fired_at: now + 1 });
    let active = [before];
    stubFetch({ '/api/alerts': () => ({ body: { active, silences: [] } }) });
    renderWithClient(<AlertFeed />);
    await waitFor(() => expect(screen.getByTestId('alerts').textContent).toBe('1'));
    // It fired while the stream was still connecting: only the list fetched on open tells it.
    active = [before, missed];
    act(() => FakeEventSource.latest().emit('open'));
    await waitFor(() => expect(shown).toEqual(['🔴 missed stall']));
    // The stream tells a firing: notified; told again, or listed again on a reconnect: not twice.
    const told = makeAlert({ fingerprint: 'told', summary: 'told stall', fired_at: now + 2 });
    act(() => FakeEventSource.latest().emit('alert', { transition: 'firing', alert: told, target: 'db1', ts: now + 2 }));
    act(() => FakeEventSource.latest().emit('alert', { transition: 'firing', alert: told, target: 'db1', ts: now + 2 }));
    active = [before, missed, told];
    act(() => FakeEventSource.latest().emit('open'));
    await waitFor(() => expect(screen.getByTestId('alerts').textContent).toBe('3'));
    expect(shown).toEqual(['🔴 missed stall', '🔴 told stall']);
  });
});
