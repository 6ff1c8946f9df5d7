// How the UI talks to the Poolscope API: every request carries the session token (session.ts) as
// `Authorization: Bearer` (authorize), every failure becomes an ApiError with the backend's `detail`.
// JSON reads and writes go through the typed client (http.ts); streams and downloads through apiFetch.
import { sessionReady, sessionToken } from './session';

export type ApiErrorKind = 'unreachable' | 'not_found' | 'not_ready' | 'http';

export class ApiError extends Error {
  readonly status: number;
  readonly kind: ApiErrorKind;

  constructor(message: string, status: number, kind: ApiErrorKind) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.kind = kind;
  }
}

/** Extract a human message from a FastAPI error body (`{"detail": "..."}` or a 422 list). */
export function detailFromBody(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const detail = (body as { detail?: unknown }).detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    const parts = detail
      .map((d) => {
        if (d && typeof d === 'object' && 'msg' in d) {
          const loc = Array.isArray((d as { loc?: unknown }).loc) ? (d as { loc: unknown[] }).loc.join('.') : '';
          return loc ? `${loc}: ${String((d as { msg: unknown }).msg)}` : String((d as { msg: unknown }).msg);
        }
        return null;
      })
      .filter((x): x is string => x !== null);
    return parts.length ? parts.join('; ') : null;
  }
  return null;
}

function kindFor(status: number): ApiErrorKind {
  if (status === 404) return 'not_found';
  if (status === 503) return 'not_ready';
  // The Vite dev proxy answers 502/504 (and sometimes 500 with no JSON) when the backend is down.
  if (status === 502 || status === 504) return 'unreachable';
  return 'http';
}

type UnauthorizedHandler = (detail: string | null, read: boolean) => void;
let onUnauthorized: UnauthorizedHandler = () => undefined;

/** Called with the backend's detail when a request answers 401 (api/auth.ts then shows the login page). */
export function setUnauthorizedHandler(handler: UnauthorizedHandler): void {
  onUnauthorized = handler;
}

// The session header each answer's request carried: a 401 to a request sent before a login, or
// with a session since replaced, says nothing about the session this tab holds now.
const sentWith = new WeakMap<Response, string | null>();

/** Whether `response` answers a request sent with this tab's current session (or with none, as now). */
export function answersCurrentSession(response: Response): boolean {
  const sent = sentWith.get(response);
  if (sent === undefined) return true; // not sent by send(): nothing to compare
  const token = sessionToken();
  return sent === (token ? `Bearer ${token}` : null);
}

/** Puts the session token (if any) on a request's headers: every call to the API goes through here. */
export async function authorize(headers: Headers): Promise<void> {
  await sessionReady();
  const token = sessionToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
}

/**
 * fetch() for the Poolscope API: never a cookie (`credentials: 'omit'`), nothing cached. A network
 * failure becomes an ApiError of kind 'unreachable'; an abort stays an AbortError.
 */
export async function send(request: Request): Promise<Response> {
  try {
    const response = await fetch(request);
    sentWith.set(response, request.headers.get('Authorization'));
    return response;
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    if (request.signal?.aborted) throw new DOMException('aborted', 'AbortError');
    throw new ApiError(
      `No answer from the Poolscope API (${err instanceof Error ? err.message : String(err)})`,
      0,
      'unreachable',
    );
  }
}

/** A request to the API with the session header (for streams, downloads and raw uploads; JSON goes through http.ts). */
export async function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  await authorize(headers);
  return send(new Request(new URL(path, window.location.origin), { ...init, headers, credentials: 'omit', cache: 'no-store' }));
}

/** The body as JSON, or null when it is empty or not JSON. */
export async function jsonBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/**
 * The ApiError for an answer that is not ok, from its parsed body; a 401 tells the auth state
 * (`read`: a GET was refused, so this backend needs a login to read).
 */
export function failure(res: Response, body: unknown, read: boolean): ApiError {
  const detail = detailFromBody(body);
  if (res.status === 401 && answersCurrentSession(res)) onUnauthorized(detail, read);
  let kind = kindFor(res.status);
  // A 502 carrying a FastAPI detail came from the backend itself, not from a dead proxy target.
  if (kind === 'unreachable' && detail) kind = 'http';
  const fallback =
    kind === 'unreachable'
      ? `No answer from the Poolscope API (HTTP ${res.status} from the proxy in front of it)`
      : `HTTP ${res.status} ${res.statusText}`.trim();
  return new ApiError(detail ?? fallback, res.status, kind);
}

/**
 * Save what `path` answers as a file (a link cannot carry the session header). The name comes from
 * the answer's Content-Disposition, else `fallback`.
 */
export async function download(path: string, fallback: string): Promise<void> {
  const res = await apiFetch(path);
  if (!res.ok) throw failure(res, await jsonBody(res), true);
  const named = /filename="?([^";]+)"?/.exec(res.headers.get('Content-Disposition') ?? '');
  saveBlob(await res.blob(), named?.[1] ?? fallback);
}

/** Hand a blob to the browser as a download named `name`. */
export function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  try {
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
  } finally {
    // The click has handed the blob to the download; a later revoke would only keep memory.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}

/** The live channel's polls: of one target, or of all of them. */
export function liveUrl(target?: string): string {
  return target ? `/api/live?target=${encodeURIComponent(target)}&events=poll` : '/api/live?events=poll';
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
