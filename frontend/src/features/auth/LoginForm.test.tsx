import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { logout, mutate, resetAuthForTests } from '../../api/auth';
import { resetSessionForTests, sessionToken } from '../../api/session';
import { loginNext } from '../../app/router';
import { LoginForm, UserMenu } from './LoginForm';

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

describe('auth', () => {
  beforeEach(() => resetAuthForTests());
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    sessionStorage.clear();
  });

  it('mutate sends the session token as a bearer header, no cookie, and surfaces the detail of an error', async () => {
    resetSessionForTests('v3.tok.sig');
    const fetchMock = vi
      .fn<(url: string, init?: RequestInit) => Promise<Response>>()
      .mockResolvedValue(jsonResponse(403, { detail: 'bob is a viewer; this needs the operator role' }));
    vi.stubGlobal('fetch', fetchMock);
    await expect(mutate('/api/x', 'POST', { a: 1 })).rejects.toThrow('bob is a viewer; this needs the operator role');
    const init = fetchMock.mock.calls[0][1] as RequestInit;
    expect((init.headers as Record<string, string>).authorization).toBe('Bearer v3.tok.sig');
    expect(init.credentials).toBe('omit');
    expect(init.body).toBe('{"a":1}');
  });

  it('keeps the token in sessionStorage after login and forgets it on logout', async () => {
    const fetchMock = vi.fn<(url: string, init?: RequestInit) => Promise<Response>>(async (url: string) =>
      url === '/api/auth/login'
        ? jsonResponse(200, { name: 'op', role: 'operator', token: 'v3.new.sig', expires_at: 1 })
        : new Response(null, { status: 204 }),
    );
    vi.stubGlobal('fetch', fetchMock);
    render(<LoginForm />);
    fireEvent.change(screen.getByTestId('login-username'), { target: { value: 'op' } });
    fireEvent.change(screen.getByTestId('login-password'), { target: { value: 'pw' } });
    fireEvent.click(screen.getByTestId('login-submit'));
    await waitFor(() => expect(sessionToken()).toBe('v3.new.sig'));
    expect(sessionStorage.getItem('poolscope.session')).toBe('v3.new.sig');
    expect(document.cookie).toBe('');
    await logout();
    const sent = fetchMock.mock.calls.find(([url]) => url === '/api/auth/logout')?.[1] as RequestInit;
    expect((sent.headers as Record<string, string>).authorization).toBe('Bearer v3.new.sig');
    expect(sessionToken()).toBeNull();
    expect(sessionStorage.getItem('poolscope.session')).toBeNull();
  });

  it('logs in and shows the user with the role', async () => {
    const fetchMock = vi.fn<(url: string) => Promise<Response>>(async (url: string) => {
      if (url === '/api/auth/me') return jsonResponse(401, { detail: 'not logged in' });
      return jsonResponse(200, { name: 'op', role: 'operator', token: 'v3.t.s', expires_at: 1 });
    });
    vi.stubGlobal('fetch', fetchMock);
    render(
      <>
        <UserMenu />
        <LoginForm />
      </>,
    );
    expect(await screen.findByTestId('login-link')).toBeTruthy();
    fireEvent.change(screen.getByTestId('login-username'), { target: { value: 'op' } });
    fireEvent.change(screen.getByTestId('login-password'), { target: { value: 'pw' } });
    fireEvent.click(screen.getByTestId('login-submit'));
    await waitFor(() => expect(screen.getByTestId('user-role').textContent).toBe('operator'));
    expect(screen.getByTestId('user-name').textContent).toBe('op');
  });

  it('shows why a login failed', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) =>
        url === '/api/auth/me'
          ? jsonResponse(401, { detail: 'not logged in' })
          : jsonResponse(401, { detail: 'wrong user name or password' }),
      ),
    );
    render(<LoginForm />);
    fireEvent.change(screen.getByTestId('login-username'), { target: { value: 'op' } });
    fireEvent.change(screen.getByTestId('login-password'), { target: { value: 'bad' } });
    fireEvent.click(screen.getByTestId('login-submit'));
    expect((await screen.findByTestId('login-error')).textContent).toContain('wrong user name or password');
  });

  it('only follows same-site paths after login', () => {
    expect(loginNext('?next=%2Ftargets%2Fdb1')).toBe('/targets/db1');
    expect(loginNext('?next=%2F%2Fevil.example')).toBe('/');
    expect(loginNext('?next=https%3A%2F%2Fevil.example')).toBe('/');
    expect(loginNext('')).toBe('/');
  });
});
