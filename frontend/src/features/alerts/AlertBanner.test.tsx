import { act, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sortAlerts } from '../../api/alerts';
import { applyAlertEvent, parseAlertEvent } from '../../api/live';
import { keys } from '../../api/queries';
import type { AlertsResponse } from '../../api/types';
import { makeAlert } from '../../test/fixtures';
import { FakeEventSource, installEventSource, stubFetch } from '../../test/fakes';
import { AlertBanner } from './AlertBanner';
import { renderWithClient } from '../../test/render';

describe('alert state', () => {
  it('adds firing alerts and drops resolved ones by fingerprint', () => {
    let current: AlertsResponse = { active: [], silences: [] };
    current = applyAlertEvent(current, { target: 'db1', ts: 1, transition: 'firing', alert: makeAlert() });
    current = applyAlertEvent(current, {
      target: 'db1',
      ts: 2,
      transition: 'firing',
      alert: makeAlert({ fingerprint: 'fp2', group: '1' }),
    });
    expect(current.active.map((a) => a.fingerprint)).toEqual(['fp1', 'fp2']);
    current = applyAlertEvent(current, {
      target: 'db1',
      ts: 3,
      transition: 'acknowledged',
      alert: makeAlert({ acked_by: 'op' }),
    });
    expect(current.active.find((a) => a.fingerprint === 'fp1')?.acked_by).toBe('op');
    current = applyAlertEvent(current, {
      target: 'db1',
      ts: 4,
      transition: 'resolved',
      alert: makeAlert({ status: 'resolved' }),
    });
    expect(current.active.map((a) => a.fingerprint)).toEqual(['fp2']);
  });

  it('orders firing critical first, then newest', () => {
    const sorted = sortAlerts([
      makeAlert({ fingerprint: 'pending', status: 'pending', fired_at: null, started_at: 300 }),
      makeAlert({ fingerprint: 'warn', severity: 'warning', fired_at: 400 }),
      makeAlert({ fingerprint: 'old', fired_at: 100 }),
      makeAlert({ fingerprint: 'new', fired_at: 200 }),
    ]);
    expect(sorted.map((a) => a.fingerprint)).toEqual(['new', 'old', 'warn', 'pending']);
  });

  it('never takes an acknowledgement back: a change from a process that has not heard of it keeps it', () => {
    let current: AlertsResponse = { active: [makeAlert({ acked_by: 'ann', acked_at: 150 })], silences: [] };
    // The poller that holds the alert links its snapshot, unaware of the ack an API process took.
    current = applyAlertEvent(current, { target: 'db1', ts: 160, transition: 'updated', alert: makeAlert({ snapshot_id: 7 }) });
    expect(current.active[0]).toMatchObject({ acked_by: 'ann', acked_at: 150, snapshot_id: 7 });
    // The same fingerprint firing again later is another alert: nobody acknowledged that one.
    current = applyAlertEvent(current, { target: 'db1', ts: 500, transition: 'firing', alert: makeAlert({ fired_at: 500 }) });
    expect(current.active[0].acked_by).toBeNull();
  });

  it('puts acknowledged and silenced alerts after every other, whatever their severity and age', () => {
    const sorted = sortAlerts([
      makeAlert({ fingerprint: 'silenced', fired_at: 900, silenced_by: 1 }),
      makeAlert({ fingerprint: 'acked', fired_at: 800, acked_by: 'ann' }),
      makeAlert({ fingerprint: 'pending', status: 'pending', fired_at: null, started_at: 300 }),
      makeAlert({ fingerprint: 'warn', severity: 'warning', fired_at: 100 }),
    ]);
    expect(sorted.map((a) => a.fingerprint)).toEqual(['warn', 'pending', 'silenced', 'acked']);
  });

  it('rejects malformed events', () => {
    expect(parseAlertEvent('nope')).toBeNull();
    expect(parseAlertEvent('{"alert": {}}')).toBeNull();
  });
});

describe('AlertBanner', () => {
  beforeEach(() => {
    installEventSource();
    stubFetch({ '/api/alerts': () => ({ body: { active: [], silences: [] } }) });
  });
  afterEach(() => vi.unstubAllGlobals());

  it('shows an alert pushed over the live channel and hides it when resolved', async () => {
    const { client } = renderWithClient(<AlertBanner />);
    await waitFor(() => expect(FakeEventSource.instances.length).toBe(1));
    const es = FakeEventSource.latest();
    expect(es.url).toBe('/api/live?events=alert');
    // The first list arrives before the stream's changes are applied to it.
    await waitFor(() => expect(client.getQueryData(keys.current)).toEqual({ active: [], silences: [] }));
    expect(screen.queryByTestId('alert-banner')).toBeNull();
    act(() => es.emit('alert', { target: 'db1', ts: 1, transition: 'firing', alert: makeAlert() }));
    expect((await screen.findByTestId('alert-banner-count')).textContent).toContain('1 alert firing');
    expect(screen.getByTestId('alert-banner-item').textContent).toContain('db1: thread group 0 stalled');
    act(() => es.emit('alert', { target: 'db1', ts: 2, transition: 'resolved', alert: makeAlert({ status: 'resolved' }) }));
    await waitFor(() => expect(screen.queryByTestId('alert-banner')).toBeNull());
  });

  it('is led by what nobody handles: acknowledged and silenced alerts come after, greyed, with who and until when', async () => {
    const silence = {
      id: 4,
      target: 'db1',
      rule: null,
      group: null,
      starts_at: 100,
      ends_at: 7300,
      created_by: 'ann',
      comment: '',
    };
    stubFetch({
      '/api/alerts': () => ({
        body: {
          active: [
            makeAlert({ fingerprint: 's', summary: 'silenced one', fired_at: 900, silenced_by: 4 }),
            makeAlert({ fingerprint: 'a', summary: 'acked one', fired_at: 800, acked_by: 'bob', acked_at: 850 }),
            makeAlert({ fingerprint: 'w', summary: 'loud one', severity: 'warning', fired_at: 100 }),
          ],
          silences: [silence],
        },
      }),
    });
    renderWithClient(<AlertBanner />);
    const banner = await screen.findByTestId('alert-banner');
    const items = screen.getAllByTestId('alert-banner-item');
    expect(items.map((i) => i.textContent?.includes('loud one'))).toEqual([true, false, false]);
    expect(items.map((i) => i.dataset.handled)).toEqual(['false', 'true', 'true']);
    // The critical ones are handled: the banner is only as loud as the warning nobody is on.
    expect(banner.className).toContain('alert-banner-warning');
    expect(banner.getAttribute('role')).toBe('alert');
    expect(screen.getByTestId('alert-banner-count').textContent).toBe('3 alerts firing (1 silenced, 1 acknowledged)');
    expect(items[1].className).toContain('alert-handled');
    expect(items.find((i) => i.textContent?.includes('silenced one'))?.textContent).toMatch(
      /silenced by ann until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/,
    );
    expect(items.find((i) => i.textContent?.includes('acked one'))?.textContent).toMatch(
      /acknowledged by bob at .*, until it resolves/,
    );
  });

  it('says how many are silenced and does not count pending ones', async () => {
    stubFetch({
      '/api/alerts': () => ({
        body: {
          active: [makeAlert({ silenced_by: 4 }), makeAlert({ fingerprint: 'p', status: 'pending', fired_at: null })],
          silences: [],
        },
      }),
    });
    renderWithClient(<AlertBanner />);
    expect((await screen.findByTestId('alert-banner-count')).textContent).toContain('1 alert firing (1 silenced)');
    expect(screen.getByTestId('alert-banner').className).toContain('alert-banner-muted');
    // Nothing unhandled: a status, not an alert announced to a screen reader.
    expect(screen.getByTestId('alert-banner').getAttribute('role')).toBe('status');
  });

  it('follows an ack and a silence made in another browser through the live feed, and learns who silenced', async () => {
    const silence = {
      id: 9,
      target: 'db1',
      rule: null,
      group: null,
      starts_at: 100,
      ends_at: 7300,
      created_by: 'cat',
      comment: '',
    };
    let silences: (typeof silence)[] = [];
    let alert = makeAlert();
    const fetchMock = stubFetch({ '/api/alerts': () => ({ body: { active: [alert], silences } }) });
    renderWithClient(<AlertBanner />);
    const es = FakeEventSource.latest();
    expect((await screen.findByTestId('alert-banner')).className).toContain('alert-banner-critical');
    alert = makeAlert({ acked_by: 'bob', acked_at: 2 });
    act(() => es.emit('alert', { target: 'db1', ts: 2, transition: 'acknowledged', alert }));
    await waitFor(() => expect(screen.getByTestId('alert-banner').className).toContain('alert-banner-muted'));
    expect(screen.getByTestId('alert-banner-item').textContent).toContain('acknowledged by bob');
    const fetched = fetchMock.mock.calls.length;
    silences = [silence];
    alert = makeAlert({ silenced_by: 9, acked_by: 'bob', acked_at: 2 });
    act(() => es.emit('alert', { target: 'db1', ts: 3, transition: 'silenced', alert }));
    // Silence #9 is not known here: the list is fetched again, and names who and until when.
    await waitFor(() => expect(screen.getByTestId('alert-banner-item').textContent).toContain('silenced by cat until'));
    expect(fetchMock.mock.calls.length).toBeGreaterThan(fetched);
    expect(screen.getByTestId('alert-banner-count').textContent).toBe('1 alert firing (1 silenced)');
  });
});
