import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { login, logout, resetAuthForTests, SESSION_ENDED } from '../../api/auth';
import { get } from '../../api/http';
import { acknowledge } from '../../api/alerts';
import { resetSessionForTests, sessionToken } from '../../api/session';
import { loginNext } from '../../app/router';
import { LoginForm, UserMenu } from './LoginForm';
import { asRequest, stubFetch } from '../../test/fakes';
import { renderWithClient } from '../../test/render';

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** /api/auth/me where reads are open, to a visitor without a valid session. */
const me = () => ({
  status: 401,
  body: { detail: 'not logged in (or the session expired)' },
  headers: { 'X-Poolscope-Reads': 'open' },
});

describe('auth', () => {
  beforeEach(() => resetAuthForTests());
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    sessionStorage.clear();
  });

  it('a change sends the session token as a bearer header, no cookie, and surfaces the detail of an error', async () => {
    resetSessionForTests('v3.tok.sig');
    const fetchMock = stubFetch({
      '/api/alerts/7/ack': () => ({ status: 403, body: { detail: 'bob is a viewer; this needs the operator role' } }),
    });
    await expect(acknowledge(7)).rejects.toThrow('bob is a viewer; this needs the operator role');
    const sent = asRequest(fetchMock.mock.calls[0]);
    expect(sent.method).toBe('POST');
    expect(sent.headers.get('authorization')).toBe('Bearer v3.tok.sig');
    expect(sent.credentials).toBe('omit');
  });

  it('keeps the token in sessionStorage after login and forgets it on logout', async () => {
    const fetchMock = vi.fn<(input: RequestInfo | URL, init?: RequestInit) => Promise<Response>>(async (input) =>
      new URL(asRequest([input]).url).pathname === '/api/auth/login'
        ? jsonResponse(200, { name: 'op', role: 'operator', token: 'v3.new.sig', expires_at: 1 })
        : new Response(null, { status: 204 }),
    );
    vi.stubGlobal('fetch', fetchMock);
    renderWithClient(<LoginForm />);
    fireEvent.change(screen.getByTestId('login-username'), { target: { value: 'op' } });
    fireEvent.change(screen.getByTestId('login-password'), { target: { value: 'pw' } });
    fireEvent.click(screen.getByTestId('login-submit'));
    await waitFor(() => expect(sessionToken()).toBe('v3.new.sig'));
    expect(sessionStorage.getItem('poolscope.session')).toBe('v3.new.sig');
    expect(document.cookie).toBe('');
    await logout();
    const sent = fetchMock.mock.calls.map(asRequest).find((r) => new URL(r.url).pathname === '/api/auth/logout');
    expect(sent?.headers.get('authorization')).toBe('Bearer v3.new.sig');
    expect(sessionToken()).toBeNull();
    expect(sessionStorage.getItem('poolscope.session')).toBeNull();
  });

  it('logs in and shows the user with the role', async () => {
    stubFetch({
      '/api/auth/me': () => ({ status: 401, body: { detail: 'not logged in' } }),
      '/api/auth/login': () => ({ body: { name: 'op', role: 'operator', token: 'v3.t.s', expires_at: 1 } }),
    });
    renderWithClient(
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

  it('shows why a login failed, once', async () => {
    stubFetch({
      '/api/auth/me': () => ({ status: 401, body: { detail: 'not logged in' } }),
      '/api/auth/login': () => ({ status: 401, body: { detail: 'wrong user name or password' } }),
    });
    renderWithClient(<LoginForm />);
    fireEvent.change(screen.getByTestId('login-username'), { target: { value: 'op' } });
    fireEvent.change(screen.getByTestId('login-password'), { target: { value: 'bad' } });
    fireEvent.click(screen.getByTestId('login-submit'));
    expect((await screen.findByTestId('login-error')).textContent).toContain('wrong user name or password');
    const page = screen.getByTestId('login-page').textContent ?? '';
    expect(page.split('wrong user name or password')).toHaveLength(2);
  });

  it('says nothing on a first visit, and that the session ended when a stored one is refused', async () => {
    resetSessionForTests(null);
    stubFetch({ '/api/auth/me': me });
    renderWithClient(
      <>
        <UserMenu />
        <LoginForm />
      </>,
    );
    // The menu shows "Log in" once the backend has answered.
    expect(await screen.findByTestId('login-link')).toBeTruthy();
    expect(screen.queryByTestId('login-note')).toBeNull();
    cleanup();

    resetAuthForTests();
    resetSessionForTests('v3.old.sig');
    const fetchMock = stubFetch({ '/api/auth/me': me });
    renderWithClient(<LoginForm />);
    expect((await screen.findByTestId('login-note')).textContent).toBe(SESSION_ENDED);
    expect(asRequest(fetchMock.mock.calls[0]).headers.get('authorization')).toBe('Bearer v3.old.sig');
    // The refused session is forgotten: no later request sends it again.
    expect(sessionToken()).toBeNull();
    expect(sessionStorage.getItem('poolscope.session')).toBeNull();
  });

  it('a 401 to a request sent before the login does not end the session the login started', async () => {
    let answerMe: (() => void) | null = null;
    const meBeforeLogin = new Promise<void>((resolve) => (answerMe = resolve));
    const fetchMock = vi.fn<(input: RequestInfo | URL, init?: RequestInit) => Promise<Response>>(async (input) => {
      const request = asRequest([input]);
      const path = new URL(request.url).pathname;
      if (path === '/api/auth/login')
        return jsonResponse(200, { name: 'op', role: 'operator', token: 'v3.new.sig', expires_at: 1 });
      if (path === '/api/auth/me' && !request.headers.get('authorization')) {
        await meBeforeLogin; // slow: answered only after the login
        return jsonResponse(401, { detail: 'not logged in (or the session expired)' });
      }
      if (path === '/api/auth/me') return jsonResponse(200, { name: 'op', role: 'operator' });
      if (path === '/api/alerts') return jsonResponse(401, { detail: 'not logged in' });
      return new Response(null, { status: 204 });
    });
    vi.stubGlobal('fetch', fetchMock);
    renderWithClient(<UserMenu />); // asks who is logged in, with no session yet
    await waitFor(() => expect(fetchMock).toHaveBeenCalled());
    await get('/api/alerts').catch(() => null); // a read refused before the login
    await login('op', 'pw');
    answerMe!();
    expect((await screen.findByTestId('user-name')).textContent).toBe('op');
    await waitFor(() => expect(fetchMock.mock.calls.length).toBeGreaterThanOrEqual(4));
    expect(sessionToken()).toBe('v3.new.sig');
    expect(screen.getByTestId('user-name').textContent).toBe('op');
    // Asked again with the session held now.
    const mes = fetchMock.mock.calls.map(asRequest).filter((r) => new URL(r.url).pathname === '/api/auth/me');
    expect(mes.at(-1)?.headers.get('authorization')).toBe('Bearer v3.new.sig');
  });

  it('only follows same-site paths after login', () => {
    expect(loginNext('?next=%2Ftargets%2Fdb1')).toBe('/targets/db1');
    expect(loginNext('?next=%2F%2Fevil.example')).toBe('/');
    expect(loginNext('?next=https%3A%2F%2Fevil.example')).toBe('/');
    expect(loginNext('')).toBe('/');
  });
});
