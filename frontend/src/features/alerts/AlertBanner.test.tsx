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
  });
});
