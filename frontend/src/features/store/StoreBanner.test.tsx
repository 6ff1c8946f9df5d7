import { screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { StoreStatus } from '../../api/types';
import { stubFetch } from '../../test/fakes';
import { renderWithClient } from '../../test/render';
import { StoreBanner } from './StoreBanner';

const failing: StoreStatus = {
  status: 'failing',
  since: 1700000000,
  error: 'ConnectionRefusedError: [Errno 111] Connection refused',
  reads: 'failing',
  writers: [],
  buffered_samples: 1234,
  dropped_samples: 0,
};

afterEach(() => vi.unstubAllGlobals());

describe('StoreBanner', () => {
  it('says the store is unreachable since when, and what the pollers hold (not "Backend unreachable")', async () => {
    stubFetch({ '/api/store': () => ({ body: failing }) });
    renderWithClient(<StoreBanner />);
    const banner = await screen.findByTestId('store-banner');
    expect(banner.textContent).toMatch(/^Store unreachable since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    expect(screen.getByTestId('store-held').textContent).toBe('live data held in memory; 1,234 samples buffered');
    expect(banner.textContent).toContain('Connection refused');
    expect(banner.textContent).not.toContain('Backend unreachable');
  });

  it('says "failing" when reads work but writes do not (a full disk), with what was dropped', async () => {
    stubFetch({
      '/api/store': () => ({
        body: { ...failing, reads: 'ok', error: 'OperationalError: database or disk is full', dropped_samples: 40 },
      }),
    });
    renderWithClient(<StoreBanner />);
    const banner = await screen.findByTestId('store-banner');
    expect(banner.textContent).toMatch(/^Store failing since /);
    expect(screen.getByTestId('store-held').textContent).toContain('40 samples dropped (buffer full)');
  });

  it('says nothing while the store is fine', async () => {
    const fetchMock = stubFetch({ '/api/store': () => ({ body: { ...failing, status: 'ok', reads: 'ok' } }) });
    renderWithClient(<StoreBanner />);
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalled());
    expect(screen.queryByTestId('store-banner')).toBeNull();
  });
});
