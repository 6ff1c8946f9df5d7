import { act, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { METRICS } from '../../api/metrics.gen';
import type { OverviewRow } from '../../api/types';
import { makeRow } from '../../test/fixtures';
import { stubFetch } from '../../test/fakes';
import { applyQuery, DEFAULT_QUERY, parseQuery, queryToSearch } from './fleet';
import { OverviewPage } from './OverviewPage';
import { renderWithClient } from '../../test/render';

const FLEET: OverviewRow[] = [
  makeRow({ name: 'calm', tags: { cluster: 'eu', role: 'replica' }, queue_length: 0, qps: 900 }),
  makeRow({ name: 'deep', tags: { cluster: 'eu', role: 'primary' }, queue_length: 40, longest_wait_ms: 90, qps: 50 }),
  makeRow({ name: 'waiting', tags: { cluster: 'us' }, queue_length: 40, longest_wait_ms: 900, qps: null }),
  makeRow({
    name: 'gone',
    status: 'down',
    reason: 'cannot connect',
    groups: null,
    stalled_groups: null,
    queue_length: null,
    qps: null,
  }),
  makeRow({ name: 'zz-stuck', tags: { cluster: 'us' }, stalled_groups: 1, queue_length: 3 }),
];

const names = () =>
  screen
    .queryAllByRole('row')
    .map((r) => r.getAttribute('data-name'))
    .filter(Boolean);

async function renderAt(url: string, rows: OverviewRow[] = FLEET) {
  window.history.replaceState(null, '', url);
  const fetchMock = stubFetch({ '/api/overview': () => ({ body: { ts: 1700000000, targets: rows } }) });
  renderWithClient(<OverviewPage />);
  await screen.findByTestId('fleet');
  return fetchMock;
}

beforeEach(() => window.history.replaceState(null, '', '/'));
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe('fleet ordering', () => {
  it('puts the worst first: stalled, down, deepest queue, longest wait, then by name', () => {
    expect(applyQuery(FLEET, DEFAULT_QUERY).map((r) => r.name)).toEqual(['zz-stuck', 'gone', 'waiting', 'deep', 'calm']);
  });

  it('sorts a figure either way with missing figures last', () => {
    const q = { ...DEFAULT_QUERY, sort: 'qps' as const, desc: true };
    expect(applyQuery(FLEET, q).map((r) => r.name)).toEqual(['calm', 'zz-stuck', 'deep', 'gone', 'waiting']);
    expect(applyQuery(FLEET, { ...q, desc: false }).map((r) => r.name)).toEqual(['deep', 'zz-stuck', 'calm', 'gone', 'waiting']);
  });

  it('round-trips the query through the URL, leaving defaults and other params alone', () => {
    const q = { sort: 'wait' as const, desc: false, status: 'up' as const, tags: ['cluster:eu'], q: 'dee' };
    const search = queryToSearch(q, '?view=x');
    expect(search).toBe('?view=x&sort=wait&dir=asc&status=up&tag=cluster%3Aeu&q=dee');
    expect(parseQuery(search)).toEqual(q);
    expect(queryToSearch(DEFAULT_QUERY)).toBe('');
    expect(parseQuery('?sort=bogus&status=nope&tag=novalue')).toEqual(DEFAULT_QUERY);
  });
});

describe('FleetTable on the overview page', () => {
  it('shows the stalled target first and the down one with its reason', async () => {
    await renderAt('/');
    expect(await screen.findByTestId('fleet-row-zz-stuck')).toBeTruthy();
    expect(names()).toEqual(['zz-stuck', 'gone', 'waiting', 'deep', 'calm']);
    expect(within(screen.getByTestId('fleet-row-gone')).getByTestId('fleet-status').textContent).toContain('cannot connect');
    expect(screen.getByTestId('stalled-banner').textContent).toContain('zz-stuck');
  });

  it('sorts by a column header and puts the sort in the URL; back restores worst first', async () => {
    await renderAt('/');
    await screen.findByTestId('fleet-row-calm');
    fireEvent.click(screen.getByTestId('fleet-sort-name'));
    expect(window.location.search).toBe('?sort=name');
    expect(names()).toEqual(['calm', 'deep', 'gone', 'waiting', 'zz-stuck']);
    fireEvent.click(screen.getByTestId('fleet-sort-name'));
    expect(window.location.search).toBe('?sort=name&dir=desc');
    expect(names()[0]).toBe('zz-stuck');
    act(() => window.history.back());
    await vi.waitFor(() => expect(window.location.search).toBe('?sort=name'));
    act(() => window.history.back());
    await vi.waitFor(() => expect(window.location.search).toBe(''));
    expect(names()[0]).toBe('zz-stuck');
  });

  it('explains each metric column from the catalog, and opening the help does not sort', async () => {
    await renderAt('/');
    await screen.findByTestId('fleet-row-calm');
    fireEvent.click(screen.getByTestId('fleet-help-wait'));
    const wait = screen.getByTestId('fleet-help-wait-text').textContent;
    expect(wait).toContain(METRICS.tp_queue_wait_max_ms.help);
    expect(wait).toContain('milliseconds');
    expect(window.location.search).toBe('');
    fireEvent.click(screen.getByTestId('fleet-help-threads'));
    const threads = screen.getByTestId('fleet-help-threads-text').textContent;
    expect(threads).toContain(METRICS.threads_connected.help);
    expect(threads).toContain(METRICS.threads_running.help);
    // Columns that are not a series of the catalog (name, alerts, last poll) have no help.
    expect(screen.queryByTestId('fleet-help-name')).toBeNull();
    expect(screen.queryByTestId('fleet-help-alerts')).toBeNull();
  });

  it('filters by status and tag, searches names and tags, all from and into the URL', async () => {
    await renderAt('/?status=up&tag=cluster:eu');
    await screen.findByTestId('fleet-row-deep');
    expect(names()).toEqual(['deep', 'calm']);
    expect(screen.getByTestId('fleet-count').textContent).toBe('2 of 5 targets');

    fireEvent.change(screen.getByTestId('fleet-status-filter'), { target: { value: 'all' } });
    fireEvent.change(screen.getByTestId('fleet-tag-filter'), { target: { value: 'cluster:us' } });
    expect(window.location.search).toBe('?tag=cluster%3Aus');
    expect(names()).toEqual(['zz-stuck', 'waiting']);

    fireEvent.change(screen.getByTestId('fleet-tag-filter'), { target: { value: '' } });
    fireEvent.change(screen.getByTestId('fleet-search'), { target: { value: 'primary' } });
    expect(names()).toEqual(['deep']); // a tag value
    fireEvent.change(screen.getByTestId('fleet-search'), { target: { value: 'GON' } });
    expect(names()).toEqual(['gone']); // a name, any case
    expect(new URLSearchParams(window.location.search).get('q')).toBe('GON');
    fireEvent.change(screen.getByTestId('fleet-status-filter'), { target: { value: 'stalled' } });
    expect(screen.getByTestId('fleet-empty')).toBeTruthy();
  });

  it('renders only a window of 1,000 rows, and the worst of them at the top', async () => {
    const many = Array.from({ length: 1000 }, (_, i) =>
      makeRow({ name: `db-${String(i).padStart(4, '0')}`, queue_length: i % 7 }),
    );
    many[777] = makeRow({ name: 'db-0777', stalled_groups: 2 });
    await renderAt('/', many);
    await screen.findByTestId('fleet-row-db-0777');
    const rendered = names();
    expect(rendered[0]).toBe('db-0777');
    expect(rendered.length).toBeGreaterThan(10);
    expect(rendered.length).toBeLessThan(60);
    expect(screen.getByTestId('fleet-count').textContent).toBe('1,000 targets');
    // The scroll area is as tall as every row, so the scrollbar covers the whole fleet.
    const inner = screen.getByTestId('fleet-scroll').firstElementChild as HTMLElement;
    expect(inner.style.height).toBe(`${1000 * 36}px`);
  });

  it('refreshes the rows from /api/overview every 2 s', async () => {
    vi.useFakeTimers();
    let queue = 0;
    window.history.replaceState(null, '', '/');
    const fetchMock = stubFetch({
      '/api/overview': () => ({ body: { ts: 1, targets: [makeRow({ name: 'one', queue_length: queue })] } }),
    });
    renderWithClient(<OverviewPage />);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(10);
    });
    expect(within(screen.getByTestId('fleet-row-one')).getByTestId('fleet-queue').textContent).toBe('0');
    queue = 12;
    await act(async () => {
      await vi.advanceTimersByTimeAsync(2000);
    });
    expect(within(screen.getByTestId('fleet-row-one')).getByTestId('fleet-queue').textContent).toBe('12');
    expect(fetchMock.mock.calls.length).toBe(2);
  });
});
