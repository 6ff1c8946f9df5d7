import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetAuthForTests } from '../../api/auth';
import type { Alert, Silence } from '../../api/types';
import { makeAlert } from '../../test/fixtures';
import { asRequest, installEventSource, stubFetch } from '../../test/fakes';
import { renderWithClient } from '../../test/render';
import { AlertsPage } from './AlertsPage';

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

describe('AlertsPage actions', () => {
  let active: Alert[];
  let silences: Silence[];
  // Lets the alert list's held-back reads answer.
  let release: () => void;

  beforeEach(() => {
    installEventSource();
    resetAuthForTests({ status: 'user', user: { name: 'op', role: 'operator' }, note: null });
    active = [makeAlert()];
    silences = [];
    const gate = new Promise<void>((resolve) => (release = resolve));
    let listReads = 0;
    // Ack and silence answer like the API; the list's reads after the first are held back (a
    // slow refetch) until the test releases them.
    stubFetch({}).mockImplementation(async (...args) => {
      const request = asRequest(args);
      const path = new URL(request.url).pathname;
      if (request.method === 'POST' && path === '/api/alerts/1/ack') {
        active = [makeAlert({ acked_by: 'op', acked_at: 200 })];
        return json(active[0]);
      }
      if (request.method === 'POST' && path === '/api/alerts/silences') {
        const made = {
          id: 5,
          target: 'db1',
          rule: 'group_stalled',
          group: '0',
          starts_at: 300,
          ends_at: 3900,
          created_by: 'op',
          comment: '',
        };
        silences = [made];
        active = active.map((a) => ({ ...a, silenced_by: 5 }));
        return json(made, 201);
      }
      if (path === '/api/alerts') {
        const body = { active, silences };
        listReads += 1;
        if (listReads > 1) await gate;
        return json(body);
      }
      return json([]);
    });
  });
  afterEach(() => {
    release();
    resetAuthForTests();
    vi.unstubAllGlobals();
  });

  it('an acknowledgement shows at once, before the list is fetched again', async () => {
    renderWithClient(<AlertsPage />);
    const row = await screen.findByTestId('alert-row');
    expect(row.dataset.handled).toBe('false');
    fireEvent.click(within(row).getByTestId('alert-ack'));
    // The list's refetch is still held back: what shows is the ack's own answer.
    await waitFor(() =>
      expect(within(screen.getByTestId('alert-row')).getByTestId('alert-acked').textContent).toContain('acknowledged by op'),
    );
    const acked = screen.getByTestId('alert-row');
    expect(acked.dataset.handled).toBe('true');
    expect(acked.className).toContain('alert-row-handled');
    expect(within(acked).queryByTestId('alert-ack')).toBeNull();
    act(() => release());
  });

  it('a silence shows greyed with who and until when', async () => {
    release();
    renderWithClient(<AlertsPage />);
    const row = await screen.findByTestId('alert-row');
    fireEvent.click(within(row).getAllByTestId('alert-silence')[0]);
    await waitFor(() =>
      expect(within(screen.getByTestId('alert-row')).getByTestId('alert-silenced').textContent).toMatch(/silenced by op until /),
    );
    expect(screen.getByTestId('alert-row').dataset.handled).toBe('true');
    expect(within(screen.getByTestId('alert-row')).queryByTestId('alert-silence')).toBeNull();
    expect(screen.getAllByTestId('silence-row')).toHaveLength(1);
  });
});
