// Incident snapshots: list, read, capture on demand, import a file, download its exports.
import { mutate } from './auth';
import { download, getJson } from './client';
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

export type SnapshotExport = 'json' | 'archive' | 'report';

const EXPORTS: Record<SnapshotExport, (id: number) => [path: string, fallbackName: string]> = {
  json: (id) => [`/api/snapshots/${id}/export.json`, `poolscope-snapshot-${id}.json`],
  archive: (id) => [`/api/snapshots/${id}/archive`, `poolscope-snapshot-${id}.zip`],
  report: (id) => [`/api/snapshots/${id}/report.html`, `poolscope-snapshot-${id}-report.html`],
};

/** Save one of a snapshot's exports as a file (through the API client, with the session). */
export function downloadSnapshot(id: number, kind: SnapshotExport): Promise<void> {
  return download(...EXPORTS[kind](id));
}

/** Upload an exported snapshot (JSON or zip) as the raw body; the backend validates it. */
export function importSnapshot(file: Blob): Promise<Created> {
  return mutate<Created>('/api/snapshots/import', 'POST', file);
}
