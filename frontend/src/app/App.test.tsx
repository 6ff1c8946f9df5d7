import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetAuthForTests } from '../api/auth';
import { makeRow, makeState, makeTarget } from '../test/fixtures';
import { calledUrls, installEventSource, stubFetch } from '../test/fakes';
import { App } from './App';

let fetchMock: ReturnType<typeof stubFetch>;

beforeEach(() => {
  installEventSource();
  fetchMock = stubFetch({
    '/api/targets': () => ({ body: [makeTarget()] }),
    '/api/overview': () => ({ body: { ts: 1700000000, targets: [makeRow({ name: 'sandbox' })] } }),
    '/api/targets/sandbox': () => ({ body: makeTarget() }),
    '/api/targets/sandbox/state': () => ({ body: makeState() }),
    '/api/targets/sandbox/metrics': (u) => ({
      body: {
        from: Number(u.searchParams.get('from')),
        to: Number(u.searchParams.get('to')),
        step_s: 1,
        resolution: 'raw',
        series: [],
      },
    }),
  });
});
afterEach(() => vi.unstubAllGlobals());

/** The avg-aggregated /metrics requests (one per history load; a second one asks agg=max for group metrics). */
function metricCalls(): URL[] {
  return calledUrls(fetchMock).filter((u) => u.pathname.endsWith('/metrics') && !u.searchParams.has('agg'));
}

function maxCalls(): URL[] {
  return calledUrls(fetchMock).filter((u) => u.pathname.endsWith('/metrics') && u.searchParams.get('agg') === 'max');
}

describe('App routing and URL range', () => {
  it('navigates from the overview to a target and back with the history API', async () => {
    window.history.replaceState(null, '', '/');
    render(<App />);
    const link = await screen.findByTestId('target-link');
    fireEvent.click(link);
    expect(window.location.pathname).toBe('/targets/sandbox');
    await screen.findByTestId('target-page');
    act(() => {
      window.history.back();
    });
    await screen.findByTestId('overview-page');
    expect(window.location.pathname).toBe('/');
  });

  it('loads the alerts page on first visit, with a loading state until its code arrives', async () => {
    window.history.replaceState(null, '', '/');
    render(<App />);
    await screen.findByTestId('overview-page');
    fireEvent.click(screen.getByTestId('nav-alerts'));
    expect(window.location.pathname).toBe('/alerts');
    const loading = screen.getByTestId('page-loading');
    expect(loading.getAttribute('role')).toBe('status');
    expect(loading.textContent).toBe('Loading…');
    await screen.findByTestId('alerts-page');
    expect(screen.queryByTestId('page-loading')).toBeNull();
  });

  it('keeps the range in the query, refetches on change and restores it on back', async () => {
    window.history.replaceState(null, '', '/targets/sandbox?range=5m');
    render(<App />);
    await waitFor(() => expect(metricCalls()).toHaveLength(1));
    const first = metricCalls()[0];
    expect(Number(first.searchParams.get('to')) - Number(first.searchParams.get('from'))).toBeGreaterThanOrEqual(299);
    expect(first.searchParams.get('points')).toBe('600');
    expect(first.searchParams.getAll('metric')).toContain('qps');
    // group metrics come max-aggregated so a spike or one stalled poll survives downsampling
    expect(maxCalls()).toHaveLength(1);
    expect(maxCalls()[0].searchParams.getAll('metric')).toEqual([
      'tp_group_queue_length',
      'tp_group_active_threads',
      'tp_group_stalled',
    ]);

    fireEvent.click(await screen.findByTestId('range-1h'));
    expect(window.location.search).toBe('?range=1h');
    await waitFor(() => expect(metricCalls()).toHaveLength(2));
    const second = metricCalls()[1];
    expect(Number(second.searchParams.get('to')) - Number(second.searchParams.get('from'))).toBeGreaterThanOrEqual(3599);
    expect(screen.getByTestId('range-1h').getAttribute('aria-pressed')).toBe('true');

    await act(async () => {
      window.history.back();
      await new Promise((r) => setTimeout(r, 0));
    });
    await waitFor(() => expect(window.location.search).toBe('?range=5m'));
    expect(screen.getByTestId('range-5m').getAttribute('aria-pressed')).toBe('true');
  });
});

describe('App when reads need a login', () => {
  it('shows the login page and no data after a read answers 401, and the pages once logged in', async () => {
    resetAuthForTests();
    let loggedIn = false;
    const refused = { status: 401, body: { detail: 'log in to read: this Poolscope has users configured' } };
    fetchMock = stubFetch({
      '/api/auth/me': () =>
        loggedIn ? { body: { name: 'vi', role: 'viewer' } } : { status: 401, body: { detail: 'not logged in' } },
      '/api/auth/login': () => {
        loggedIn = true;
        return { body: { name: 'vi', role: 'viewer' } };
      },
      '/api/auth/logout': () => ({ body: {} }),
      '/api/targets': () => (loggedIn ? { body: [makeTarget()] } : refused),
      '/api/overview': () => (loggedIn ? { body: { ts: 1700000000, targets: [makeRow({ name: 'sandbox' })] } } : refused),
      '/api/alerts': () => (loggedIn ? { body: { active: [], silences: [] } } : refused),
    });
    window.history.replaceState(null, '', '/');
    render(<App />);
    expect(await screen.findByTestId('login-page')).toBeTruthy();
    expect(screen.queryByTestId('overview-page')).toBeNull();
    expect(screen.queryByTestId('target-link')).toBeNull();

    fireEvent.change(screen.getByTestId('login-username'), { target: { value: 'vi' } });
    fireEvent.change(screen.getByTestId('login-password'), { target: { value: 'pw' } });
    fireEvent.click(screen.getByTestId('login-submit'));
    expect(await screen.findByTestId('target-link')).toBeTruthy();
    expect(screen.queryByTestId('login-page')).toBeNull();
    expect(window.location.pathname).toBe('/');

    // Logging out shows the login page again, and no data.
    loggedIn = false;
    fireEvent.click(screen.getByTestId('logout'));
    expect(await screen.findByTestId('login-page')).toBeTruthy();
    expect(screen.queryByTestId('target-link')).toBeNull();
    resetAuthForTests();
  });

  it('shows the login page when /api/auth/me says reads need a login (reads here answer 404, not 401)', async () => {
    resetAuthForTests();
    fetchMock = stubFetch({
      '/api/auth/me': () => ({
        status: 401,
        body: { detail: 'log in to read: this Poolscope has users configured' },
        headers: { 'X-Poolscope-Reads': 'login' },
      }),
    });
    window.history.replaceState(null, '', '/targets/sandbox');
    render(<App />);
    expect(await screen.findByTestId('login-page')).toBeTruthy();
    expect(screen.getByTestId('login-note').textContent).toContain('log in to read');
    expect(screen.queryByTestId('target-page')).toBeNull();
    resetAuthForTests();
  });
});
