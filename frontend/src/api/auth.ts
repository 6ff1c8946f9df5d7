// Login state and mutating requests: `mutate()` sends the session token, `useAuth()` shares who is logged in.
import { useSyncExternalStore } from 'react';
import { ApiError, apiFetch, detailFromBody, jsonBody, setUnauthorizedHandler } from './client';
import type { components } from './schema.gen';
import { endSession, onSessionChange, sessionToken, startSession } from './session';

export type AuthUser = components['schemas']['UserOut'];
export type Role = AuthUser['role'];
type NewSession = components['schemas']['SessionOut'];

/**
 * POST/PUT/PATCH/DELETE with the session token (apiFetch); a raw Blob body is sent as it is.
 * Errors become ApiError with the backend's `detail`; a 401 also forgets the logged-in user.
 */
export async function mutate<T = unknown>(
  url: string,
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' = 'POST',
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const raw = body instanceof Blob;
  if (body !== undefined) headers['Content-Type'] = raw ? 'application/octet-stream' : 'application/json';
  const res = await apiFetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
  });
  const parsed = await jsonBody(res);
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

// Another tab ended the session this tab shared (logged out there): nobody is logged in here either.
onSessionChange(() => {
  if (!sessionToken() && state.user) setAuth({ status: 'anonymous', user: null, note: null });
});

let inflight: Promise<void> | null = null;

/** Ask the backend who is logged in (once; later calls share the answer unless `force`). */
export function refreshAuth(force = false): Promise<void> {
  if (inflight && !force) return inflight;
  inflight = (async () => {
    try {
      const res = await apiFetch('/api/auth/me', { headers: { Accept: 'application/json' } });
      const body = await jsonBody(res);
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
  const session = await mutate<NewSession>('/api/auth/login', 'POST', { username, password });
  startSession(session.token);
  const user: AuthUser = { name: session.name, role: session.role };
  setAuth({ status: 'user', user, note: null });
  return user;
}

export async function logout(): Promise<void> {
  try {
    await mutate('/api/auth/logout', 'POST');
  } finally {
    endSession();
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
