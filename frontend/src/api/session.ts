// The session token: kept in this tab's sessionStorage and sent as `Authorization: Bearer` (client.ts).
// Never a cookie: a browser sends cookies to every port of a host name, while Web Storage and
// BroadcastChannel are bound to Poolscope's origin, port included (docs/decisions/0200-origin-bound-sessions.md).
const STORAGE_KEY = 'poolscope.session';
const CHANNEL_NAME = 'poolscope-session';
/** How long a new tab waits for an open tab of this origin to hand it the session. */
export const HANDOFF_WAIT_MS = 300;

type Message = { type: 'ask' } | { type: 'token'; token: string } | { type: 'ended'; token: string };

let token: string | null = readStored();
let ready: Promise<void> | null = null;
let channel: BroadcastChannel | null = null;
const listeners = new Set<() => void>();

function readStored(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null; // storage disabled: the session lives as long as the page
  }
}

function store(next: string | null): void {
  token = next;
  try {
    if (next) sessionStorage.setItem(STORAGE_KEY, next);
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // storage disabled: memory only
  }
  for (const l of listeners) l();
}

function send(ch: BroadcastChannel | null, msg: Message): void {
  // A BroadcastChannel only reaches this origin: it takes no target origin (the rule is for window.postMessage).
  // oxlint-disable-next-line unicorn/require-post-message-target-origin
  ch?.postMessage(msg);
}

function openChannel(): BroadcastChannel | null {
  if (channel || typeof BroadcastChannel === 'undefined') return channel;
  channel = new BroadcastChannel(CHANNEL_NAME);
  channel.addEventListener('message', (ev: MessageEvent<Message>) => {
    const msg = ev.data;
    if (msg.type === 'ask' && token) send(channel, { type: 'token', token });
    else if (msg.type === 'token' && !token) store(msg.token);
    else if (msg.type === 'ended' && msg.token === token) store(null);
  });
  return channel;
}

/** The current token, or null when this tab has no session. */
export function sessionToken(): string | null {
  return token;
}

/** Resolves once this tab knows its session: its own, one an open tab handed over, or none. */
export function sessionReady(): Promise<void> {
  ready ??= token
    ? Promise.resolve(void openChannel())
    : new Promise<void>((resolve) => {
        const ch = openChannel();
        if (!ch) return resolve();
        const done = () => {
          window.clearTimeout(timer);
          listeners.delete(done);
          resolve();
        };
        const timer = window.setTimeout(done, HANDOFF_WAIT_MS);
        listeners.add(done);
        send(ch, { type: 'ask' });
      });
  return ready;
}

/** A new session (after login) for this tab; other tabs keep theirs. */
export function startSession(next: string): void {
  openChannel();
  store(next);
}

/** Forget the session here, and in every tab of this origin that shares it (it was revoked). */
export function endSession(): void {
  if (token) send(openChannel(), { type: 'ended', token });
  store(null);
}

/** Called whenever the token changes (another tab ended the shared session, or handed one over). */
export function onSessionChange(cb: () => void): () => void {
  listeners.add(cb);
  return () => listeners.delete(cb);
}

/** Tests only: this token (or none), known at once, with no tab to ask. */
export function resetSessionForTests(next: string | null = null): void {
  token = next;
  ready = Promise.resolve();
}
