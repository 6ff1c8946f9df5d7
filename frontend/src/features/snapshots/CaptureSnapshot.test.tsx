import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resetAuthForTests } from '../../api/auth';
import { asRequest, stubFetch } from '../../test/fakes';
import { renderWithClient } from '../../test/render';
import { CaptureSnapshot } from './CaptureSnapshot';

afterEach(() => {
  vi.unstubAllGlobals();
  resetAuthForTests();
});

describe('CaptureSnapshot', () => {
  it('names the snapshot at capture, for the target being viewed, then opens it', async () => {
    resetAuthForTests({ status: 'user', user: { name: 'op', role: 'operator' }, note: null });
    const fetchMock = stubFetch({ '/api/targets/db2/snapshots': () => ({ status: 201, body: { id: 42 } }) });
    renderWithClient(<CaptureSnapshot targets={['db1', 'db2']} initial="db2" />);
    fireEvent.click(screen.getByTestId('capture-snapshot'));
    expect(screen.getByRole('dialog', { name: 'Capture a snapshot' })).toBeTruthy();
    expect((screen.getByTestId('capture-target') as HTMLSelectElement).value).toBe('db2');
    expect(screen.getByTestId('capture-title').getAttribute('placeholder')).toBe('db2: snapshot');
    fireEvent.change(screen.getByTestId('capture-title'), { target: { value: '  queue after the deploy ' } });
    fireEvent.click(screen.getByTestId('capture-confirm'));
    await waitFor(() => expect(window.location.pathname).toBe('/snapshots/42'));
    const sent = asRequest(fetchMock.mock.calls[0]);
    expect(JSON.parse(await sent.text())).toEqual({ title: 'queue after the deploy' });
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('is not there for a viewer', () => {
    resetAuthForTests({ status: 'user', user: { name: 'vi', role: 'viewer' }, note: null });
    renderWithClient(<CaptureSnapshot targets={['db1']} />);
    expect(screen.queryByTestId('capture-snapshot')).toBeNull();
  });
});
