// Login state: `useAuth()` shares who is logged in; login and logout go through the typed client.
import { useSyncExternalStore } from 'react';
import { answersCurrentSession, ApiError, detailFromBody, setUnauthorizedHandler } from './client';
import { getRaw, post, postRaw } from './http';
import type { components } from './schema.gen';
import { endSession, onSessionChange, sessionToken, startSession } from './session';

export type AuthUser = components['schemas']['UserOut'];
export type Role = AuthUser['role'];

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

/** The note when this tab's stored session was refused (expired, revoked, or its password changed). */
export const SESSION_ENDED = 'Your session has ended (it expired or was revoked): log in again.';

/**
 * Why nobody is logged in, after a 401 whose detail is `detail`. The tab knows whether it sent a
 * session (api/session.ts): if it did, the session ended; if not (a first visit), there is nothing
 * to say unless `explain`, the backend's reason a login is needed at all.
 */
function refusedNote(detail: string | null, explain: boolean): string | null {
  if (!sessionToken()) return explain ? detail : null;
  // The backend refused the stored session: forget it here and in the tabs that share it, so no
  // later request sends it again (and open reads work anonymously again).
  endSession();
  return SESSION_ENDED;
}

// A read refused with 401 (never logged in, session expired or revoked): the app shows the login page.
// A change refused with 401: the session is gone, nobody is logged in here any more.
setUnauthorizedHandler((detail, read) => {
  const hadUser = state.user; // read first: forgetting a refused session logs this tab out
  const note = refusedNote(detail, true);
  if (!read) setAuth({ status: 'anonymous', user: null, note });
  else if (!state.loginRequired || hadUser) setAuth({ status: 'anonymous', user: null, note, loginRequired: true });
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
      const { data, error, response } = await getRaw('/api/auth/me');
      // A login (or a session handed over by another tab) came while this was on its way: its
      // answer is about the session before, so ask again with the one held now.
      if (!answersCurrentSession(response)) return refreshAuth(true);
      // The backend says whether reads need a login here, so the login page can come first.
      const reads = response.headers.get('X-Poolscope-Reads');
      const loginRequired = reads === 'login' ? true : reads === 'open' ? false : undefined;
      if (response.ok && data) setAuth({ status: 'user', user: data as AuthUser, note: null, loginRequired });
      else if (response.status === 401) {
        // Where reads are open, "not logged in" is no news to someone who never logged in.
        setAuth({ status: 'anonymous', user: null, note: refusedNote(detailFromBody(error), reads !== 'open'), loginRequired });
      } else setAuth({ status: 'anonymous', user: null, note: detailFromBody(error), loginRequired });
    } catch {
      setAuth({ status: 'anonymous', user: null, note: 'the Poolscope API did not answer' });
    }
  })();
  return inflight;
}

export async function login(username: string, password: string): Promise<AuthUser> {
  const { data, error, response } = await postRaw('/api/auth/login', { body: { username, password } });
  // A refused login is the form's own error, shown once there: not a note about the session.
  if (!response.ok || !data) throw new ApiError(detailFromBody(error) ?? `HTTP ${response.status}`, response.status, 'http');
  const session = data as components['schemas']['SessionOut'];
  startSession(session.token);
  const user: AuthUser = { name: session.name, role: session.role };
  setAuth({ status: 'user', user, note: null });
  return user;
}

export async function logout(): Promise<void> {
  try {
    await post('/api/auth/logout');
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
