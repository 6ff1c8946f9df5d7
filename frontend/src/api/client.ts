// Typed fetch wrappers for the Poolscope HTTP API; every failure becomes an ApiError carrying the backend's `detail`.
// Every request goes through apiFetch, which sends the session token (session.ts) as `Authorization: Bearer`.
import { sessionReady, sessionToken } from './session';
import type { MetricsResponse, Overview, Target, TargetState } from './types';

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

type UnauthorizedHandler = (detail: string | null) => void;
let onUnauthorized: UnauthorizedHandler = () => undefined;

/** Called with the backend's detail when a read answers 401 (api/auth.ts then shows the login page). */
export function setUnauthorizedHandler(handler: UnauthorizedHandler): void {
  onUnauthorized = handler;
}

/**
 * fetch() for the Poolscope API: the session token (if any) as `Authorization: Bearer`, never a
 * cookie (`credentials: 'omit'`). A network failure becomes an ApiError of kind 'unreachable'.
 */
export async function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  await sessionReady();
  const headers = new Headers(init.headers);
  const token = sessionToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  try {
    return await fetch(path, { ...init, headers: Object.fromEntries(headers), credentials: 'omit', cache: 'no-store' });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(
      `No answer from the Poolscope API (${err instanceof Error ? err.message : String(err)})`,
      0,
      'unreachable',
    );
  }
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

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const res = await apiFetch(path, { signal, headers: { Accept: 'application/json' } });
  const body = await jsonBody(res);
  if (!res.ok) {
    const detail = detailFromBody(body);
    if (res.status === 401) onUnauthorized(detail);
    let kind = kindFor(res.status);
    // A 502 carrying a FastAPI detail came from the backend itself, not from a dead proxy target.
    if (kind === 'unreachable' && detail) kind = 'http';
    const fallback =
      kind === 'unreachable'
        ? `No answer from the Poolscope API (HTTP ${res.status} from the proxy in front of it)`
        : `HTTP ${res.status} ${res.statusText}`.trim();
    throw new ApiError(detail ?? fallback, res.status, kind);
  }
  if (body === null) throw new ApiError(`Invalid JSON from ${path}`, res.status, 'http');
  return body as T;
}

const enc = encodeURIComponent;

export function fetchTargets(signal?: AbortSignal): Promise<Target[]> {
  return getJson<Target[]>('/api/targets', signal);
}

export function fetchOverview(signal?: AbortSignal): Promise<Overview> {
  return getJson<Overview>('/api/overview', signal);
}

export function fetchTarget(name: string, signal?: AbortSignal): Promise<Target> {
  return getJson<Target>(`/api/targets/${enc(name)}`, signal);
}

export function fetchTargetState(name: string, signal?: AbortSignal): Promise<TargetState> {
  return getJson<TargetState>(`/api/targets/${enc(name)}/state`, signal);
}

export type MetricsAgg = 'avg' | 'max' | 'min';

export interface MetricsQuery {
  metrics: readonly string[];
  /** How samples inside one bucket combine; the backend default is avg. */
  agg?: MetricsAgg;
  from?: number;
  to?: number;
  points?: number;
}

export function metricsUrl(name: string, q: MetricsQuery): string {
  const params = new URLSearchParams();
  for (const m of q.metrics) params.append('metric', m);
  if (q.from !== undefined) params.set('from', String(Math.floor(q.from)));
  if (q.to !== undefined) params.set('to', String(Math.ceil(q.to)));
  if (q.points !== undefined) params.set('points', String(Math.max(10, Math.min(5000, Math.round(q.points)))));
  if (q.agg) params.set('agg', q.agg);
  return `/api/targets/${enc(name)}/metrics?${params.toString()}`;
}

export function fetchMetrics(name: string, q: MetricsQuery, signal?: AbortSignal): Promise<MetricsResponse> {
  return getJson<MetricsResponse>(metricsUrl(name, q), signal);
}

/**
 * Save what `path` answers as a file (a link cannot carry the session header). The name comes from
 * the answer's Content-Disposition, else `fallback`.
 */
export async function download(path: string, fallback: string): Promise<void> {
  const res = await apiFetch(path);
  if (!res.ok) {
    const detail = detailFromBody(await jsonBody(res));
    if (res.status === 401) onUnauthorized(detail);
    throw new ApiError(detail ?? `HTTP ${res.status} ${res.statusText}`.trim(), res.status, kindFor(res.status));
  }
  const named = /filename="?([^";]+)"?/.exec(res.headers.get('Content-Disposition') ?? '');
  const url = URL.createObjectURL(await res.blob());
  try {
    const a = document.createElement('a');
    a.href = url;
    a.download = named?.[1] ?? fallback;
    document.body.append(a);
    a.click();
    a.remove();
  } finally {
    // The click has handed the blob to the download; a later revoke would only keep memory.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
}

export function liveUrl(target?: string): string {
  return target ? `/api/live?target=${enc(target)}` : '/api/live';
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
