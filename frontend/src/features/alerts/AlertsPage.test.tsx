import { screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetAuthForTests } from '../../api/auth';
import { setPrefs } from '../../lib/prefs';
import { makeAlert } from '../../test/fixtures';
import { installEventSource, stubFetch } from '../../test/fakes';
import { renderWithClient } from '../../test/render';
import { AlertsPage } from './AlertsPage';

describe('AlertsPage', () => {
  beforeEach(() => {
    installEventSource();
    resetAuthForTests({ status: 'anonymous', user: null, note: null });
  });
  afterEach(() => {
    setPrefs({ tz: 'local' });
    vi.unstubAllGlobals();
    resetAuthForTests();
  });

  it('names the time zone of the times in its history, as every other time in the UI does', async () => {
    setPrefs({ tz: 'utc' });
    stubFetch({
      '/api/alerts': () => ({ body: { active: [], silences: [] } }),
      '/api/alerts/history': () => ({
        body: [makeAlert({ status: 'resolved', fired_at: 1_700_000_040, resolved_at: 1_700_000_100 })],
      }),
      '/api/alerts/deliveries': () => ({ body: [] }),
    });
    renderWithClient(<AlertsPage />);
    const cells = (await screen.findByTestId('history-row')).querySelectorAll('td');
    expect(cells[0].textContent).toBe('2023-11-14 22:14:00 UTC');
    expect(cells[1].textContent).toBe('2023-11-14 22:15:00 UTC');
  });
});
