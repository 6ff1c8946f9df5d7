import { act, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeTarget } from '../../test/fixtures';
import { calledUrls, FakeEventSource, installEventSource, stubFetch } from '../../test/fakes';
import { OverviewPage } from './OverviewPage';
import { renderWithClient } from '../../test/render';

beforeEach(() => {
  installEventSource();
  // The card view; the fleet table (the default view) is covered by FleetTable.test.tsx.
  window.history.replaceState(null, '', '/?view=cards');
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

const targetCalls = (f: ReturnType<typeof stubFetch>) => calledUrls(f).filter((u) => u.pathname === '/api/targets').length;

describe('OverviewPage', () => {
  it('updates a card from SSE poll events', async () => {
    stubFetch({ '/api/targets': () => ({ body: [makeTarget()] }) });
    renderWithClient(<OverviewPage />);
    const card = await screen.findByTestId('target-card-sandbox');
    expect(within(card).getByTestId('summary-queue-length').textContent).toContain('3');
    const es = FakeEventSource.latest();
    expect(es.url).toBe('/api/live?events=poll');
    act(() => {
      es.emit('open');
      es.emit('poll', {
        target: 'sandbox',
        ts: 1700000001,
        target_info: makeTarget({ summary: { ...makeTarget().summary!, queue_length: 99, stalled_groups: 1 } }),
        state: null,
        samples: [],
      });
    });
    expect(within(card).getByTestId('summary-queue-length').textContent).toContain('99');
    expect(screen.getByTestId('stalled-banner').textContent).toContain('sandbox');
    expect(screen.getByTestId('live-status').getAttribute('data-status')).toBe('open');
  });

  it('falls back to refetching every 5 s while the live stream is broken', async () => {
    vi.useFakeTimers();
    const fetchMock = stubFetch({ '/api/targets': () => ({ body: [makeTarget()] }) });
    renderWithClient(<OverviewPage />);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(10);
    });
    expect(targetCalls(fetchMock)).toBe(1);
    act(() => FakeEventSource.latest().emit('error'));
    expect(screen.getByTestId('live-status').textContent).toContain('refetching every 5 s');
    await act(async () => {
      await vi.advanceTimersByTimeAsync(5000);
    });
    expect(targetCalls(fetchMock)).toBe(2);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(5000);
    });
    expect(targetCalls(fetchMock)).toBe(3);
    // stream back: the 5 s polling stops
    act(() => FakeEventSource.latest().emit('open'));
    await act(async () => {
      await vi.advanceTimersByTimeAsync(10000);
    });
    expect(targetCalls(fetchMock)).toBe(3);
  });

  it('says so when the backend cannot be reached', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn<() => Promise<Response>>(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    renderWithClient(<OverviewPage />);
    const err = await screen.findByTestId('backend-error');
    expect(err.textContent).toContain('Backend unreachable');
    expect(err.textContent).toContain('No answer from the Poolscope API');
  });
});
