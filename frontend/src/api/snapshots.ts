// Incident snapshots: list, read, capture on demand, import a file (operator actions send the CSRF header).
import { CSRF_COOKIE, CSRF_HEADER, mutate, readCookie } from './auth';
import { ApiError, detailFromBody, getJson } from './client';
import type { components } from './schema.gen';
import type { SnapshotDocument, SnapshotSummary } from './types';

type Created = components['schemas']['Created'];

export function fetchSnapshots(signal?: AbortSignal): Promise<SnapshotSummary[]> {
  return getJson<SnapshotSummary[]>('/api/snapshots', signal);
}

export function fetchSnapshot(id: number, signal?: AbortSignal): Promise<SnapshotDocument> {
  return getJson<SnapshotDocument>(`/api/snapshots/${id}`, signal);
}

export function captureSnapshot(target: string, title?: string): Promise<Created> {
  return mutate<Created>(`/api/targets/${encodeURIComponent(target)}/snapshots`, 'POST', title ? { title } : {});
}

export function deleteSnapshot(id: number): Promise<unknown> {
  return mutate(`/api/snapshots/${id}`, 'DELETE');
}

export const snapshotLinks = (id: number) => ({
  json: `/api/snapshots/${id}/export.json`,
  archive: `/api/snapshots/${id}/archive`,
  report: `/api/snapshots/${id}/report.html`,
});

/** Upload an exported snapshot (JSON or zip) as the raw body; the backend validates it. */
export async function importSnapshot(file: Blob): Promise<Created> {
  const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/octet-stream' };
  const csrf = readCookie(CSRF_COOKIE);
  if (csrf) headers[CSRF_HEADER] = csrf;
  const res = await fetch('/api/snapshots/import', { method: 'POST', headers, body: file, credentials: 'same-origin' });
  const body: unknown = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(detailFromBody(body) ?? `HTTP ${res.status}`, res.status, 'http');
  return body as Created;
}
