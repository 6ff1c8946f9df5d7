// Login state and mutating requests: `mutate()` sends the CSRF header, `useAuth()` shares who is logged in.
import { useSyncExternalStore } from 'react';
import { ApiError, detailFromBody, setUnauthorizedHandler } from './client';
import type { components } from './schema.gen';

export type AuthUser = components['schemas']['UserOut'];
export type Role = AuthUser['role'];

export const CSRF_COOKIE = 'poolscope_csrf';
export const CSRF_HEADER = 'X-CSRF-Token';

export function readCookie(name: string, cookies: string = document.cookie): string | null {
  for (const part of cookies.split(';')) {
    const [k, ...rest] = part.trim().split('=');
    if (k === name) return decodeURIComponent(rest.join('='));
  }
  return null;
}

/**
 * POST/PUT/PATCH/DELETE with the CSRF header (double submit of the `poolscope_csrf` cookie).
 * Errors become ApiError with the backend's `detail`; a 401 also forgets the logged-in user.
 */
export async function mutate<T = unknown>(
  url: string,
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' = 'POST',
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const csrf = readCookie(CSRF_COOKIE);
  if (csrf) headers[CSRF_HEADER] = csrf;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(
      `No answer from the Poolscope API (${err instanceof Error ? err.message : String(err)})`,
      0,
      'unreachable',
    );
  }
  const text = await res.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  if (!res.ok) {
    if (res.status === 401) setAuth({ status: 'anonymous', user: null, note: detailFromBody(parsed) });
    throw new ApiError(detailFromBody(parsed) ?? `HTTP ${res.status} ${res.statusText}`.trim(), res.status, 'http');
  }
  return parsed as T;
}

export interface AuthState {
  status: 'unknown' | 'anonymous' | 'user';
  user: AuthUser | null;
  /** Why nobody is logged in, when the backend said (e.g. "no users configured: ..."). */
  note: string | null;
  /** A read answered 401: this backend shows nothing without a login (users, no anonymous_read); kept until reload. */
  loginRequired?: boolean;
}

let state: AuthState = { status: 'unknown', user: null, note: null };
const listeners = new Set<() => void>();

function setAuth(next: AuthState): void {
  // Once a read was refused, this backend needs a login to read: logging in or out keeps that.
  state = { ...next, loginRequired: next.loginRequired ?? state.loginRequired };
  for (const l of listeners) l();
}

function subscribe(cb: () => void): () => void {
  listeners.add(cb);
  return () => listeners.delete(cb);
}

// A read refused with 401 (never logged in, session expired or revoked): the app shows the login page.
setUnauthorizedHandler((detail) => {
  if (!state.loginRequired || state.user) setAuth({ status: 'anonymous', user: null, note: detail, loginRequired: true });
});

let inflight: Promise<void> | null = null;

/** Ask the backend who is logged in (once; later calls share the answer unless `force`). */
export function refreshAuth(force = false): Promise<void> {
  if (inflight && !force) return inflight;
  inflight = (async () => {
    try {
      const res = await fetch('/api/auth/me', { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
      const body: unknown = await res.json().catch(() => null);
      // The backend says whether reads need a login here, so the login page can come first.
      const reads = res.headers.get('X-Poolscope-Reads');
      const loginRequired = reads === 'login' ? true : reads === 'open' ? false : undefined;
      if (res.ok) setAuth({ status: 'user', user: body as AuthUser, note: null, loginRequired });
      else setAuth({ status: 'anonymous', user: null, note: detailFromBody(body), loginRequired });
    } catch {
      setAuth({ status: 'anonymous', user: null, note: 'the Poolscope API did not answer' });
    }
  })();
  return inflight;
}

export async function login(username: string, password: string): Promise<AuthUser> {
  const user = await mutate<AuthUser>('/api/auth/login', 'POST', { username, password });
  setAuth({ status: 'user', user, note: null });
  return user;
}

export async function logout(): Promise<void> {
  try {
    await mutate('/api/auth/logout', 'POST');
  } finally {
    setAuth({ status: 'anonymous', user: null, note: null });
  }
}

export function hasRole(user: AuthUser | null, role: Role): boolean {
  if (!user) return false;
  return role === 'viewer' || user.role === 'operator';
}

/** Who is logged in, shared by every component; the first call asks the backend. */
export function useAuth(): AuthState & {
  login: typeof login;
  logout: typeof logout;
  can: (role: Role) => boolean;
} {
  const current = useSyncExternalStore(
    subscribe,
    () => state,
    () => state,
  );
  if (current.status === 'unknown') void refreshAuth();
  return { ...current, login, logout, can: (role: Role) => hasRole(current.user, role) };
}

/** Tests only: forget the shared state. */
export function resetAuthForTests(next: AuthState = { status: 'unknown', user: null, note: null }): void {
  inflight = null;
  state = next;
}
