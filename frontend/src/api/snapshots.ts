// Incident snapshots: list, read, capture on demand, import a file, download its exports.
import { apiFetch, download, failure, jsonBody } from './client';
import { tzName } from '../lib/format';
import { getPrefs } from '../lib/prefs';
import { del, post } from './http';
import type { components } from './schema.gen';

type Created = components['schemas']['Created'];

export function captureSnapshot(target: string, title?: string): Promise<Created> {
  return post('/api/targets/{name}/snapshots', { params: { path: { name: target } }, body: title ? { title } : {} });
}

export function deleteSnapshot(id: number): Promise<unknown> {
  return del('/api/snapshots/{snapshot_id}', { params: { path: { snapshot_id: id } } });
}

export type SnapshotExport = 'json' | 'archive' | 'report';

const EXPORTS: Record<SnapshotExport, (id: number) => [path: string, fallbackName: string]> = {
  json: (id) => [`/api/snapshots/${id}/export.json`, `poolscope-snapshot-${id}.json`],
  archive: (id) => [`/api/snapshots/${id}/archive`, `poolscope-snapshot-${id}.zip`],
  report: (id) => [`/api/snapshots/${id}/report.html`, `poolscope-snapshot-${id}-report.html`],
};

/**
 * How a report shows times and colours: in the zone and theme the viewer chose here (the zone's
 * offset and name at the snapshot's moment, as the charts name it).
 */
export function reportView(moment: number): string {
  const { tz, theme } = getPrefs();
  const q = new URLSearchParams({
    tz_offset_min: String(tz === 'utc' ? 0 : -new Date(moment * 1000).getTimezoneOffset()),
    tz_name: tzName(moment),
    theme,
  });
  return q.toString();
}

/** Save one of a snapshot's exports as a file (through the API client, with the session). */
export function downloadSnapshot(id: number, kind: SnapshotExport, moment: number): Promise<void> {
  const [path, name] = EXPORTS[kind](id);
  return download(kind === 'json' ? path : `${path}?${reportView(moment)}`, name);
}

/** Upload an exported snapshot (JSON or zip) as the raw body; the backend validates it. */
export async function importSnapshot(file: Blob): Promise<Created> {
  // The document declares no body for it (the backend reads the raw bytes): not the typed client.
  const res = await apiFetch('/api/snapshots/import', {
    method: 'POST',
    headers: { 'Content-Type': 'application/octet-stream', Accept: 'application/json' },
    body: file,
  });
  const body = await jsonBody(res);
  if (!res.ok) throw failure(res, body, false);
  return body as Created;
}
