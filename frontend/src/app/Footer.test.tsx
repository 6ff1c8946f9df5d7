import { screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stubFetch } from '../test/fakes';
import { Footer } from './Footer';
import { renderWithClient } from '../test/render';

afterEach(() => vi.unstubAllGlobals());

describe('Footer', () => {
  it('shows the version the backend reports', async () => {
    stubFetch({ '/api/health': () => ({ body: { status: 'ok', version: '9.8.7' } }) });
    renderWithClient(<Footer />);
    expect((await screen.findByTestId('app-version')).textContent).toBe(' 9.8.7');
    expect(screen.getByTestId('app-footer').textContent).toBe('Poolscope 9.8.7');
  });

  it('shows no version while the backend does not answer', async () => {
    const fetchMock = stubFetch({ '/api/health': () => ({ status: 503, body: { detail: 'down' } }) });
    renderWithClient(<Footer />);
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalled());
    expect(screen.getByTestId('app-footer').textContent).toBe('Poolscope');
    expect(screen.queryByTestId('app-version')).toBeNull();
  });
});
